package dashboard_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/azure"
	"github.com/jobclock/scheduler/dashboard"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

var ctx = context.Background()

// Tokens of the tests' authenticator: one for every subscription, one for
// sub-a only.
const (
	adminToken   = "admin-token-0123456789abcdef"
	limitedToken = "limited-token-0123456789abc"
)

// digest is the payload of the host action type Digest that env's
// scheduler registers.
type digest struct {
	To string `json:"to"`
}

// longBody is what /long answers: 40 lines, CRLF-separated, under the
// 2,048 bytes a history message keeps of a body, the last one marked.
var longBody = strings.Repeat("a line of the body, one of forty, 40 bytes\r\n", 39) + "<b>the last line & END-OF-BODY</b>"

// env is a started Scheduler over a memory store, a receiver its jobs
// call (/fail answers 500, /long a long body, /html answers markup, anything else 200), and
// the dashboard served on a test server.
type env struct {
	t      *testing.T
	store  *memory.Store
	s      *scheduler.Scheduler
	recv   *httptest.Server
	srv    *httptest.Server
	prefix string
	client *http.Client // with a cookie jar; does not follow redirects
	calls  atomic.Int64
}

type envOptions struct {
	auth    bool   // sign-in with the test tokens
	prefix  string // where the dashboard is mounted
	tls     bool
	refresh time.Duration
	ttl     time.Duration // of sessions
	// readOnly makes the limited token's principal one that may only
	// look, through Options.ReadOnly.
	readOnly bool
	// readOnlyToken marks the limited token "read-only" in the token
	// list.
	readOnlyToken bool
	// maxConcurrency is the Scheduler's Config.MaxConcurrency (0: its
	// default).
	maxConcurrency int
	// azure registers the executors of the Azure action types, so that
	// jobs may have them (the tests do not run them).
	azure bool
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	e := &env{t: t, store: memory.New(), prefix: o.prefix}
	e.recv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.calls.Add(1)
		switch {
		case strings.HasPrefix(r.URL.Path, "/fail"):
			http.Error(w, "broken on purpose\nsecond line of the body", http.StatusInternalServerError)
		case strings.HasPrefix(r.URL.Path, "/long"):
			http.Error(w, longBody, http.StatusInternalServerError)
		case strings.HasPrefix(r.URL.Path, "/html"):
			http.Error(w, `<script>alert("body")</script><img src=x onerror=alert(2)>`, http.StatusBadGateway)
		default:
			w.Write([]byte("thanks"))
		}
	}))
	t.Cleanup(e.recv.Close)
	reg := new(action.Registry)
	action.Handle(reg, "Digest", func(ctx context.Context, req *action.Request, d digest) error { return nil })
	if o.azure {
		azure.Register(reg, nil)
		t.Cleanup(func() { reg.Close(ctx) })
	}
	s, err := scheduler.New(e.store, &scheduler.Config{Logger: slog.New(slog.DiscardHandler), MinRetryInterval: time.Millisecond, PollInterval: 50 * time.Millisecond, Executors: reg, MaxConcurrency: o.maxConcurrency})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(ctx) })
	e.s = s
	opts := &dashboard.Options{Prefix: o.prefix, Logger: slog.New(slog.DiscardHandler), Refresh: o.refresh, SessionTTL: o.ttl}
	if o.auth {
		mark := ""
		if o.readOnlyToken {
			mark = " read-only"
		}
		auth, err := httpapi.NewTokenAuth(adminToken + " *\n" + limitedToken + " sub-a" + mark + "\n")
		if err != nil {
			t.Fatal(err)
		}
		opts.Authenticator = auth
		if o.readOnly {
			limited, err := auth.Authenticate(bearer(limitedToken))
			if err != nil {
				t.Fatal(err)
			}
			opts.ReadOnly = func(p *httpapi.Principal) bool { return p != nil && p.Name == limited.Name }
		}
	}
	mux := http.NewServeMux()
	mux.Handle(o.prefix+"/", dashboard.New(s, opts))
	if o.tls {
		e.srv = httptest.NewTLSServer(mux)
	} else {
		e.srv = httptest.NewServer(mux)
	}
	t.Cleanup(e.srv.Close)
	jar, _ := cookiejar.New(nil)
	e.client = e.srv.Client()
	e.client.Jar = jar
	e.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return e
}

// bearer is a request that carries token as the dashboard's sign-in
// passes it to the Authenticator.
func bearer(token string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}

