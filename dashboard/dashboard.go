package dashboard

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
)

// Defaults of Options.
const (
	// DefaultSessionTTL is how long a sign-in lasts.
	DefaultSessionTTL = 12 * time.Hour
	// DefaultRefresh is how often pages refresh their live parts.
	DefaultRefresh = 5 * time.Second
	// DefaultHandlerTimeout bounds the work of one request.
	DefaultHandlerTimeout = 30 * time.Second
	// DefaultSignInFailures is how many failed sign-ins a client address
	// may make per DefaultSignInWindow: httpapi.DefaultAuthFailures.
	DefaultSignInFailures = httpapi.DefaultAuthFailures
	// DefaultSignInFailuresOverall is how many failed sign-ins all
	// addresses together may make per DefaultSignInWindow:
	// httpapi.DefaultAuthFailuresOverall.
	DefaultSignInFailuresOverall = httpapi.DefaultAuthFailuresOverall
	// DefaultSignInWindow is how long a used-up sign-in budget takes to
	// refill completely: httpapi.DefaultAuthFailureWindow.
	DefaultSignInWindow = httpapi.DefaultAuthFailureWindow
)

// SignInLimit bounds failed sign-ins, as the REST API bounds failed
// authentications (see [httpapi.AuthFailureLimit]): each sign-in with a
// token the Authenticator refuses counts against the client's address
// and all addresses together. Beyond its address's budget the sign-in
// form answers 429 Too Many Requests with Retry-After without checking
// the token, a valid one included; beyond the overall budget sign-ins
// wait their turn (up to Wait) and are checked one at a time as it
// refills, valid tokens too, and an address that signed in during the
// last day does not wait until the failures of such addresses use up a
// budget of their own. Sessions already signed in go on.
type SignInLimit = httpapi.AuthFailureLimit

// Options configure the dashboard. A nil *Options means every default.
type Options struct {
	// Prefix is the path the dashboard is mounted at, such as "/ui": it
	// serves Prefix+"/" and the paths below, and writes its links under
	// it. Mount it in a mux without http.StripPrefix:
	// mux.Handle("/ui/", dashboard.New(s, &dashboard.Options{Prefix: "/ui"})).
	// Empty means the root.
	Prefix string
	// Authenticator checks the token a user signs in with, as the REST
	// API checks bearer tokens: the dashboard calls it with a request
	// that carries "Authorization: Bearer TOKEN". Give the same
	// [httpapi.Authenticator] as the API (an *httpapi.TokenAuth), so that
	// a token reaches the same subscriptions in both. The dashboard
	// calls it again at each request of a signed-in session, with the
	// token the session signed in with, and ends the session when it
	// refuses the token: an error that wraps httpapi.ErrUnauthenticated,
	// or no principal. Any other error says the token could not be
	// checked (a service it asks cannot be reached): the request is
	// answered 503 and the session goes on; a sign-in is answered 503
	// too, and counts as a failed one. Nil, or a nil *httpapi.TokenAuth
	// (what httpapi.LoadTokenAuth returns when no tokens are configured),
	// means no sign-in: everyone who can connect
	// sees and changes everything (use only on a loopback address).
	Authenticator httpapi.Authenticator
	// SessionKey signs the session cookies and seals the token each
	// holds; at least 32 bytes, as secret as the tokens. Processes that
	// serve the same users behind one address need the same key. Nil
	// means a random key made by New, so that sign-ins end when the
	// process does.
	SessionKey []byte
	// SessionTTL is how long a sign-in lasts. Defaults to
	// DefaultSessionTTL (12h).
	SessionTTL time.Duration
	// SecureCookies marks the cookies Secure even on requests that did
	// not arrive over TLS (behind a proxy that terminates TLS). Cookies of
	// requests over TLS are always Secure.
	SecureCookies bool
	// Refresh is how often the pages' script reloads the parts of a page
	// that change (history, counters, charts); the reader can turn it off.
	// Defaults to DefaultRefresh (5s); negative turns it off.
	Refresh time.Duration
	// Logger receives the dashboard's log: failed sign-ins and refused
	// requests at Info, server errors at Error. Nil means slog.Default().
	Logger *slog.Logger
	// HandlerTimeout bounds the context of each request's work. Defaults
	// to DefaultHandlerTimeout (30s).
	HandlerTimeout time.Duration
	// ReadOnly reports whether a principal may only look: its pages show
	// no buttons that change anything, and the dashboard answers its
	// POSTs that would change something with 403 (it may still sign out
	// and try definitions). The dashboard calls it with the signed-in
	// principal, or with nil when there is no Authenticator. A principal
	// whose ReadOnly field is set (a token marked "read-only" in the
	// list of an [httpapi.TokenAuth]) may only look whatever this says.
	// Nil means every other principal may change what it may see.
	ReadOnly func(p *httpapi.Principal) bool
	// SignInLimit bounds failed sign-ins, in a budget of the dashboard's
	// own; it is not used when AuthFailures is set. Nil means the
	// defaults of [SignInLimit] (10 per address and 100 in all per 15
	// minutes); set SignInLimit.Disabled to turn it off.
	SignInLimit *SignInLimit
	// AuthFailures, when set, is the budget of failed sign-ins, to be
	// shared with the REST API (httpapi.Options.AuthFailures) so that a
	// token guessed at one counts at the other. Nil means a budget of the
	// dashboard's own, made by httpapi.NewAuthFailures(SignInLimit).
	AuthFailures *httpapi.AuthFailures
}

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// handler is the http.Handler returned by New.
type handler struct {
	s      *scheduler.Scheduler
	opts   Options
	log    *slog.Logger
	mux    *http.ServeMux
	pages  map[string]*template.Template
	static http.Handler
	cop    *http.CrossOriginProtection // refuses cross-origin POSTs
	// tokenKey seals the token of a signed-in session in its cookie.
	tokenKey cipher.AEAD
	// signedOut holds the sessions signed out in this process.
	signedOut signedOut
}

