package dashboard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"time"
)

// pageNames are the templates/NAME.html files that are pages; each is
// parsed with layout.html.
var pageNames = []string{"overview", "collection", "job", "confirm", "try", "login", "error", "backfill", "jobedit", "collectionedit", "search", "collectiondelete"}

// funcs are the functions templates call.
var funcs = template.FuncMap{"plural": plural}

// plural returns one or many, the word for n things: "job" for 1,
// "jobs" for 0 or 2. Pages write a count as {{.N}} {{plural .N "job" "jobs"}},
// and Go code as itoa(n)+" "+plural(n, ...).
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// parseTemplates parses every page with the layout. The templates are
// embedded, so a parse error is a bug: it panics.
func parseTemplates() map[string]*template.Template {
	out := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		out[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html"))
	}
	return out
}

// assetVersions holds a short hash of each static file, added to its URL
// so that browsers may keep it for a long time and still see a new
// version at once.
var assetVersions = func() map[string]string {
	out := map[string]string{}
	fs.WalkDir(staticFiles, "static", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(staticFiles, path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[path[len("static/"):]] = hex.EncodeToString(sum[:6])
		return nil
	})
	return out
}()

// asset returns the URL of a static file.
func (h *handler) asset(name string) string {
	return h.opts.Prefix + "/static/" + name + "?v=" + assetVersions[name]
}

// serveStatic serves the embedded files: for a long time when the URL
// names the current version, else for revalidation.
func (h *handler) serveStatic(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Path[len(h.opts.Prefix+"/static/"):]
	if v := r.URL.Query().Get("v"); v != "" && v == assetVersions[name] {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	h.static.ServeHTTP(w, r)
}

// notLive are the pages that the script does not refresh.
var notLive = map[string]bool{"login": true, "search": true, "jobedit": true, "collectionedit": true, "backfill": true}

// layout is what the layout template shows around a page.
type layout struct {
	Title     string
	Nav       string
	Home      string
	TryURL    string
	SearchURL string
	// NewJobURL and NewCollectionURL open the editors.
	NewJobURL, NewCollectionURL string
	LoginURL                    string
	LogoutURL                   string
	CSS, JS                     string
	// Icon is the URL of the page's icon, so that a browser does not ask
	// the server's /favicon.ico, which is not the dashboard's.
	Icon   string
	User   string
	AuthOn bool
	Token  string
	// CanChange says the viewer may change what it sees: the pages show
	// their buttons and forms that change something.
	CanChange bool
	Refresh   int // milliseconds; 0: no live refresh
	Flash     string
	Now       stamp
	Page      any
	// What the page shows, for the script's notice when it is gone:
	// "job", "collection" or empty.
	What string
}

// render writes the page name with data, within the layout.
func (h *handler) render(w http.ResponseWriter, r *http.Request, status int, name string, v *viewer, data any) {
	l := layout{
		Title: title(name, data), Nav: name, Home: h.url(nil), TryURL: h.url(nil, "try"),
		SearchURL: h.url(nil, "search"), NewJobURL: h.url(nil, "edit", "job"), NewCollectionURL: h.url(nil, "edit", "collection"),
		LoginURL: h.url(nil, "login"), LogoutURL: h.url(nil, "logout"),
		CSS: h.asset("dashboard.css"), JS: h.asset("dashboard.js"), Icon: h.asset("favicon.svg"),
		AuthOn: v.authOn, User: v.name(), Token: v.Token(), CanChange: !v.readOnly(),
		Flash: flashes[r.URL.Query().Get("flash")], Now: at(time.Now(), nil), Page: data,
	}
	if p, ok := data.(*jobPage); ok && p.Flash != "" {
		l.Flash = p.Flash
	}
	if name == "job" || name == "collection" {
		l.What = name
	}
	// The sign-in page has nothing live, and nowhere to go before it;
	// the editors, the search and a backfill's list have nothing live
	// either, and reloading them would redo their reads (a search of every
	// job) for nothing.
	if h.opts.Refresh > 0 && !notLive[name] {
		l.Refresh = int(h.opts.Refresh / time.Millisecond)
	}
	var b bytes.Buffer
	if err := h.pages[name].ExecuteTemplate(&b, "layout", l); err != nil {
		h.log.Error("dashboard: render", "page", name, "err", err)
		http.Error(w, "the page could not be built", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// title is the page's title.
func title(name string, data any) string {
	switch p := data.(type) {
	case *collectionPage:
		return p.Name
	case *jobPage:
		return p.Name + " · " + p.Collection
	case *confirmPage:
		return "Delete " + p.Name
	case *jobEditor:
		if p.New {
			return "New job"
		}
		return "Edit " + p.Name
	case *collectionEditor:
		if p.New {
			return "New collection"
		}
		return "Edit " + p.Name
	case *backfillPage:
		return "Backfill " + p.Name
	case errorPage:
		return p.Title
	}
	switch name {
	case "try":
		return "Try a definition"
	case "search":
		return "Search jobs"
	case "login":
		return "Sign in"
	}
	return "Overview"
}
