package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
)

// TestServeDashboard runs "jobclock serve" with tokens: a browser that
// opens / is sent to /ui/, which asks it to sign in; a token limited to
// one subscription sees its collections and not another's; the REST API
// answers as before beside it.
func TestServeDashboard(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	dir := t.TempDir()
	const admin, limited = "admin-token-0123456789abcdef", "limited-token-0123456789abc"
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(admin+" *\n"+limited+" sub-a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, buildJobclock(t), "-addr", "127.0.0.1:0", "-tokens", tokens, "-db", filepath.Join(dir, "j.db"))
	ctx := context.Background()
	c := httpapi.NewClient(srv.url, &httpapi.ClientOptions{Token: admin})
	for _, sub := range []string{"sub-a", "sub-b"} {
		if _, _, err := c.PutCollection(ctx, httpapi.CollectionRef{Subscription: sub, ResourceGroup: "rg", Collection: "jc-of-" + sub}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}

	noFollow := browser()
	get := func(path, accept string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.url+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}

	res, _ := get("/", "text/html,application/xhtml+xml")
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/ui/" {
		t.Errorf("GET / from a browser = %d to %q, want 302 to /ui/", res.StatusCode, res.Header.Get("Location"))
	}
	res, body := get("/", "application/json")
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `"error"`) {
		t.Errorf("GET / from an API client = %d %s, want the API's 401", res.StatusCode, body)
	}
	res, _ = get("/ui/", "text/html")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/ui/login") {
		t.Fatalf("GET /ui/ signed out = %d to %q, want 303 to the sign-in page", res.StatusCode, res.Header.Get("Location"))
	}
	res = signInUI(t, noFollow, srv.url, limited, nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in = %d, want 303", res.StatusCode)
	}
	res, body = get("/ui/", "text/html")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "sub-a/rg/jc-of-sub-a") || strings.Contains(body, "jc-of-sub-b") {
		t.Errorf("overview for a token of sub-a = %d; want sub-a's collection and not sub-b's:\n%s", res.StatusCode, body)
	}
	res, _ = get("/ui/collections/"+url.PathEscape("sub-b/rg/jc-of-sub-b"), "text/html")
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("sub-b's collection page for a token of sub-a = %d, want 404", res.StatusCode)
	}
}

func TestServeBadSessionKey(t *testing.T) {
	t.Setenv(httpapi.TokensEnv, "")
	t.Setenv(SessionKeyEnv, "not hex")
	var out, errb bytes.Buffer
	if code := serveCmd([]string{"-addr", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "j.db")}, &out, &errb); code != 2 {
		t.Errorf("serve with a bad %s = %d, want 2", SessionKeyEnv, code)
	}
	if !strings.Contains(errb.String(), SessionKeyEnv+": want at least 64 hexadecimal digits") {
		t.Errorf("stderr = %q", errb.String())
	}
}

