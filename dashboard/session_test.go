package dashboard_test

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/dashboard"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// swapAuth is an Authenticator whose token list a test replaces, as
// a restart of serve with another tokens file does.
// While down is set, it fails as an Authenticator that asks another
// service does when that service cannot be reached.
type swapAuth struct {
	a    atomic.Pointer[httpapi.TokenAuth]
	down atomic.Bool
}

func (s *swapAuth) Authenticate(r *http.Request) (*httpapi.Principal, error) {
	if s.down.Load() {
		return nil, errors.New("token service: connection refused")
	}
	return s.a.Load().Authenticate(r)
}

func (s *swapAuth) set(t *testing.T, list string) {
	t.Helper()
	a, err := httpapi.NewTokenAuth(list)
	if err != nil {
		t.Fatal(err)
	}
	s.a.Store(a)
}

// sessionFixture is a dashboard at /ui with a job, sub-a/rg/c/j, over
// a swappable token list.
type sessionFixture struct {
	s    *scheduler.Scheduler
	auth *swapAuth
	key  []byte
	log  *bytes.Buffer
}

func newSessionFixture(t *testing.T) *sessionFixture {
	t.Helper()
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "sub-a/rg/c", nil, nil); err != nil {
		t.Fatal(err)
	}
	job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "Hour"}, "startTime": "`+later(time.Hour)+`"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "sub-a/rg/c", "j", job, nil); err != nil {
		t.Fatal(err)
	}
	f := &sessionFixture{s: s, auth: &swapAuth{}, key: bytes.Repeat([]byte{7}, 32), log: new(bytes.Buffer)}
	f.auth.set(t, adminToken+" *\n"+limitedToken+" sub-a\n")
	return f
}

// handler returns a dashboard over the fixture's scheduler with its
// session key: a process of serve, started again or beside another.
func (f *sessionFixture) handler() http.Handler {
	return dashboard.New(f.s, &dashboard.Options{Prefix: "/ui", Authenticator: f.auth, SessionKey: f.key,
		Logger: slog.New(slog.NewTextHandler(f.log, nil))})
}

