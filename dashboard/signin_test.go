package dashboard_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/dashboard"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// signInClient signs in to a dashboard handler from one address, keeping
// its session cookie, as a browser there would.
type signInClient struct {
	t      *testing.T
	h      http.Handler
	addr   string
	cookie []*http.Cookie
}

func (c *signInClient) send(req *http.Request) *httptest.ResponseRecorder {
	req.RemoteAddr = c.addr
	for _, ck := range c.cookie {
		req.AddCookie(ck)
	}
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, req)
	if cs := rec.Result().Cookies(); len(cs) > 0 {
		c.cookie = cs
	}
	return rec
}

// signIn fetches the sign-in form and sends it with token.
func (c *signInClient) signIn(token string) *httptest.ResponseRecorder {
	c.t.Helper()
	rec := c.send(httptest.NewRequest(http.MethodGet, "/ui/login", nil))
	m := tokenPattern.FindStringSubmatch(rec.Body.String())
	if m == nil {
		c.t.Fatalf("GET /ui/login: %d, no form token", rec.Code)
	}
	form := url.Values{"csrf": {m[1]}, "token": {token}, "next": {"/ui/"}}
	req := httptest.NewRequest(http.MethodPost, "/ui/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.send(req)
}

// signInHandler returns a dashboard at /ui with the test tokens and the
// given sign-in limit.
func signInHandler(t *testing.T, limit *dashboard.SignInLimit) http.Handler {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	auth, err := httpapi.NewTokenAuth(adminToken + " *\n" + limitedToken + " sub-a\n")
	if err != nil {
		t.Fatal(err)
	}
	return dashboard.New(s, &dashboard.Options{Prefix: "/ui", Logger: log, Authenticator: auth, SignInLimit: limit})
}

// TestSignInLimit: by default, wrong tokens from one address beyond
// DefaultSignInFailures are answered 429 with Retry-After, a right token
// as well (it is not checked), while another address still signs in; once
// the budget refills the right token signs in again.
func TestSignInLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := signInHandler(t, nil)
		guesser := &signInClient{t: t, h: h, addr: "192.0.2.7:5000"}
		for i := range dashboard.DefaultSignInFailures {
			if rec := guesser.signIn("wrong-token-" + strconv.Itoa(i) + "-0123456789"); rec.Code != http.StatusUnauthorized {
				t.Fatalf("wrong token %d = %d, want 401", i+1, rec.Code)
			}
		}
		window := dashboard.DefaultSignInWindow
		each := window / dashboard.DefaultSignInFailures // one more failure allowed after this
		for _, token := range []string{"wrong-token-more-0123456789", adminToken} {
			rec := guesser.signIn(token)
			if rec.Code != http.StatusTooManyRequests {
				t.Fatalf("sign-in beyond the budget = %d, want 429", rec.Code)
			}
			if got, want := rec.Header().Get("Retry-After"), strconv.Itoa(int(each/time.Second)); got != want {
				t.Errorf("Retry-After = %q, want %q", got, want)
			}
			if !strings.Contains(rec.Body.String(), "Too many failed sign-ins; please try again in 2 minutes.") {
				t.Errorf("429 page does not say why and for how long (2 minutes, for 90s):\n%s", rec.Body)
			}
		}
		// Another address has its own budget.
		other := &signInClient{t: t, h: h, addr: "198.51.100.1:6000"}
		if rec := other.signIn(limitedToken); rec.Code != http.StatusSeeOther {
			t.Errorf("sign-in from another address = %d, want 303", rec.Code)
		}
		// A successful sign-in takes nothing of the budget; one failure's
		// worth refills after window/failures.
		time.Sleep(each)
		if rec := guesser.signIn(adminToken); rec.Code != http.StatusSeeOther {
			t.Fatalf("right token after %v = %d, want 303", each, rec.Code)
		}
		if rec := guesser.signIn("wrong-token-again-0123456789"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("wrong token after a success = %d, want 401 (the success took nothing)", rec.Code)
		}
		if rec := guesser.signIn(adminToken); rec.Code != http.StatusTooManyRequests {
			t.Fatalf("right token with the budget used up again = %d, want 429", rec.Code)
		}
	})
}