// New returns the dashboard of s as an http.Handler. opts may be nil. It
// panics when opts.SessionKey is set and shorter than 32 bytes, or
// opts.Prefix does not start with '/'.
func New(s *scheduler.Scheduler, opts *Options) http.Handler {
	h := &handler{s: s, mux: http.NewServeMux()}
	if opts != nil {
		h.opts = *opts
	}
	o := &h.opts
	if a, ok := o.Authenticator.(*httpapi.TokenAuth); ok && a == nil {
		o.Authenticator = nil // LoadTokenAuth's "nothing configured"
	}
	o.Prefix = strings.TrimRight(o.Prefix, "/")
	if o.Prefix != "" && !strings.HasPrefix(o.Prefix, "/") {
		panic(fmt.Sprintf("dashboard: Options.Prefix %q does not start with '/'", o.Prefix))
	}
	if o.SessionKey == nil {
		o.SessionKey = make([]byte, 32)
		rand.Read(o.SessionKey)
	} else if len(o.SessionKey) < 32 {
		panic(fmt.Sprintf("dashboard: Options.SessionKey has %d bytes, fewer than 32", len(o.SessionKey)))
	}
	h.tokenKey = newTokenKey(o.SessionKey)
	if o.SessionTTL <= 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.Refresh == 0 {
		o.Refresh = DefaultRefresh
	}
	if o.HandlerTimeout <= 0 {
		o.HandlerTimeout = DefaultHandlerTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	h.log = o.Logger
	h.pages = parseTemplates()
	sub, _ := fs.Sub(staticFiles, "static")
	h.static = http.StripPrefix(o.Prefix+"/static/", http.FileServerFS(sub))
	h.cop = http.NewCrossOriginProtection()
	if o.AuthFailures == nil {
		o.AuthFailures = httpapi.NewAuthFailures(o.SignInLimit)
	}
	h.routes()
	return h
}

// routes registers the pages and actions. Every path is under the prefix.
func (h *handler) routes() {
	p := h.opts.Prefix
	h.mux.HandleFunc("GET "+p+"/{$}", h.page(h.overview))
	h.mux.HandleFunc("GET "+p+"/collections/{collection}", h.page(h.collection))
	h.mux.HandleFunc("GET "+p+"/collections/{collection}/jobs/{job}", h.page(h.job))
	h.mux.HandleFunc("GET "+p+"/collections/{collection}/jobs/{job}/delete", h.page(h.confirmDelete))
	h.mux.HandleFunc("POST "+p+"/collections/{collection}/jobs/{job}/{op}", h.action(h.jobAction))
	h.mux.HandleFunc("GET "+p+"/collections/{collection}/delete", h.page(h.confirmDeleteCollection))
	h.mux.HandleFunc("POST "+p+"/collections/{collection}/{op}", h.action(h.collectionAction))
	h.mux.HandleFunc("GET "+p+"/edit/job", h.page(h.editJob))
	h.mux.HandleFunc("POST "+p+"/edit/job", h.action(h.saveJob))
	h.mux.HandleFunc("GET "+p+"/edit/collection", h.page(h.editCollection))
	h.mux.HandleFunc("POST "+p+"/edit/collection", h.action(h.saveCollection))
	h.mux.HandleFunc("POST "+p+"/draft", h.form(h.draft))
	h.mux.HandleFunc("GET "+p+"/search", h.page(h.search))
	h.mux.HandleFunc("GET "+p+"/try", h.page(h.try))
	h.mux.HandleFunc("POST "+p+"/try", h.form(h.tryPost))
	h.mux.HandleFunc("GET "+p+"/login", h.loginPage)
	h.mux.HandleFunc("POST "+p+"/login", h.login)
	h.mux.HandleFunc("POST "+p+"/logout", h.form(h.logout))
	h.mux.HandleFunc("GET "+p+"/static/", h.serveStatic)
	h.mux.HandleFunc(p+"/", func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, http.StatusNotFound, "There is no page at this address.")
	})
}