// replay sends, with the cookies of a copy of a session, a GET of the
// job's page and a POST that disables it with the session's form token,
// and returns their statuses.
func (f *sessionFixture) replay(t *testing.T, h http.Handler, cookies []*http.Cookie, csrf string) (get, post int) {
	t.Helper()
	c := &signInClient{t: t, h: h, addr: "192.0.2.9:4000", cookie: cookies}
	get = c.send(httptest.NewRequest(http.MethodGet, "/ui/collections/sub-a%2Frg%2Fc/jobs/j", nil)).Code
	c.cookie = cookies
	req := httptest.NewRequest(http.MethodPost, "/ui/collections/sub-a%2Frg%2Fc/jobs/j/disable", strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	post = c.send(req).Code
	return get, post
}

// signedIn signs in with token and returns a copy of the session's
// cookies and its form token.
func signedIn(t *testing.T, h http.Handler, token string) ([]*http.Cookie, string) {
	t.Helper()
	c := &signInClient{t: t, h: h, addr: "192.0.2.9:4000"}
	if rec := c.signIn(token); rec.Code != http.StatusSeeOther {
		t.Fatalf("sign-in = %d, want 303", rec.Code)
	}
	cookies := c.cookie
	rec := c.send(httptest.NewRequest(http.MethodGet, "/ui/", nil))
	m := tokenPattern.FindStringSubmatch(rec.Body.String())
	if rec.Code != http.StatusOK || m == nil {
		t.Fatalf("overview after sign-in = %d, no form token", rec.Code)
	}
	for _, ck := range cookies {
		if strings.Contains(ck.Value, token) {
			t.Fatal("the session cookie holds the token in clear")
		}
	}
	return cookies, m[1]
}

func (f *sessionFixture) wantEnabled(t *testing.T) {
	t.Helper()
	if r, err := f.s.GetJob(ctx, "sub-a/rg/c", "j"); err != nil || r.State != scheduler.JobEnabled {
		t.Errorf("job after the refused POST: %v, %v; want it Enabled", r.State, err)
	}
}

// TestSessionEndsWithItsToken: a session whose token the Authenticator
// no longer accepts (serve started again with a tokens file without it)
// is over: its pages send to the sign-in page and its POSTs are 401 and
// change nothing, also in a process that shares the session key. A
// session of a token still listed goes on in that process.
func TestSessionEndsWithItsToken(t *testing.T) {
	f := newSessionFixture(t)
	h := f.handler()
	limited, csrf := signedIn(t, h, limitedToken)
	admin, adminCSRF := signedIn(t, h, adminToken)
	if get, _ := f.replay(t, h, limited, ""); get != http.StatusOK {
		t.Fatalf("signed in: GET = %d, want 200", get)
	}

	f.auth.set(t, adminToken+" *\n")
	restarted := f.handler()
	for name, h := range map[string]http.Handler{"same process": h, "process with the same key": restarted} {
		if get, post := f.replay(t, h, limited, csrf); get != http.StatusSeeOther || post != http.StatusUnauthorized {
			t.Errorf("%s, token removed: GET = %d, POST disable = %d; want 303 to the sign-in page, 401", name, get, post)
		}
	}
	f.wantEnabled(t)
	// A page of the ended session sends to the sign-in page, which says
	// why.
	c := &signInClient{t: t, h: h, addr: "192.0.2.9:4000", cookie: limited}
	rec := c.send(httptest.NewRequest(http.MethodGet, "/ui/", nil))
	if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || !strings.Contains(loc, "ended=1") {
		t.Fatalf("overview of the ended session = %d to %q, want 303 to the sign-in page with ended=1", rec.Code, loc)
	}
	rec = c.send(httptest.NewRequest(http.MethodGet, rec.Header().Get("Location"), nil))
	if !strings.Contains(rec.Body.String(), `id="login-notice">Your session has ended`) {
		t.Errorf("the sign-in page does not say that the session ended:\n%s", rec.Body)
	}
	rec = c.send(httptest.NewRequest(http.MethodGet, "/ui/", nil))
	if loc := rec.Header().Get("Location"); strings.Contains(loc, "ended=1") {
		t.Errorf("a request of the new anonymous session is sent to %q, want no notice", loc)
	}
	if !strings.Contains(f.log.String(), "session ended: its token no longer authenticates") {
		t.Errorf("the log does not say why the session ended:\n%s", f.log)
	}
	if get, post := f.replay(t, restarted, admin, adminCSRF); get != http.StatusOK || post != http.StatusSeeOther {
		t.Errorf("process with the same key, token still listed: GET = %d, POST disable = %d; want 200, 303", get, post)
	}
}

// TestSignOutEndsSession: once a session is signed out, a copy of its
// cookie is no session in the process that signed it out: pages send to
// the sign-in page and POSTs are 401 and change nothing. A process that
// shares the session key but did not serve the sign-out (serve started
// again with JOBCLOCK_SESSION_KEY) keeps no list of sign-outs: there the
// copy goes on until it expires or its token is removed, as the package
// documentation says.
func TestSignOutEndsSession(t *testing.T) {
	f := newSessionFixture(t)
	h := f.handler()
	cookies, csrf := signedIn(t, h, limitedToken)
	c := &signInClient{t: t, h: h, addr: "192.0.2.9:4000", cookie: cookies}
	req := httptest.NewRequest(http.MethodPost, "/ui/logout", strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if rec := c.send(req); rec.Code != http.StatusSeeOther {
		t.Fatalf("sign out = %d, want 303", rec.Code)
	}
	if get, post := f.replay(t, h, cookies, csrf); get != http.StatusSeeOther || post != http.StatusUnauthorized {
		t.Errorf("copy of a signed-out session: GET = %d, POST disable = %d; want 303 to the sign-in page, 401", get, post)
	}
	f.wantEnabled(t)

	if get, _ := f.replay(t, f.handler(), cookies, ""); get != http.StatusOK {
		t.Errorf("copy of a signed-out session at a process that did not sign it out: GET = %d, want 200 (as documented)", get)
	}
}

// TestSessionOutlivesAuthenticatorError: while the Authenticator fails
// with an error other than httpapi.ErrUnauthenticated (its token service
// cannot be reached), a signed-in session's pages and POSTs are answered
// 503 with Retry-After, change nothing, and keep the cookie, and a
// sign-in is answered 503 rather than told its token is invalid; once the
// Authenticator answers again the same session goes on, signed in.
func TestSessionOutlivesAuthenticatorError(t *testing.T) {
	f := newSessionFixture(t)
	h := f.handler()
	cookies, csrf := signedIn(t, h, adminToken)
	f.auth.down.Store(true)
	c := &signInClient{t: t, h: h, addr: "192.0.2.9:4000", cookie: cookies}
	rec := c.send(httptest.NewRequest(http.MethodGet, "/ui/collections/sub-a%2Frg%2Fc/jobs/j", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("job page while the Authenticator fails = %d, Retry-After %q; want 503 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
	if cs := rec.Result().Cookies(); len(cs) > 0 {
		t.Errorf("job page while the Authenticator fails set cookies %v; want the session kept", cs)
	}
	if get, post := f.replay(t, h, cookies, csrf); get != http.StatusServiceUnavailable || post != http.StatusServiceUnavailable {
		t.Errorf("GET, POST while the Authenticator fails = %d, %d; want 503, 503", get, post)
	}
	f.wantEnabled(t)
	other := &signInClient{t: t, h: h, addr: "192.0.2.10:4000"}
	if rec := other.signIn(limitedToken); rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "could not be checked") {
		t.Errorf("sign-in while the Authenticator fails = %d; want 503 saying the token could not be checked:\n%s", rec.Code, rec.Body)
	}
	f.auth.down.Store(false)
	c = &signInClient{t: t, h: h, addr: "192.0.2.9:4000", cookie: cookies}
	if rec := c.send(httptest.NewRequest(http.MethodGet, "/ui/collections/sub-a%2Frg%2Fc/jobs/j", nil)); rec.Code != http.StatusOK {
		t.Errorf("job page once the Authenticator answers again = %d, want 200", rec.Code)
	}
	if get, post := f.replay(t, h, cookies, csrf); get != http.StatusOK || post != http.StatusSeeOther {
		t.Errorf("GET, POST once the Authenticator answers again = %d, %d; want 200, 303", get, post)
	}
}
