package httpapi_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/dashboard"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// TestNilTokenAuthIsNoAuthentication mounts the API and the dashboard as
// the README does, with what LoadTokenAuth returns when no tokens are
// configured: both are open, as with a nil Authenticator.
func TestNilTokenAuthIsNoAuthentication(t *testing.T) {
	t.Setenv(httpapi.TokensEnv, "")
	auth, err := httpapi.LoadTokenAuth("")
	if err != nil || auth != nil {
		t.Fatalf("LoadTokenAuth(\"\") = %v, %v; want nil, nil", auth, err)
	}
	s, err := scheduler.New(memory.New(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	failures := httpapi.NewAuthFailures(nil)
	mux := http.NewServeMux()
	mux.Handle("/subscriptions/", httpapi.New(s, &httpapi.Options{Authenticator: auth, AuthFailures: failures}))
	mux.Handle("/ui/", dashboard.New(s, &dashboard.Options{Prefix: "/ui", Authenticator: auth, AuthFailures: failures}))

	for _, tc := range []struct {
		name, path string
		header     string
	}{
		{"api", "/subscriptions/sub1/providers/Microsoft.Scheduler/jobCollections?api-version=2016-03-01", ""},
		{"api with a bearer token", "/subscriptions/sub1/providers/Microsoft.Scheduler/jobCollections?api-version=2016-03-01", "Bearer some-token-0123456789"},
		{"dashboard", "/ui/", ""},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", tc.path, nil)
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		mux.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Errorf("%s: GET %s = %d (Location %q), want 200", tc.name, tc.path, rec.Code, rec.Header().Get("Location"))
		}
	}
}

// TestNilTokenAuthKnowsNoToken: called directly, a nil *TokenAuth refuses
// every request instead of panicking.
func TestNilTokenAuthKnowsNoToken(t *testing.T) {
	var a *httpapi.TokenAuth
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer some-token-0123456789")
	if p, err := a.Authenticate(r); p != nil || !errors.Is(err, httpapi.ErrUnauthenticated) {
		t.Errorf("nil TokenAuth: Authenticate = %v, %v; want an error matching ErrUnauthenticated", p, err)
	}
}