// contentSecurityPolicy allows the dashboard's own script, styles and
// forms, and nothing inline.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// ServeHTTP sets the security headers, recovers panics and routes.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "same-origin")
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			h.log.Error("dashboard: panic serving request", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			http.Error(w, "internal error", http.StatusInternalServerError)
		}
	}()
	h.mux.ServeHTTP(w, r)
}

// pageFunc builds a page for the request: the template's name and its
// data, or an error.
type pageFunc func(r *http.Request, v *viewer) (string, any, error)

// page adapts a pageFunc: it checks the session, runs the page with a
// deadline and renders it.
func (h *handler) page(fn pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, ok := h.viewer(w, r)
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), h.opts.HandlerTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		name, data, err := fn(r, v)
		if err != nil {
			h.error(w, r, v, err)
			return
		}
		h.render(w, r, http.StatusOK, name, v, data)
	}
}

// actionFunc carries out a POST and returns where to go next.
type actionFunc func(w http.ResponseWriter, r *http.Request, v *viewer) (redirect string, err error)

// action adapts an actionFunc that changes something: as form, and it
// refuses the requests of a viewer who may only look (403).
func (h *handler) action(fn actionFunc) http.HandlerFunc {
	return h.form(func(w http.ResponseWriter, r *http.Request, v *viewer) (string, error) {
		if v.readOnly() {
			h.log.Info("dashboard: change by a read-only viewer refused", "path", r.URL.Path, "user", v.name())
			return "", &statusError{http.StatusForbidden, "Your token may only look: it may not change anything here."}
		}
		return fn(w, r, v)
	})
}

