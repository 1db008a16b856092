package http_test

import (
	"context"
	"fmt"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
)

// TestMain fails the run if connections or servers are left behind once
// every test has closed its servers and executors.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if leaks := waitNoLeaks(5 * time.Second); leaks != "" {
			fmt.Fprintf(os.Stderr, "goroutines left behind:\n%s\n", leaks)
			code = 1
		}
	}
	os.Exit(code)
}

// waitNoLeaks waits up to d for goroutines of HTTP clients and servers to
// end, and returns the stacks of those still running.
func waitNoLeaks(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var leaks []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "net/http.(*persistConn)") ||
				strings.Contains(g, "net/http.(*conn).serve") ||
				strings.Contains(g, "net/http/httptest.(*Server)") {
				leaks = append(leaks, g)
			}
		}
		if len(leaks) == 0 {
			return ""
		}
		if time.Now().After(deadline) {
			return strings.Join(leaks, "\n\n")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// newExecutor returns an executor closed when the test ends.
func newExecutor(t testing.TB, opts *httpaction.Options) *httpaction.Executor {
	t.Helper()
	ex := httpaction.New(opts)
	t.Cleanup(ex.Close)
	return ex
}

// newServer starts a loopback server closed when the test ends.
func newServer(t testing.TB, h nethttp.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

var expected = time.Date(2026, 11, 21, 22, 0, 0, 0, time.UTC)

// newRequest returns an attempt of an action of type Http with the given
// method and uri, and fixed scheduler metadata.
func newRequest(method, uri string) *action.Request {
	return &action.Request{
		Action: &action.Action{
			Type:    action.HTTP,
			Request: &action.HTTPRequest{URI: uri, Method: method},
		},
		IDs:          action.StaticIDs{Job: "reports/nightly", Tag: "tag-0001", ClientRequest: "req-0001"},
		CollectionID: "reports",
		ExpectedTime: expected,
		Occurrence:   3,
	}
}

// execute runs req with a background context.
func execute(t testing.TB, ex *httpaction.Executor, req *action.Request) (*action.Result, error) {
	t.Helper()
	return ex.Execute(context.Background(), req)
}

func readAll(t testing.TB, r io.Reader) string {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Errorf("reading body: %v", err)
	}
	return string(b)
}

// clientConns returns the stacks of goroutines of client connections.
func clientConns() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var conns []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "net/http.(*persistConn)") {
			conns = append(conns, g)
		}
	}
	return strings.Join(conns, "\n\n")
}
