package dashboard

import (
	"bytes"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// stamp is an instant as pages show it: in UTC and, when the job has
// another zone, in that zone too.
type stamp struct {
	// ISO is the instant in RFC 3339, for <time datetime>.
	ISO string
	// UTC is "2026-01-05 09:00 UTC" (seconds when not zero, or when
	// another instant of its column has them: see sameClock).
	UTC string
	// Local is the same in the job's zone ("2026-01-05 10:00 CET"), empty
	// for jobs in UTC.
	Local string
	// Zone names the job's zone ("Europe/Berlin"), empty for UTC.
	Zone string
	// None says why there is no instant, when ISO is empty and "—"
	// would not say enough.
	None string
	// t is the instant, in the job's zone when Local is set.
	t time.Time
}

// at returns the stamp of t for a job whose schedule is read in loc (nil
// or UTC: no local time); the zero stamp for the zero Time.
func at(t time.Time, loc *time.Location) stamp {
	if t.IsZero() {
		return stamp{}
	}
	s := stamp{ISO: t.UTC().Format(time.RFC3339Nano), UTC: clock(t.UTC()), t: t.UTC()}
	if loc != nil && loc != time.UTC && loc.String() != "UTC" {
		s.t = t.In(loc)
		s.Local, s.Zone = clock(s.t), loc.String()
	}
	return s
}

// sameClock makes each column of rows, the stamp that a func of cols
// returns of a row, read alike: when one instant of the column has
// seconds, every instant of it shows them ("11:25:00 UTC" above
// "11:25:10 UTC", not "11:25 UTC").
func sameClock[T any](rows []T, cols ...func(*T) *stamp) {
	for _, col := range cols {
		seconds := false
		for i := range rows {
			t := col(&rows[i]).t
			seconds = seconds || t.Second() != 0 || t.Nanosecond() != 0
		}
		if !seconds {
			continue
		}
		for i := range rows {
			s := col(&rows[i])
			if s.ISO == "" {
				continue
			}
			s.UTC = s.t.UTC().Format(clockSeconds)
			if s.Local != "" {
				s.Local = s.t.Format(clockSeconds)
			}
		}
	}
}

// Words is the stamp in running text: "2026-01-05 09:00 UTC", followed,
// for a job with a zone, by "(2026-01-05 10:00 CET, Europe/Berlin)".
func (s stamp) Words() string {
	if s.Local == "" {
		return s.UTC
	}
	return s.UTC + " (" + s.Local + ", " + s.Zone + ")"
}

func atPtr(t *time.Time, loc *time.Location) stamp {
	if t == nil {
		return stamp{}
	}
	return at(*t, loc)
}

// clock formats t with its zone's abbreviation, seconds only when set.
func clock(t time.Time) string {
	if t.Second() == 0 && t.Nanosecond() == 0 {
		return t.Format("2006-01-02 15:04 MST")
	}
	return t.Format(clockSeconds)
}

// clockSeconds is the layout of clock with seconds.
const clockSeconds = "2006-01-02 15:04:05 MST"

// target says where an action goes, never with a secret: the method and
// URI of a request without its query and user information, the account
// and queue of a storage queue message, the namespace and queue or topic
// of a Service Bus message.
func target(a *action.Action) string {
	switch {
	case a.Request != nil:
		u, err := url.Parse(a.Request.URI)
		if err != nil || u.Host == "" {
			return a.Request.Method
		}
		t := a.Request.Method + " " + u.Scheme + "://" + u.Host + u.EscapedPath()
		if u.RawQuery != "" {
			t += "?…"
		}
		return t
	case a.QueueMessage != nil:
		return a.QueueMessage.StorageAccount + " / " + a.QueueMessage.QueueName
	case a.ServiceBusQueueMessage != nil:
		return a.ServiceBusQueueMessage.Namespace + " / " + a.ServiceBusQueueMessage.QueueName
	case a.ServiceBusTopicMessage != nil:
		return a.ServiceBusTopicMessage.Namespace + " / " + a.ServiceBusTopicMessage.TopicPath
	}
	return ""
}

// hidden replaces a secret in the definitions pages show.
const hidden = "••••••"

// secretKeys are the members of a job definition that hold secrets,
// lower case.
var secretKeys = map[string]bool{"password": true, "pfx": true, "secret": true, "sastoken": true, "saskey": true}

// secretWords mark header names and query parameters whose values are
// likely secrets (Authorization, X-Api-Key, sig, code, token...). Hiding
// a value that is none costs little.
var secretWords = []string{"auth", "token", "secret", "key", "password", "passwd", "signature", "sig", "code", "cookie", "credential", "session"}

func secretName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if n == w || w != "sig" && strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// maskedJSON returns def as indented JSON with its secrets replaced:
// passwords, certificates, OAuth secrets, SAS tokens and keys, the values
// of headers whose names suggest credentials, and such query parameters
// of URIs.
func maskedJSON(def *scheduler.Job) string {
	tree := definitionTree(def)
	if tree == nil {
		return ""
	}
	mask(tree, "")
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the template escapes
	enc.SetIndent("", "  ")
	if err := enc.Encode(tree); err != nil {
		return ""
	}
	return b.String()
}

// definitionTree returns def as the JSON decoder reads it into an any:
// objects, lists, strings, float64s and bools; nil when it cannot.
func definitionTree(def *scheduler.Job) any {
	data, err := json.Marshal(def)
	if err != nil {
		return nil
	}
	var tree any
	if err := json.Unmarshal(data, &tree); err != nil {
		return nil
	}
	return tree
}

// mask hides the secrets of a definition tree in place.
func mask(v any, key string) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			lk := strings.ToLower(k)
			switch s, isString := val.(string); {
			case secretKeys[lk] && isString && s != "":
				x[k] = hidden
			case lk == "headers":
				if hs, ok := val.(map[string]any); ok {
					for name, hv := range hs {
						if s, ok := hv.(string); ok && s != "" && secretName(name) {
							hs[name] = hidden
						}
					}
				}
			case lk == "uri" && isString:
				x[k] = maskQuery(s)
			default:
				mask(val, lk)
			}
		}
	case []any:
		for _, e := range x {
			mask(e, key)
		}
	}
}