// TestSignInLimitOverall: failures from many addresses, each within its
// own budget, use up the overall one; then a sign-in from another
// address waits for the budget to have room for one more
// failure (12s here) and is then checked, a right token signs in and a
// wrong one is 401 after the same wait, and an address that signed in
// before signs in at once. Only a sign-in that would wait beyond the
// limit's Wait is refused 429, unchecked.
func TestSignInLimitOverall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := signInHandler(t, &dashboard.SignInLimit{PerAddress: 2, Overall: 5, Window: time.Minute})
		operator := &signInClient{t: t, h: h, addr: "198.51.100.7:7000"}
		if rec := operator.signIn(adminToken); rec.Code != http.StatusSeeOther {
			t.Fatalf("operator's sign-in = %d, want 303", rec.Code)
		}
		for i := range 5 {
			c := &signInClient{t: t, h: h, addr: "192.0.2." + strconv.Itoa(i) + ":5000"}
			if rec := c.signIn("wrong-token-0123456789abcdef"); rec.Code != http.StatusUnauthorized {
				t.Fatalf("wrong token from address %d = %d, want 401", i, rec.Code)
			}
		}
		for i, tc := range []struct {
			token string
			want  int
		}{{"wrong-token-0123456789abcdef", http.StatusUnauthorized}, {adminToken, http.StatusSeeOther}} {
			fresh := &signInClient{t: t, h: h, addr: "203.0.113." + strconv.Itoa(i) + ":7000"}
			start := time.Now()
			if rec := fresh.signIn(tc.token); rec.Code != tc.want || time.Since(start) != 12*time.Second {
				t.Fatalf("sign-in from a new address once the overall budget is used up = %d after %v; want %d after 12s",
					rec.Code, time.Since(start), tc.want)
			}
		}
		start := time.Now()
		if rec := operator.signIn(adminToken); rec.Code != http.StatusSeeOther || time.Since(start) != 0 {
			t.Fatalf("sign-in from an address that signed in before = %d after %v; want 303 at once", rec.Code, time.Since(start))
		}

		short := signInHandler(t, &dashboard.SignInLimit{PerAddress: 2, Overall: 5, Window: time.Minute, Wait: 5 * time.Second})
		for i := range 5 {
			c := &signInClient{t: t, h: short, addr: "192.0.2." + strconv.Itoa(i) + ":5000"}
			if rec := c.signIn("wrong-token-0123456789abcdef"); rec.Code != http.StatusUnauthorized {
				t.Fatalf("wrong token from address %d = %d, want 401", i, rec.Code)
			}
		}
		fresh := &signInClient{t: t, h: short, addr: "203.0.113.9:7000"}
		rec := fresh.signIn(adminToken)
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "5" || !strings.Contains(rec.Body.String(), "please try again in 5 seconds.") {
			t.Fatalf("sign-in that would wait beyond Wait = %d, Retry-After %q; want 429, 5, saying why", rec.Code, rec.Header().Get("Retry-After"))
		}
	})
}

// TestSignInLimitDisabled: without the limit, 40 wrong tokens in a row
// are 40 answers 401.
func TestSignInLimitDisabled(t *testing.T) {
	h := signInHandler(t, &dashboard.SignInLimit{Disabled: true})
	c := &signInClient{t: t, h: h, addr: "192.0.2.7:5000"}
	for i := range 40 {
		if rec := c.signIn("wrong-token-0123456789abcdef"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d = %d, want 401", i+1, rec.Code)
		}
	}
	if rec := c.signIn(adminToken); rec.Code != http.StatusSeeOther {
		t.Fatalf("right token = %d, want 303", rec.Code)
	}
}

// TestSignInLimitIPv6Network: the addresses of one IPv6 /64 network share
// one budget, so a client cannot spread its guesses over the addresses it
// holds; another network keeps its own.
func TestSignInLimitIPv6Network(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := signInHandler(t, nil)
		for i := range dashboard.DefaultSignInFailures {
			c := &signInClient{t: t, h: h, addr: "[2001:db8::" + strconv.FormatInt(int64(i+1), 16) + "]:5000"}
			if rec := c.signIn("wrong-token-" + strconv.Itoa(i) + "-0123456789"); rec.Code != http.StatusUnauthorized {
				t.Fatalf("wrong token %d = %d, want 401", i+1, rec.Code)
			}
		}
		same := &signInClient{t: t, h: h, addr: "[2001:db8::ffff:1]:5000"}
		if rec := same.signIn(adminToken); rec.Code != http.StatusTooManyRequests {
			t.Errorf("sign-in from another address of the same /64 = %d, want 429", rec.Code)
		}
		other := &signInClient{t: t, h: h, addr: "[2001:db8:0:1::1]:5000"}
		if rec := other.signIn(adminToken); rec.Code != http.StatusSeeOther {
			t.Errorf("sign-in from another /64 = %d, want 303", rec.Code)
		}
	})
}

// TestSignInEmptyAndIcon: sign-ins with an empty token and requests
// without credentials take nothing from the budget of failed sign-ins,
// so the address still signs in after more of them than the budget
// holds; the pages link the dashboard's own icon, which is served to
// anyone, so that browsers do not ask the server's /favicon.ico.
func TestSignInEmptyAndIcon(t *testing.T) {
	h := signInHandler(t, &dashboard.SignInLimit{PerAddress: 2, Window: time.Hour})
	c := &signInClient{t: t, h: h, addr: "192.0.2.30:5000"}
	for i := range 4 {
		if rec := c.signIn(" "); rec.Code != http.StatusUnauthorized {
			t.Fatalf("empty sign-in %d = %d, want 401", i+1, rec.Code)
		}
	}
	if rec := c.signIn(adminToken); rec.Code != http.StatusSeeOther {
		t.Fatalf("right token after 4 empty sign-ins = %d, want 303", rec.Code)
	}
	rec := c.send(httptest.NewRequest(http.MethodGet, "/ui/login", nil))
	m := regexp.MustCompile(`<link rel="icon" href="(/ui/static/favicon\.svg\?v=[0-9a-f]+)"`).FindStringSubmatch(rec.Body.String())
	if m == nil {
		t.Fatalf("the sign-in page links no icon of the dashboard:\n%s", rec.Body)
	}
	icon := httptest.NewRecorder()
	h.ServeHTTP(icon, httptest.NewRequest(http.MethodGet, m[1], nil))
	if icon.Code != http.StatusOK || !strings.HasPrefix(icon.Header().Get("Content-Type"), "image/svg+xml") {
		t.Errorf("GET %s without a session = %d %q, want 200 image/svg+xml", m[1], icon.Code, icon.Header().Get("Content-Type"))
	}
}
