package httpapi_test

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// guarded returns a handler with token authentication, no request
// budget and the given budget of failed authentications.
func guarded(t *testing.T, f *httpapi.AuthFailures) http.Handler {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	auth, err := httpapi.NewTokenAuth(tokenA + " sub1\n" + tokenB + " sub1")
	if err != nil {
		t.Fatal(err)
	}
	return httpapi.New(s, &httpapi.Options{Logger: log, Authenticator: auth, AuthFailures: f,
		Throttle: &httpapi.Throttle{Disabled: true}})
}

const listPath = "/subscriptions/sub1/providers/Microsoft.Scheduler/jobCollections?api-version=2016-03-01"

// TestAuthFailureLimitHTTP: over HTTP, wrong tokens from one client beyond
// its budget are answered 429 TooManyRequests in ARM's error shape with
// Retry-After, and so is the right token (not checked), while a caller
// with the right token from another address is served.
func TestAuthFailureLimitHTTP(t *testing.T) {
	srv := httptest.NewServer(guarded(t, httpapi.NewAuthFailures(&httpapi.AuthFailureLimit{PerAddress: 3, Window: time.Hour})))
	defer srv.Close()
	get := func(token string) (*http.Response, httpapi.ErrorDetail) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+listPath, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body httpapi.ErrorResponse
		if res.StatusCode >= 400 {
			if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
				t.Fatalf("error body: %v", err)
			}
		}
		io.Copy(io.Discard, res.Body)
		return res, body.Error
	}
	for i := range 3 {
		if res, e := get("wrong-token-" + strconv.Itoa(i) + "-0123456789"); res.StatusCode != http.StatusUnauthorized || e.Code != httpapi.CodeAuthenticationFailed {
			t.Fatalf("wrong token %d = %d %s, want 401 AuthenticationFailed", i+1, res.StatusCode, e.Code)
		}
	}
	for _, token := range []string{"wrong-token-more-0123456789", tokenA} {
		res, e := get(token)
		if res.StatusCode != http.StatusTooManyRequests || e.Code != httpapi.CodeTooManyRequests {
			t.Fatalf("request beyond the budget = %d %s, want 429 TooManyRequests", res.StatusCode, e.Code)
		}
		if got := res.Header.Get("Retry-After"); got != "1200" { // an hour / 3
			t.Errorf("Retry-After = %q, want 1200", got)
		}
		if want := "Too many failed authentications; the credentials were not checked. Please try again in 20 minutes."; e.Message != want {
			t.Errorf("429 message = %q, want %q", e.Message, want)
		}
	}
}

// TestAuthFailureLimit: the budget is per address (an IPv6 client's /64),
// a request that authenticates takes nothing of it, and it refills over
// the window; with the limit disabled every wrong token is 401.
func TestAuthFailureLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := guarded(t, httpapi.NewAuthFailures(&httpapi.AuthFailureLimit{PerAddress: 2, Window: time.Minute}))
		for i := range 2 {
			if rec := call(h, "GET", listPath, "wrong-token-0123456789abcdef", "[2001:db8::"+strconv.Itoa(i+1)+"]:5000"); rec.Code != http.StatusUnauthorized {
				t.Fatalf("wrong token %d = %d, want 401", i+1, rec.Code)
			}
		}
		if rec := call(h, "GET", listPath, tokenA, "[2001:db8::ff]:5000"); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "30" {
			t.Fatalf("right token from the same /64 = %d, Retry-After %q; want 429, 30", rec.Code, rec.Header().Get("Retry-After"))
		}
		if rec := call(h, "GET", listPath, tokenA, "[2001:db8:0:1::1]:5000"); rec.Code != http.StatusOK {
			t.Fatalf("right token from another /64 = %d, want 200", rec.Code)
		}
		time.Sleep(30 * time.Second)
		for i := range 3 {
			if rec := call(h, "GET", listPath, tokenA, "[2001:db8::1]:5000"); rec.Code != http.StatusOK {
				t.Fatalf("right token %d after 30s = %d, want 200 (a success takes nothing)", i+1, rec.Code)
			}
		}
		if rec := call(h, "GET", listPath, "wrong-token-0123456789abcdef", "[2001:db8::1]:5000"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("wrong token after 30s = %d, want 401", rec.Code)
		}
		if rec := call(h, "GET", listPath, tokenA, "[2001:db8::1]:5000"); rec.Code != http.StatusTooManyRequests {
			t.Fatalf("right token with the budget used up again = %d, want 429", rec.Code)
		}

		off := guarded(t, httpapi.NewAuthFailures(&httpapi.AuthFailureLimit{PerAddress: 2, Disabled: true}))
		for i := range 20 {
			if rec := call(off, "GET", listPath, "wrong-token-0123456789abcdef", "192.0.2.1:5000"); rec.Code != http.StatusUnauthorized {
				t.Fatalf("disabled: wrong token %d = %d, want 401", i+1, rec.Code)
			}
		}
	})
}

