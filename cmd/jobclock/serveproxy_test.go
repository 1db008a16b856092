package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
)

// TestTrustedProxiesClient: a request from a trusted proxy comes from the
// rightmost address of X-Forwarded-For that is not a trusted proxy; the
// header of any other peer, and one without a usable address on its
// right, changes nothing.
func TestTrustedProxiesClient(t *testing.T) {
	var p trustedProxies
	if err := p.set("10.0.0.0/8, 192.0.2.1,2001:db8::/32"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"untrusted peer", "198.51.100.1:4000", []string{"203.0.113.9"}, "198.51.100.1:4000"},
		{"trusted peer, one hop", "10.1.2.3:4000", []string{"203.0.113.9"}, "203.0.113.9:0"},
		{"trusted single address", "192.0.2.1:4000", []string{"203.0.113.9"}, "203.0.113.9:0"},
		{"a client's own entry is not believed", "10.1.2.3:4000", []string{"1.2.3.4, 203.0.113.9"}, "203.0.113.9:0"},
		{"trusted proxies in the chain are skipped", "10.1.2.3:4000", []string{"203.0.113.9, 10.9.9.9"}, "203.0.113.9:0"},
		{"several header lines, in order", "10.1.2.3:4000", []string{"1.2.3.4", "203.0.113.9, 10.0.0.7"}, "203.0.113.9:0"},
		{"no header", "10.1.2.3:4000", nil, "10.1.2.3:4000"},
		{"garbage on the right", "10.1.2.3:4000", []string{"203.0.113.9, unknown"}, "10.1.2.3:4000"},
		{"garbage on the left", "10.1.2.3:4000", []string{"<script>, 203.0.113.9"}, "203.0.113.9:0"},
		{"IPv6", "[2001:db8::1]:4000", []string{"2001:db9::5"}, "[2001:db9::5]:0"},
		{"IPv4 in IPv6", "[::ffff:10.1.2.3]:4000", []string{"::ffff:203.0.113.9"}, "203.0.113.9:0"},
		{"only proxies", "10.1.2.3:4000", []string{"10.0.0.1, 10.0.0.2"}, "10.0.0.1:0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			h := p.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.RemoteAddr }))
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
			if got != tt.want {
				t.Errorf("RemoteAddr = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestServeTrustedProxies runs "jobclock serve" with -signin-failures 2:
// with -trusted-proxies naming the loopback address the tests connect
// from, two clients behind it (told apart by X-Forwarded-For) have a
// budget each; without it the header is not believed, and the two share
// the budget of the connection's address.
func TestServeTrustedProxies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	bin := buildJobclock(t)
	for _, tc := range []struct {
		name    string
		args    []string
		trusted bool
	}{
		{"trusted", []string{"-trusted-proxies", "127.0.0.1"}, true},
		{"not trusted", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tokens, token := writeTokens(t, dir)
			srv := startServe(t, bin, append([]string{"-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "j.db"), "-tokens", tokens,
				"-signin-failures", "2", "-signin-window", "1h"}, tc.args...)...)
			api := func(tok, client string) int {
				t.Helper()
				return listCollections(t, srv.url, tok, client).StatusCode
			}
			for i := range 2 {
				if code := api("wrong-token-0123456789abcdef", "203.0.113.1"); code != http.StatusUnauthorized {
					t.Fatalf("wrong token %d = %d, want 401", i+1, code)
				}
			}
			if code := api(token, "203.0.113.1"); code != http.StatusTooManyRequests {
				t.Errorf("right token from the guessing client = %d, want 429", code)
			}
			want := http.StatusOK
			if !tc.trusted {
				want = http.StatusTooManyRequests
			}
			if code := api(token, "203.0.113.2"); code != want {
				t.Errorf("right token from another client behind the proxy = %d, want %d", code, want)
			}
			srv.stop(t)
		})
	}
}