// form adapts an actionFunc: it refuses cross-origin requests and
// requests without the session's form token, then redirects (303) to
// where the action says.
func (h *handler) form(fn actionFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h.cop.Check(r); err != nil {
			h.log.Info("dashboard: cross-origin form refused", "path", r.URL.Path, "origin", r.Header.Get("Origin"))
			h.fail(w, r, http.StatusForbidden, "This form was sent from another site; it was refused.")
			return
		}
		v, ok := h.viewer(w, r)
		if !ok {
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			h.failAs(w, r, v, http.StatusBadRequest, "The form could not be read.")
			return
		}
		if !v.checkToken(r.PostForm.Get(tokenField)) {
			h.log.Info("dashboard: form without a valid token refused", "path", r.URL.Path, "user", v.name())
			h.failAs(w, r, v, http.StatusForbidden, "This form has expired or did not come from this dashboard; reload the page and try again.")
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), h.opts.HandlerTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		to, err := fn(w, r, v)
		if err != nil {
			h.error(w, r, v, err)
			return
		}
		if to != "" {
			http.Redirect(w, r, to, http.StatusSeeOther)
		}
	}
}

// maxFormBytes bounds a POST body: a job definition of the try page
// (scheduler.MaxInputSize) and a little more.
const maxFormBytes = 2*scheduler.MaxInputSize + 4096

// statusError is an error with the status and the message to show.
type statusError struct {
	status int
	msg    string
}

func (e *statusError) Error() string { return e.msg }

func notFound(what string) error {
	return &statusError{http.StatusNotFound, what + " does not exist, or you may not see it."}
}

// error renders err as an error page: scheduler sentinels map to their
// status, anything else is logged and shown as 500.
func (h *handler) error(w http.ResponseWriter, r *http.Request, v *viewer, err error) {
	var se *statusError
	switch ie, invalid := isInvalid(err); {
	case errors.As(err, &se):
		h.failAs(w, r, v, se.status, se.msg)
	case invalid:
		h.render(w, r, http.StatusBadRequest, "error", v, errorPage{Status: http.StatusBadRequest, Title: "Not done",
			Message: "The Scheduler refused it:", Problems: ie.problems, Back: h.back(r)})
	case errors.Is(err, scheduler.ErrNotFound):
		h.failAs(w, r, v, http.StatusNotFound, "It does not exist (any more), or you may not see it.")
	case errors.Is(err, scheduler.ErrFinalState), errors.Is(err, scheduler.ErrCollectionNotEnabled), errors.Is(err, scheduler.ErrConflict),
		errors.Is(err, scheduler.ErrQuotaExceeded):
		h.failAs(w, r, v, http.StatusConflict, "Not done: "+h.refusal(r, err)+".")
	case errors.Is(err, scheduler.ErrInvalid):
		h.failAs(w, r, v, http.StatusBadRequest, err.Error())
	case errors.Is(err, scheduler.ErrStopped):
		// The process is shutting down: a retry goes to another one
		// behind the same address.
		w.Header().Set("Retry-After", "5")
		h.failAs(w, r, v, http.StatusServiceUnavailable, "The scheduler is shutting down. Please try again in a moment.")
	case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() != nil:
		h.log.Error("dashboard: request timed out", "method", r.Method, "path", r.URL.Path, "err", err)
		h.failAs(w, r, v, http.StatusServiceUnavailable, "The page took too long to build. Please try again.")
	default:
		h.log.Error("dashboard: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		h.failAs(w, r, v, http.StatusInternalServerError, "Something went wrong on the server; the log says what.")
	}
}

// refusal says in words why the Scheduler refused the change r asked
// for, for the errors that match its sentinels ErrQuotaExceeded,
// ErrFinalState, ErrCollectionNotEnabled (naming the state of the
// collection of r's path), ErrConflict and ErrNotFound; the error's own
// text for any other.
func (h *handler) refusal(r *http.Request, err error) string {
	var qe *scheduler.QuotaError
	switch {
	case errors.As(err, &qe):
		return fmt.Sprintf("the collection %s would exceed its %s quota (%s): %s", qe.Collection, qe.Quota, qe.Limit, qe.Reason)
	case errors.Is(err, scheduler.ErrQuotaExceeded):
		return "the collection would exceed its quota"
	case errors.Is(err, scheduler.ErrFinalState):
		return "the job is Completed or Faulted, a final state: it is not changed or run again; put it anew to reschedule it"
	case errors.Is(err, scheduler.ErrCollectionNotEnabled):
		state := "not Enabled"
		if c, cerr := h.s.GetCollection(r.Context(), r.PathValue("collection")); cerr == nil {
			state = string(c.Definition.State())
		}
		return "its collection is " + state + ": enable the collection first"
	case errors.Is(err, scheduler.ErrConflict):
		return "another change came at the same time; please try again"
	case errors.Is(err, scheduler.ErrNotFound):
		return "it does not exist (any more)"
	}
	return err.Error()
}

// fail renders an error page for a request whose viewer is not known.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.failAs(w, r, h.anonymous(w, r), status, msg)
}