// TestServeSignInLimit runs "jobclock serve" with -signin-failures 2: two
// wrong tokens are answered 401, the third sign-in, with the right token,
// 429 with Retry-After (the budget refills one failure per
// -signin-window/2); with -no-signin-limit every wrong token is 401 and
// the right one signs in.
func TestServeSignInLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	bin := buildJobclock(t)
	for _, tc := range []struct {
		name    string
		args    []string
		limited bool
	}{
		{"limited", []string{"-signin-failures", "2", "-signin-window", "1h"}, true},
		{"unlimited", []string{"-signin-failures", "2", "-no-signin-limit"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tokens, token := writeTokens(t, dir)
			srv := startServe(t, bin, append([]string{"-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "j.db"), "-tokens", tokens}, tc.args...)...)
			client := browser()
			signIn := func(tok string) *http.Response {
				t.Helper()
				return signInUI(t, client, srv.url, tok, nil)
			}
			for i := range 5 {
				res := signIn("wrong-token-0123456789abcdef")
				want := http.StatusUnauthorized
				if tc.limited && i >= 2 {
					want = http.StatusTooManyRequests
				}
				if res.StatusCode != want {
					t.Fatalf("wrong token %d = %d, want %d", i+1, res.StatusCode, want)
				}
			}
			res := signIn(token)
			if tc.limited {
				if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
					t.Errorf("right token with the budget used up = %d, Retry-After %q; want 429 with Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
				}
			} else if res.StatusCode != http.StatusSeeOther {
				t.Errorf("right token = %d, want 303", res.StatusCode)
			}
			srv.stop(t)
		})
	}
}

// TestServeAuthFailuresShared runs "jobclock serve" with
// -signin-failures 2: the dashboard's sign-in form and the REST API count
// failed authentications in one budget, so two wrong tokens at one make
// the right token at the other 429, in either direction.
func TestServeAuthFailuresShared(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	bin := buildJobclock(t)
	for _, first := range []string{"api", "dashboard"} {
		t.Run("wrong at "+first, func(t *testing.T) {
			dir := t.TempDir()
			tokens, token := writeTokens(t, dir)
			srv := startServe(t, bin, "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "j.db"), "-tokens", tokens,
				"-signin-failures", "2", "-signin-window", "1h")
			client := browser()
			signIn := func(tok string) *http.Response {
				t.Helper()
				return signInUI(t, client, srv.url, tok, nil)
			}
			api := func(tok string) *http.Response {
				t.Helper()
				return listCollections(t, srv.url, tok, "")
			}
			wrong, right := api, signIn
			if first == "dashboard" {
				wrong, right = signIn, api
			}
			for i := range 2 {
				if res := wrong("wrong-token-0123456789abcdef"); res.StatusCode != http.StatusUnauthorized {
					t.Fatalf("wrong token %d at the %s = %d, want 401", i+1, first, res.StatusCode)
				}
			}
			if res := right(token); res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "1800" {
				t.Errorf("right token at the other surface = %d, Retry-After %q; want 429, 1800", res.StatusCode, res.Header.Get("Retry-After"))
			}
			srv.stop(t)
		})
	}
}

// TestServeNoCredentialsFree runs "jobclock serve" with -signin-failures
// 2: requests without a token, as a browser's for /favicon.ico or a load
// balancer's health check, take nothing from the budget of failed
// authentications, so the right token is still served after more of them
// than the budget holds; the dashboard's pages link an icon of their own,
// served without a session.
func TestServeNoCredentialsFree(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	dir := t.TempDir()
	tokens, token := writeTokens(t, dir)
	srv := startServe(t, buildJobclock(t), "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "j.db"), "-tokens", tokens,
		"-signin-failures", "2", "-signin-window", "1h")
	get := func(path string) (*http.Response, string) {
		t.Helper()
		res, err := http.Get(srv.url + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res, string(b)
	}
	for _, path := range []string{"/favicon.ico", "/", "/favicon.ico", "/subscriptions/sub-tls/providers/Microsoft.Scheduler/jobCollections?api-version=2016-03-01"} {
		if res, _ := get(path); res.StatusCode == http.StatusTooManyRequests {
			t.Fatalf("GET %s without a token = 429", path)
		}
	}
	if res := listCollections(t, srv.url, token, ""); res.StatusCode != http.StatusOK {
		t.Errorf("right token after 4 requests without one = %d, want 200", res.StatusCode)
	}
	_, page := get("/ui/login")
	m := regexp.MustCompile(`<link rel="icon" href="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the sign-in page links no icon:\n%s", page)
	}
	if res, _ := get(m[1]); res.StatusCode != http.StatusOK {
		t.Errorf("GET %s = %d, want 200", m[1], res.StatusCode)
	}
	srv.stop(t)
}

// TestServeOverallFailuresNoLockout runs "jobclock serve" with an overall
// budget of 2 failures per 2s and clients told apart by X-Forwarded-For
// (-trusted-proxies): once two clients' wrong tokens have used up the
// overall budget, a third client's right token is not refused but
// checked when its turn comes, at the API and at the sign-in form, and
// a fourth client's wrong token is still answered 401, not 429.
func TestServeOverallFailuresNoLockout(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	dir := t.TempDir()
	tokens, token := writeTokens(t, dir)
	srv := startServe(t, buildJobclock(t), "-addr", "127.0.0.1:0", "-db", filepath.Join(dir, "j.db"), "-tokens", tokens,
		"-trusted-proxies", "127.0.0.1", "-signin-failures-overall", "2", "-signin-window", "2s", "-signin-wait", "10s")
	api := func(tok, client string) int {
		t.Helper()
		return listCollections(t, srv.url, tok, client).StatusCode
	}
	const wrong = "wrong-token-0123456789abcdef"
	for _, client := range []string{"203.0.113.1", "203.0.113.2"} {
		if code := api(wrong, client); code != http.StatusUnauthorized {
			t.Fatalf("wrong token from %s = %d, want 401", client, code)
		}
	}
	if code := api(token, "203.0.113.3"); code != http.StatusOK {
		t.Errorf("right token from a new client once the overall budget is used up = %d, want 200", code)
	}
	if code := api(wrong, "203.0.113.4"); code != http.StatusUnauthorized {
		t.Errorf("wrong token from a new client once the overall budget is used up = %d, want 401", code)
	}

	res := signInUI(t, browser(), srv.url, token, http.Header{"X-Forwarded-For": {"203.0.113.5"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Errorf("sign-in with the right token from a new client once the overall budget is used up = %d, want 303", res.StatusCode)
	}
	srv.stop(t)
}

// browser returns a client that keeps cookies and does not follow
// redirects, as the dashboard's tests need to see them.
func browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// signInUI signs in to the dashboard of serve at base with token, as a
// browser does: it opens the sign-in form, reads its form token and
// posts it with the token, each request with the headers of header
// (which may be nil). The response's body is closed.
func signInUI(t *testing.T, client *http.Client, base, token string, header http.Header) *http.Response {
	t.Helper()
	send := func(req *http.Request) *http.Response {
		t.Helper()
		for k, v := range header {
			req.Header[k] = v
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/ui/login", nil)
	res := send(req)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("sign-in page has no form token:\n%s", b)
	}
	req, _ = http.NewRequest(http.MethodPost, base+"/ui/login", strings.NewReader(url.Values{"csrf": {m[1]}, "token": {token}, "next": {"/ui/"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	res = send(req)
	res.Body.Close()
	return res
}

// listCollections lists the collections of subscription sub-tls through
// the REST API of serve at base, with the bearer token tok and, unless
// it is empty, X-Forwarded-For: client. The response's body is read and
// closed.
func listCollections(t *testing.T, base, tok, client string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/subscriptions/sub-tls/providers/Microsoft.Scheduler/jobCollections?api-version=2016-03-01", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	if client != "" {
		req.Header.Set("X-Forwarded-For", client)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// TestServeSessionAcrossRestarts runs "jobclock serve" three times on one
// database with JOBCLOCK_SESSION_KEY set: a sign-in goes on after a
// restart with the same tokens; signing out ends it there, so that a
// copy of its cookie is sent to the sign-in page; started again with a
// tokens file without its token, the copy is refused at the pages (303)
// and at the actions (401, the job left as it was), as the API refuses
// the token.
func TestServeSessionAcrossRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	t.Setenv(httpapi.TokensEnv, "")
	t.Setenv(SessionKeyEnv, strings.Repeat("5a", 32))
	bin := buildJobclock(t)
	dir := t.TempDir()
	const admin, limited = "admin-token-0123456789abcdef", "limited-token-0123456789abc"
	tokens := filepath.Join(dir, "tokens")
	writeList := func(list string) {
		if err := os.WriteFile(tokens, []byte(list), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeList(admin + " *\n" + limited + " sub-a\n")
	db := filepath.Join(dir, "j.db")
	srv := startServe(t, bin, "-addr", "127.0.0.1:0", "-tokens", tokens, "-db", db)
	ctx := context.Background()
	api := httpapi.NewClient(srv.url, &httpapi.ClientOptions{Token: admin})
	ref := httpapi.CollectionRef{Subscription: "sub-a", ResourceGroup: "rg", Collection: "c"}
	if _, _, err := api.PutCollection(ctx, ref, nil, nil); err != nil {
		t.Fatal(err)
	}
	def := `{"properties": {"action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "Day"}, "startTime": "` + time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339) + `"}}`
	if _, _, err := api.PutJobJSON(ctx, ref, "j", []byte(def), nil); err != nil {
		t.Fatal(err)
	}
	client := browser()
	if res := signInUI(t, client, srv.url, limited, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in = %d, want 303", res.StatusCode)
	}
	u, _ := url.Parse(srv.url + "/ui/")
	copied := client.Jar.Cookies(u)
	// replay sends a GET of the overview and a POST that disables the job
	// with the copied cookie and the given form token.
	replay := func(base, csrf string) (get, post int) {
		t.Helper()
		do := func(req *http.Request) int {
			for _, c := range copied {
				req.AddCookie(c)
			}
			res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			return res.StatusCode
		}
		req, _ := http.NewRequest(http.MethodGet, base+"/ui/", nil)
		get = do(req)
		req, _ = http.NewRequest(http.MethodPost, base+"/ui/collections/"+url.PathEscape("sub-a/rg/c")+"/jobs/j/disable",
			strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		post = do(req)
		return get, post
	}
	srv.stop(t)

	srv = startServe(t, bin, "-addr", "127.0.0.1:0", "-tokens", tokens, "-db", db)
	res, err := client.Get(srv.url + "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(string(body))
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("signed in before a restart with the same tokens and key: GET /ui/ = %d, want 200 with a form", res.StatusCode)
	}
	csrf := m[1]
	req, _ := http.NewRequest(http.MethodPost, srv.url+"/ui/logout", strings.NewReader(url.Values{"csrf": {csrf}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if res, err = client.Do(req); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out = %d, want 303", res.StatusCode)
	}
	if get, post := replay(srv.url, csrf); get != http.StatusSeeOther || post != http.StatusUnauthorized {
		t.Errorf("copy of the signed-out session: GET = %d, POST disable = %d; want 303, 401", get, post)
	}
	srv.stop(t)

	writeList(admin + " *\n")
	srv = startServe(t, bin, "-addr", "127.0.0.1:0", "-tokens", tokens, "-db", db)
	if res := listCollections(t, srv.url, limited, ""); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("API with the removed token = %d, want 401", res.StatusCode)
	}
	if get, post := replay(srv.url, csrf); get != http.StatusSeeOther || post != http.StatusUnauthorized {
		t.Errorf("copy of a session whose token was removed: GET = %d, POST disable = %d; want 303, 401", get, post)
	}
	j, err := httpapi.NewClient(srv.url, &httpapi.ClientOptions{Token: admin}).GetJob(ctx, ref, "j")
	if err != nil {
		t.Fatal(err)
	}
	if j.Properties.State != scheduler.JobEnabled {
		t.Errorf("job after refused POSTs is %s, want Enabled", j.Properties.State)
	}
	srv.stop(t)
}

// TestServeReadOnlyToken runs "jobclock serve" with a token marked
// read-only in the tokens file: the API lets it read and answers its
// writes 403; the dashboard signs it in, shows the job without the
// buttons that change it, and answers its actions 403; the job stays
// as it was.
func TestServeReadOnlyToken(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	t.Setenv(httpapi.TokensEnv, "")
	dir := t.TempDir()
	const admin, viewer = "admin-token-0123456789abcdef", "viewer-token-0123456789abcd"
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(admin+" *\n"+viewer+" sub-a read-only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, buildJobclock(t), "-addr", "127.0.0.1:0", "-tokens", tokens, "-db", filepath.Join(dir, "j.db"))
	ctx := context.Background()
	ref := httpapi.CollectionRef{Subscription: "sub-a", ResourceGroup: "rg", Collection: "c"}
	def := `{"properties": {"action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "Day"}, "startTime": "` + time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339) + `"}}`
	adminAPI := httpapi.NewClient(srv.url, &httpapi.ClientOptions{Token: admin})
	if _, _, err := adminAPI.PutCollection(ctx, ref, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := adminAPI.PutJobJSON(ctx, ref, "j", []byte(def), nil); err != nil {
		t.Fatal(err)
	}
	viewerAPI := httpapi.NewClient(srv.url, &httpapi.ClientOptions{Token: viewer})
	if _, err := viewerAPI.GetJob(ctx, ref, "j"); err != nil {
		t.Errorf("read-only token reading the job: %v", err)
	}
	var apiErr *httpapi.ResponseError
	if _, err := viewerAPI.PatchJob(ctx, ref, "j", []byte(`{"properties": {"state": "Disabled"}}`), nil); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusForbidden {
		t.Errorf("read-only token disabling the job over the API: %v, want 403", err)
	}

	client := browser()
	if res := signInUI(t, client, srv.url, viewer, nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in = %d, want 303", res.StatusCode)
	}
	jobPage := srv.url + "/ui/collections/" + url.PathEscape("sub-a/rg/c") + "/jobs/j"
	res, err := client.Get(jobPage)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(string(body))
	if res.StatusCode != http.StatusOK || m == nil || strings.Contains(string(body), `id="disable"`) || strings.Contains(string(body), `id="run-now"`) {
		t.Fatalf("job page for the read-only token = %d; want 200 with a form token and no Disable or Run now button:\n%s", res.StatusCode, body)
	}
	req, _ := http.NewRequest(http.MethodPost, jobPage+"/disable", strings.NewReader(url.Values{"csrf": {m[1]}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if res, err = client.Do(req); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("read-only token disabling the job in the dashboard = %d, want 403", res.StatusCode)
	}
	j, err := adminAPI.GetJob(ctx, ref, "j")
	if err != nil {
		t.Fatal(err)
	}
	if j.Properties.State != scheduler.JobEnabled {
		t.Errorf("job after the refused changes is %s, want Enabled", j.Properties.State)
	}
	srv.stop(t)
}