// maskQuery hides the values of query parameters of uri that look like
// secrets, and any user information.
func maskQuery(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	changed := false
	if u.User != nil {
		u.User, changed = url.User(hidden), true
	}
	q := u.Query()
	for name, vals := range q {
		if secretName(name) {
			for i := range vals {
				vals[i] = hidden
			}
			changed = true
		}
	}
	if !changed {
		return uri
	}
	u.RawQuery = q.Encode()
	s, err := url.PathUnescape(u.String())
	if err != nil {
		return u.String()
	}
	return s
}

// firstLine returns the first line of s, cut to n runes with an
// ellipsis.
func firstLine(s string, n int) string {
	line, _, more := strings.Cut(strings.TrimSpace(s), "\n")
	r := []rune(line)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	if more {
		return line + " …"
	}
	return line
}

// sortKey is a column of a sortable table.
type sortKey struct {
	Key   string // in the query string
	Label string
}

// sortLink is a column header of a sortable table.
type sortLink struct {
	Label  string
	URL    string
	Active bool
	Desc   bool
	// Aria is the aria-sort value of the header.
	Aria string
}

// sortLinks builds the headers of keys: each links to the page sorted by
// it, ascending, or descending when it is the active ascending one.
func sortLinks(keys []sortKey, q url.Values, active string, desc bool, link func(url.Values) string) []sortLink {
	out := make([]sortLink, len(keys))
	for i, k := range keys {
		nq := cloneQuery(q)
		nq.Del("skip")
		nq.Set("sort", k.Key)
		nq.Del("order")
		l := sortLink{Label: k.Label, Aria: "none"}
		if k.Key == active {
			l.Active, l.Desc = true, desc
			l.Aria = "ascending"
			if desc {
				l.Aria = "descending"
			} else {
				nq.Set("order", "desc")
			}
		}
		l.URL = link(nq)
		out[i] = l
	}
	return out
}

func cloneQuery(q url.Values) url.Values {
	out := make(url.Values, len(q))
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// sortBy sorts rows stably by less, reversed when desc.
func sortBy[T any](rows []T, desc bool, less func(a, b *T) bool) {
	sort.SliceStable(rows, func(i, j int) bool {
		if desc {
			return less(&rows[j], &rows[i])
		}
		return less(&rows[i], &rows[j])
	})
}

// pager is the paging of a table.
type pager struct {
	From, To, Total int
	// Known says Total is known (jobs); history pages only know whether
	// there is a next page.
	Known      bool
	Prev, Next string
	Pages      []pageLink
}

type pageLink struct {
	Label   string
	URL     string
	Current bool
	Gap     bool
}

// pageLinks returns links to the first and last pages and those around
// the current one, with gaps between.
func pageLinks(skip, top, total int, link func(skip int) string) []pageLink {
	if total <= top {
		return nil
	}
	pages := (total + top - 1) / top
	cur := skip / top
	var out []pageLink
	last := -1
	for p := 0; p < pages; p++ {
		if p != 0 && p != pages-1 && (p < cur-2 || p > cur+2) {
			continue
		}
		if last >= 0 && p > last+1 {
			out = append(out, pageLink{Gap: true})
		}
		out = append(out, pageLink{Label: itoa(p + 1), URL: link(p * top), Current: p == cur})
		last = p
	}
	return out
}
