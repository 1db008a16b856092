package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/sqlite"
)

// TestRunKeepsJobsInDatabase runs a job with -db and then reads the
// database directly: the job, its final state and its history are there.
func TestRunKeepsJobsInDatabase(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "jobs.db")
	job := writeRunFile(t, dir, "ping.json", `{"action": {"type": "Http", "request": {"uri": "`+srv.URL+`/ping", "method": "GET"}}}`)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if code := runScheduler(ctx, nil, []string{"-db", db, "-history=false", job}, &stdout, &stderr); code != 0 {
		t.Fatalf("run -db = %d, stderr:\n%s", code, stderr.String())
	}

	st, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		t.Fatalf("sqlite.Open(%s): %v", db, err)
	}
	defer st.Close()
	r, err := st.GetJob(ctx, "default", "ping")
	if err != nil {
		t.Fatalf("GetJob(default/ping) after run: %v", err)
	}
	if r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 1 {
		t.Errorf("stored job: state %s, executionCount %d; want Completed, 1", r.State, r.Status.ExecutionCount)
	}
	hist, err := st.ListHistory(ctx, "default", "ping", scheduler.HistoryFilter{})
	if err != nil {
		t.Fatalf("ListHistory: %v", err)
	}
	if len(hist) != 1 || hist[0].Status != scheduler.StatusCompleted {
		t.Errorf("stored history = %+v, want one Completed entry", hist)
	}
}

func TestRunRejectsTwoStores(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := runScheduler(context.Background(), nil, []string{"-db", "x.db", "-postgres", "postgres://x", "job.json"}, &stdout, &stderr); code != 2 {
		t.Errorf("run -db -postgres = %d, want 2 (stderr %q)", code, stderr.String())
	}
}
