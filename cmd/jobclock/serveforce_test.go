package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/postgres"
	"github.com/jobclock/scheduler/store/sqlite"
)

// TestServeSecondSignalForcesTheExit sends SIGTERM to serve while an
// attempt is held by a receiver that answers only when the request is
// cancelled: during the drain the API serves reads and answers a write
// 503 with Retry-After and a message saying serve is shutting down; a
// second SIGTERM makes serve cancel the attempt, log that the exit is
// forced and exit 1, with the cancelled attempt stored as a failure and
// the job's lease released in a database that opens again.
func TestServeSecondSignalForcesTheExit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	db := filepath.Join(t.TempDir(), "jobclock.db")
	testServeSecondSignal(t, []string{"-db", db}, func() (scheduler.Store, error) {
		return sqlite.Open(context.Background(), db, nil)
	})
}

// TestServeSecondSignalForcesTheExitPostgres is
// TestServeSecondSignalForcesTheExit on PostgreSQL, in a schema of its
// own; it needs JOBCLOCK_POSTGRES_DSN.
func TestServeSecondSignalForcesTheExitPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	dsn := os.Getenv("JOBCLOCK_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("JOBCLOCK_POSTGRES_DSN is not set")
		}
		t.Skip("JOBCLOCK_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	schema := fmt.Sprintf("serveforce_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	})
	testServeSecondSignal(t, []string{"-postgres", dsn, "-schema", schema}, func() (scheduler.Store, error) {
		return postgres.Open(ctx, dsn, &postgres.Options{Schema: schema})
	})
}

func testServeSecondSignal(t *testing.T, dbFlags []string, open func() (scheduler.Store, error)) {
	arrived := make(chan struct{}, 1)
	cancelled := make(chan struct{}, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-r.Context().Done() // the attempt's cancellation closes the connection
		select {
		case cancelled <- struct{}{}:
		default:
		}
	}))
	defer receiver.Close()

	srv := startServe(t, buildJobclock(t), append([]string{"-addr", "127.0.0.1:0", "-shutdown-timeout", "10m", "-v"}, dbFlags...)...)
	ctx := context.Background()
	c := httpapi.NewClient(srv.url, nil)
	ref := httpapi.CollectionRef{Subscription: "sub", ResourceGroup: "rg", Collection: "jc"}
	if _, _, err := c.PutCollection(ctx, ref, nil, nil); err != nil {
		t.Fatal(err)
	}
	job := fmt.Sprintf(`{"properties": {"action": {"type": "Http", "request": {"uri": %q, "method": "GET"}}}}`, receiver.URL)
	if _, _, err := c.PutJobJSON(ctx, ref, "held", json.RawMessage(job), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatalf("the attempt did not reach the receiver; stderr:\n%s", srv.stderr)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	eventually(t, "/readyz answers 503 after SIGTERM", func() error {
		if code, _, body, err := getStatus(srv.url + "/readyz"); err != nil || code != http.StatusServiceUnavailable {
			return fmt.Errorf("/readyz = %d %q, %v", code, body, err)
		}
		return nil
	})

	jobURL := srv.url + "/subscriptions/sub/resourceGroups/rg/providers/Microsoft.Scheduler/jobCollections/jc/jobs/held"
	if code, _, body, err := getStatus(jobURL + "/history?api-version=2016-03-01"); err != nil || code != http.StatusOK {
		t.Errorf("GET history while draining = %d %q, %v; want 200", code, body, err)
	}
	for _, method := range []string{http.MethodPut, http.MethodDelete, http.MethodPost} {
		u := jobURL + "?api-version=2016-03-01"
		if method == http.MethodPost {
			u = jobURL + "/run?api-version=2016-03-01"
		}
		req, err := http.NewRequest(method, u, strings.NewReader(job))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s while draining: %v", method, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e httpapi.ErrorResponse
		json.Unmarshal(b, &e)
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "5" ||
			e.Error.Code != httpapi.CodeServiceUnavailable || !strings.Contains(e.Error.Message, "shutting down") {
			t.Errorf("%s while draining = %d, Retry-After %q, %s; want 503, Retry-After 5, ServiceUnavailable saying serve is shutting down",
				method, resp.StatusCode, resp.Header.Get("Retry-After"), b)
		}
	}

	select {
	case err := <-srv.done:
		t.Fatalf("serve exited (%v) after one signal with an attempt in flight; stderr:\n%s", err, srv.stderr)
	default:
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-srv.done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("serve exited with %v after a second SIGTERM, want exit status 1; stderr:\n%s", err, srv.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not exit after a second SIGTERM; stderr:\n%s", srv.stderr)
	}
	select {
	case <-cancelled:
	default:
		t.Errorf("the receiver's request was not cancelled")
	}
	for _, want := range []string{"second signal: forcing the exit", "exiting before the drain ended"} {
		if !strings.Contains(srv.stderr.String(), want) {
			t.Errorf("the log has no %q; stderr:\n%s", want, srv.stderr)
		}
	}

	st, err := open()
	if err != nil {
		t.Fatalf("the database does not open after the forced exit: %v", err)
	}
	defer st.(interface{ Close() error }).Close()
	r, err := st.GetJob(ctx, "sub/rg/jc", "held")
	if err != nil {
		t.Fatal(err)
	}
	if r.LeaseOwner != "" {
		t.Errorf("the job is still leased by %q after the forced exit", r.LeaseOwner)
	}
	h, err := st.ListHistory(ctx, "sub/rg/jc", "held", scheduler.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || h[0].Status != scheduler.StatusFailed {
		t.Errorf("history after the forced exit = %+v, want the cancelled attempt as one Failed entry", h)
	}
}