// TestAuthFailuresShared: two handlers given one AuthFailures count
// failures in one budget.
func TestAuthFailuresShared(t *testing.T) {
	f := httpapi.NewAuthFailures(&httpapi.AuthFailureLimit{PerAddress: 2, Window: time.Hour})
	a, b := guarded(t, f), guarded(t, f)
	const addr = "192.0.2.9:5000"
	if rec := call(a, "GET", listPath, "wrong-token-0123456789abcdef", addr); rec.Code != http.StatusUnauthorized {
		t.Fatalf("wrong token at a = %d, want 401", rec.Code)
	}
	if rec := call(b, "GET", listPath, "wrong-token-0123456789abcdef", addr); rec.Code != http.StatusUnauthorized {
		t.Fatalf("wrong token at b = %d, want 401", rec.Code)
	}
	for name, h := range map[string]http.Handler{"a": a, "b": b} {
		if rec := call(h, "GET", listPath, tokenA, addr); rec.Code != http.StatusTooManyRequests {
			t.Errorf("right token at %s after two failures across both = %d, want 429", name, rec.Code)
		}
	}
}

// BenchmarkAuthenticate measures what the budget of failed
// authentications adds to a request that authenticates: TokenAuth alone,
// then through AuthFailures.
func BenchmarkAuthenticate(b *testing.B) {
	auth, err := httpapi.NewTokenAuth(tokenA + " sub1")
	if err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, listPath, nil)
	r.RemoteAddr = "192.0.2.1:1234"
	r.Header.Set("Authorization", "Bearer "+tokenA)
	b.Run("token", func(b *testing.B) {
		for b.Loop() {
			if _, err := auth.Authenticate(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("budgeted", func(b *testing.B) {
		f := httpapi.NewAuthFailures(nil)
		for b.Loop() {
			if _, err := f.Authenticate(r, auth); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestAuthFailuresOverall: once failures from many addresses have used up
// the overall budget, requests from other addresses wait their turn in
// one line, in order of arrival, and each is checked when the budget has
// room (every 10s here), right and wrong tokens alike; one that would
// wait beyond Wait is refused 429 unchecked; an address that
// authenticated before is served at once meanwhile.
func TestAuthFailuresOverall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := guarded(t, httpapi.NewAuthFailures(&httpapi.AuthFailureLimit{PerAddress: 10, Overall: 3, Window: 30 * time.Second, Wait: 25 * time.Second}))
		const operator = "198.51.100.7:7000"
		if rec := call(h, "GET", listPath, tokenB, operator); rec.Code != http.StatusOK {
			t.Fatalf("operator = %d, want 200", rec.Code)
		}
		const wrong = "wrong-token-0123456789abcdef"
		for i := range 3 {
			if rec := call(h, "GET", listPath, wrong, "192.0.2."+strconv.Itoa(i)+":5000"); rec.Code != http.StatusUnauthorized {
				t.Fatalf("wrong token %d = %d, want 401", i+1, rec.Code)
			}
		}
		start := time.Now()
		type answer struct {
			code       int
			retryAfter string
			at         time.Duration
		}
		line := []struct {
			token string
			want  answer
		}{
			{wrong, answer{http.StatusUnauthorized, "", 10 * time.Second}},
			{tokenA, answer{http.StatusOK, "", 20 * time.Second}},
			{wrong, answer{http.StatusUnauthorized, "", 20 * time.Second}}, // the success gave its failure back
			{wrong, answer{http.StatusTooManyRequests, "25", 20 * time.Second}},
		}
		got := make([]answer, len(line))
		var wg sync.WaitGroup
		for i, l := range line {
			wg.Go(func() {
				rec := call(h, "GET", listPath, l.token, "203.0.113."+strconv.Itoa(i)+":6000")
				got[i] = answer{rec.Code, rec.Header().Get("Retry-After"), time.Since(start)}
			})
			synctest.Wait() // in line before the next one comes
		}
		if rec := call(h, "GET", listPath, tokenB, operator); rec.Code != http.StatusOK || time.Since(start) != 0 {
			t.Errorf("operator while others wait = %d after %v, want 200 at once", rec.Code, time.Since(start))
		}
		wg.Wait()
		for i, l := range line {
			if got[i] != l.want {
				t.Errorf("request %d in line = %+v, want %+v", i+1, got[i], l.want)
			}
		}
	})
}

// TestAuthFailuresNoCredentials: requests without credentials (a
// browser's /favicon.ico, a health check) are answered 401 at once and
// take nothing from the budget, even beyond it, so the address's valid
// token is still served; a request with a wrong token does count. An
// Authenticator that cannot tell which requests present credentials has
// every refusal counted.
func TestAuthFailuresNoCredentials(t *testing.T) {
	h := guarded(t, httpapi.NewAuthFailures(&httpapi.AuthFailureLimit{PerAddress: 2, Window: time.Hour}))
	const addr = "192.0.2.20:5000"
	for i := range 5 {
		if rec := call(h, "GET", "/favicon.ico", "", addr); rec.Code != http.StatusUnauthorized {
			t.Fatalf("request %d without credentials = %d, want 401", i+1, rec.Code)
		}
	}
	if rec := call(h, "GET", listPath, tokenA, addr); rec.Code != http.StatusOK {
		t.Fatalf("right token after 5 requests without credentials = %d, want 200", rec.Code)
	}
	for i := range 2 {
		if rec := call(h, "GET", listPath, "wrong-token-0123456789abcdef", addr); rec.Code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d = %d, want 401", i+1, rec.Code)
		}
	}
	if rec := call(h, "GET", listPath, tokenA, addr); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("right token after 2 wrong ones = %d, want 429", rec.Code)
	}
	if rec := call(h, "GET", "/favicon.ico", "", addr); rec.Code != http.StatusUnauthorized {
		t.Fatalf("request without credentials beyond the budget = %d, want 401", rec.Code)
	}

	f := httpapi.NewAuthFailures(&httpapi.AuthFailureLimit{PerAddress: 2, Window: time.Hour})
	plain := httpapi.AuthenticatorFunc(func(r *http.Request) (*httpapi.Principal, error) {
		if r.Header.Get("Authorization") == "Bearer "+tokenA {
			return &httpapi.Principal{Name: "a"}, nil
		}
		return nil, httpapi.ErrUnauthenticated
	})
	for range 2 {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = addr
		if _, err := f.Authenticate(r, plain); !errors.Is(err, httpapi.ErrUnauthenticated) {
			t.Fatalf("AuthenticatorFunc without credentials: %v, want ErrUnauthenticated", err)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = addr
	r.Header.Set("Authorization", "Bearer "+tokenA)
	var tooMany *httpapi.TooManyFailuresError
	if _, err := f.Authenticate(r, plain); !errors.As(err, &tooMany) {
		t.Fatalf("AuthenticatorFunc: right token after 2 refusals: %v, want *TooManyFailuresError", err)
	}
}

// TestAuthFailuresKnownBounded: failures from known addresses (where a
// token authenticated, any token) take from an overall budget of their
// own, so a token holder who makes many addresses known cannot guess
// from them beyond it: once it and the overall budget are used up, a
// known address waits in the line as others do, right token included
// (refused here, since the next turn is beyond Wait).
func TestAuthFailuresKnownBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := guarded(t, httpapi.NewAuthFailures(&httpapi.AuthFailureLimit{PerAddress: 10, Overall: 3, Window: 30 * time.Second, Wait: 5 * time.Second}))
		addr := func(i int) string { return "198.51.100." + strconv.Itoa(i) + ":7000" }
		for i := range 7 {
			if rec := call(h, "GET", listPath, tokenB, addr(i)); rec.Code != http.StatusOK {
				t.Fatalf("token from address %d = %d, want 200", i, rec.Code)
			}
		}
		const wrong = "wrong-token-0123456789abcdef"
		for i := range 6 { // 3 of the known addresses' budget, 3 of the overall one
			if rec := call(h, "GET", listPath, wrong, addr(i)); rec.Code != http.StatusUnauthorized {
				t.Fatalf("wrong token %d from a known address = %d, want 401", i+1, rec.Code)
			}
		}
		if rec := call(h, "GET", listPath, wrong, addr(6)); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "5" {
			t.Errorf("wrong token from a known address beyond both budgets = %d, Retry-After %q; want 429, 5", rec.Code, rec.Header().Get("Retry-After"))
		}
		if rec := call(h, "GET", listPath, tokenA, addr(6)); rec.Code != http.StatusTooManyRequests {
			t.Errorf("right token from a known address beyond both budgets = %d, want 429", rec.Code)
		}
		time.Sleep(10 * time.Second) // one failure's worth of each budget
		if rec := call(h, "GET", listPath, tokenA, addr(6)); rec.Code != http.StatusOK {
			t.Errorf("right token from a known address once the budget refilled = %d, want 200", rec.Code)
		}
	})
}