func (h *handler) failAs(w http.ResponseWriter, r *http.Request, v *viewer, status int, msg string) {
	if status < 500 {
		h.log.Debug("dashboard: request refused", "method", r.Method, "path", r.URL.Path, "status", status, "message", msg)
	}
	h.render(w, r, status, "error", v, errorPage{Status: status, Title: http.StatusText(status), Message: msg})
}

type errorPage struct {
	Status  int
	Title   string
	Message string
	// Problems are what the Scheduler found wrong, each at its JSON path.
	Problems []problem
	// Back is the dashboard page the refused form was sent from, to go
	// back to and try again; empty: the overview.
	Back string
}

// back returns the dashboard page a form was sent from (its Referer, when
// that is a page of this dashboard on this host), or "".
func (h *handler) back(r *http.Request) string {
	ref, err := url.Parse(r.Referer())
	if err != nil || ref.Host != r.Host {
		return ""
	}
	if next := h.localNext(ref.RequestURI()); next != h.url(nil) {
		return next
	}
	return ""
}

// url returns the dashboard path of parts, each escaped as one segment,
// with the query q (which may be nil).
func (h *handler) url(q url.Values, parts ...string) string {
	var b strings.Builder
	b.WriteString(h.opts.Prefix)
	for _, p := range parts {
		b.WriteByte('/')
		b.WriteString(url.PathEscape(p))
	}
	if len(parts) == 0 {
		b.WriteByte('/')
	}
	if len(q) > 0 {
		b.WriteByte('?')
		b.WriteString(q.Encode())
	}
	return b.String()
}

func (h *handler) collectionURL(c string, q url.Values) string { return h.url(q, "collections", c) }

func (h *handler) jobURL(c, j string, q url.Values) string {
	return h.url(q, "collections", c, "jobs", j)
}

// visible reports whether the viewer may see the collection: without
// authentication everyone sees everything; a principal with every
// subscription sees every collection; otherwise only collections named
// "subscription/resourceGroup/name" of its subscriptions, as in the REST
// API.
func visible(p *httpapi.Principal, authOn bool, collection string) bool {
	if !authOn || p != nil && p.AllSubscriptions {
		return true
	}
	parts := strings.Split(collection, "/")
	return len(parts) == scheduler.MaxScopeSegments+1 && p.Allows(parts[0])
}

// visibleCollections lists the collections the viewer may see, and the
// filter for aggregate reads: nil when the viewer sees every collection.
func (h *handler) visibleCollections(ctx context.Context, v *viewer) ([]*scheduler.CollectionRecord, []string, error) {
	all, err := h.s.ListCollections(ctx)
	if err != nil {
		return nil, nil, err
	}
	if v.seesAll() {
		return all, nil, nil
	}
	out := make([]*scheduler.CollectionRecord, 0, len(all))
	names := []string{}
	for _, c := range all {
		if v.sees(c.Name) {
			out = append(out, c)
			names = append(names, c.Name)
		}
	}
	return slices.Clip(out), names, nil
}
