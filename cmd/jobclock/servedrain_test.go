package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jobclock/scheduler/httpapi"
)

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// getStatus returns the status, the Retry-After header and the body of a GET of
// url, or the error of the request (a refused connection).
func getStatus(url string) (int, string, string, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b), nil
}

// send makes a request of method to url with body and returns the
// answer, its body read, or the error of the request.
func send(method, url, contentType, body string) (*http.Response, string, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b), nil
}

// TestServeDrainsBehindALoadBalancer sends SIGTERM to serve while an
// attempt of a job is in flight at a receiver that holds it: until the
// receiver answers, /readyz answers 503 saying serve is shutting down (on
// -addr and on -metrics-addr), the API's and the dashboard's reads 200,
// their writes the drain's own 503 (it takes no more writes, with
// Retry-After and Connection: close, which the Scheduler's 503 after Stop
// does not have), /healthz and /metrics 200; once the attempt ended serve
// closes its listeners and exits 0.
func TestServeDrainsBehindALoadBalancer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-release
		w.Write([]byte("done"))
	}))
	defer receiver.Close()
	defer close(release)

	metrics := freeAddr(t)
	srv := startServe(t, buildJobclock(t), "-addr", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "jobclock.db"),
		"-metrics-addr", metrics, "-shutdown-timeout", "60s", "-v")
	ctx := context.Background()
	c := httpapi.NewClient(srv.url, nil)
	ref := httpapi.CollectionRef{Subscription: "sub", ResourceGroup: "rg", Collection: "jc"}
	if _, _, err := c.PutCollection(ctx, ref, nil, nil); err != nil {
		t.Fatal(err)
	}
	job := fmt.Sprintf(`{"properties": {"action": {"type": "Http", "request": {"uri": %q, "method": "GET"}}}}`, receiver.URL)
	if _, _, err := c.PutJobJSON(ctx, ref, "slow", json.RawMessage(job), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatalf("the attempt did not reach the receiver; stderr:\n%s", srv.stderr)
	}
	if code, _, body, err := getStatus(srv.url + "/readyz"); err != nil || code != http.StatusOK {
		t.Fatalf("/readyz before SIGTERM = %d %q, %v; want 200", code, body, err)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	eventually(t, "/readyz answers 503 after SIGTERM", func() error {
		code, _, body, err := getStatus(srv.url + "/readyz")
		if err != nil {
			return err
		}
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "shutting down") {
			return fmt.Errorf("/readyz = %d %q", code, body)
		}
		return nil
	})
	checks := []struct {
		url        string
		code       int
		retryAfter string
		body       string
	}{
		{srv.url + "/readyz", http.StatusServiceUnavailable, "", "shutting down"},
		{srv.url + "/healthz", http.StatusOK, "", "ok"},
		{srv.url + "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc/jobs/slow?api-version=2016-03-01",
			http.StatusOK, "", `"name":"jc/slow"`},
		{srv.url + "/ui/", http.StatusOK, "", "sub/rg/jc"},
		{"http://" + metrics + "/readyz", http.StatusServiceUnavailable, "", "shutting down"},
		{"http://" + metrics + "/healthz", http.StatusOK, "", "ok"},
		{"http://" + metrics + "/metrics", http.StatusOK, "", ""},
	}
	for _, ch := range checks {
		code, retryAfter, body, err := getStatus(ch.url)
		if err != nil || code != ch.code || retryAfter != ch.retryAfter || !strings.Contains(body, ch.body) {
			t.Errorf("GET %s while draining = %d, Retry-After %q, %q, %v; want %d, Retry-After %q, a body with %q",
				ch.url, code, retryAfter, body, err, ch.code, ch.retryAfter, ch.body)
		}
	}
	writes := []struct {
		method, url, contentType, body string
		wantType                       string
	}{
		{http.MethodPut, srv.url + "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc/jobs/other?api-version=2016-03-01",
			"application/json", job, "application/json"},
		{http.MethodDelete, srv.url + "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc/jobs/slow?api-version=2016-03-01",
			"", "", "application/json"},
		{http.MethodPost, srv.url + "/ui/edit/job", "application/x-www-form-urlencoded",
			"collection=sub%2Frg%2Fjc&job=other&mode=json&definition=%7B%7D", "text/plain"},
	}
	// The client takes the Connection header out of the answer and
	// says whether the connection closes in resp.Close.
	for _, w := range writes {
		resp, body, err := send(w.method, w.url, w.contentType, w.body)
		if err != nil {
			t.Errorf("%s %s while draining: %v", w.method, w.url, err)
			continue
		}
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != fmt.Sprint(drainRetryAfter) ||
			!resp.Close || !strings.HasPrefix(resp.Header.Get("Content-Type"), w.wantType) || !strings.Contains(body, "takes no more writes") {
			t.Errorf("%s %s while draining = %d, Retry-After %q, Content-Type %q, closes %v, %q; want 503, Retry-After %d, %s, Connection: close, a body with %q",
				w.method, w.url, resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"), resp.Close, body,
				drainRetryAfter, w.wantType, "takes no more writes")
		}
	}
	select {
	case err := <-srv.done:
		t.Fatalf("serve exited (%v) with an attempt in flight; stderr:\n%s", err, srv.stderr)
	default:
	}
	release <- struct{}{}
	select {
	case err := <-srv.done:
		if err != nil {
			t.Fatalf("serve exited with %v; stderr:\n%s", err, srv.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not exit once the attempt ended; stderr:\n%s", srv.stderr)
	}
	for _, u := range []string{srv.url + "/healthz", "http://" + metrics + "/healthz"} {
		if _, _, _, err := getStatus(u); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("GET %s after exit: %v, want a refused connection", u, err)
		}
	}
	if !strings.Contains(srv.stderr.String(), `"status":"Completed"`) && !strings.Contains(srv.stderr.String(), "status=Completed") {
		t.Errorf("the log has no Completed attempt of the drained job; stderr:\n%s", srv.stderr)
	}
}