// collection creates a collection.
func (e *env) collection(name string, def *scheduler.JobCollection) {
	e.t.Helper()
	if _, err := e.s.PutCollection(ctx, name, def, nil); err != nil {
		e.t.Fatalf("PutCollection(%s): %v", name, err)
	}
}

// job puts a job; path is the receiver's path its action calls, extra is
// more of the definition (recurrence, retryPolicy, startTime).
func (e *env) job(coll, name, path, extra string) *scheduler.JobRecord {
	e.t.Helper()
	def := `{"action": {"type": "Http", "request": {"uri": "` + e.recv.URL + path + `", "method": "POST"}, "retryPolicy": {"retryType": "None"}}`
	if extra != "" {
		def += ", " + extra
	}
	job, err := scheduler.ParseJob([]byte(def+"}"), &scheduler.ParseOptions{MinRetryInterval: time.Millisecond})
	if err != nil {
		e.t.Fatalf("ParseJob(%s): %v", def, err)
	}
	r, err := e.s.PutJob(ctx, coll, name, job, nil)
	if err != nil {
		e.t.Fatalf("PutJob(%s/%s): %v", coll, name, err)
	}
	return r
}

// waitHistory waits until the job has at least n history entries.
func (e *env) waitHistory(coll, name string, n int) []scheduler.HistoryEntry {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h, err := e.s.ListHistory(ctx, coll, name, nil)
		if err == nil && len(h) >= n {
			return h
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s/%s has %d history entries after 10s (%v), want %d", coll, name, len(h), err, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// page is a response of the dashboard.
type page struct {
	status int
	header http.Header
	body   string
}

func (e *env) do(req *http.Request) page {
	e.t.Helper()
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return page{res.StatusCode, res.Header, string(b)}
}

// get fetches a dashboard path (below the prefix).
func (e *env) get(path string) page {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+e.prefix+path, nil)
	return e.do(req)
}

// post sends a form to a dashboard path, as the dashboard's own page
// would: same origin.
func (e *env) post(path string, form url.Values) page {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+e.prefix+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", e.srv.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return e.do(req)
}

var tokenPattern = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// token returns the form token on the page at path.
func (e *env) token(path string) string {
	e.t.Helper()
	p := e.get(path)
	m := tokenPattern.FindStringSubmatch(p.body)
	if m == nil {
		e.t.Fatalf("GET %s: %d, no form token in:\n%s", path, p.status, p.body)
	}
	return m[1]
}

// signIn signs in with token.
func (e *env) signIn(token string) page {
	e.t.Helper()
	return e.post("/login", url.Values{"csrf": {e.token("/login")}, "token": {token}, "next": {e.prefix + "/"}})
}

// jobPath is the dashboard path of a job.
func jobPath(coll, name string) string {
	return "/collections/" + url.PathEscape(coll) + "/jobs/" + url.PathEscape(name)
}

func collPath(coll string) string { return "/collections/" + url.PathEscape(coll) }

// wantIn checks that the page has every string of want.
func wantIn(t *testing.T, what string, p page, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(p.body, w) {
			t.Errorf("%s: page lacks %q (status %d):\n%s", what, w, p.status, p.body)
			return
		}
	}
}

// wantNotIn checks that the page has none of the strings.
func wantNotIn(t *testing.T, what string, p page, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(p.body, w) {
			t.Errorf("%s: page has %q, which it must not:\n%s", what, w, p.body)
		}
	}
}

func wantStatus(t *testing.T, what string, p page, status int) {
	t.Helper()
	if p.status != status {
		t.Errorf("%s: status %d, want %d; body:\n%s", what, p.status, status, p.body)
	}
}

// putRaw writes a job straight into the store, as another program sharing
// it might, bypassing the Scheduler's checks of names.
func putRaw(t *testing.T, st scheduler.Store, coll, name string, job *scheduler.Job) {
	t.Helper()
	now := time.Now()
	if err := st.PutJob(ctx, &scheduler.JobRecord{Collection: coll, Name: name, Job: job, State: scheduler.JobEnabled,
		Created: now, Updated: now, Schedule: scheduler.JobSchedule{Anchor: now}}); err != nil {
		t.Fatal(err)
	}
}

// calendar puts the exclusion calendar def (its JSON) as name in
// collection.
func (e *env) calendar(collection, name, def string) {
	e.t.Helper()
	c, err := scheduler.ParseCalendar([]byte(def))
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.s.PutCalendar(context.Background(), collection, name, c, nil); err != nil {
		e.t.Fatal(err)
	}
}
