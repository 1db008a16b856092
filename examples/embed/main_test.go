package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/schedulertest"
)

// TestService runs the service on a loopback port: the heartbeat job
// calls its webhook at once, the HTTP endpoints show the job and its
// history, and a run request runs it again.
func TestService(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan *scheduler.Scheduler, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, ln, slog.New(slog.DiscardHandler), func(s *scheduler.Scheduler) { started <- s })
	}()
	var sched *scheduler.Scheduler
	select {
	case sched = <-started:
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	base := "http://" + ln.Addr().String()
	s := schedulertest.Wrap(t, sched)
	s.Timeout = 30 * time.Second

	r := s.WaitRuns("service", "heartbeat", 1)
	if r == nil || r.Status.FailureCount != 0 {
		t.Fatalf("heartbeat after its first run: %+v", r)
	}
	var hist []scheduler.HistoryEntry
	getJSON(t, base+"/jobs/heartbeat/history", http.StatusOK, &hist)
	if len(hist) != 1 || hist[0].Status != scheduler.StatusCompleted || !strings.Contains(hist[0].Message, "204 No Content") {
		t.Errorf("history = %+v, want one Completed attempt answered No Content", hist)
	}
	var def scheduler.Job
	getJSON(t, base+"/jobs/heartbeat", http.StatusOK, &def)
	if def.Action.Request == nil || def.Action.Request.URI != base+"/webhook" || def.Status == nil || def.Status.ExecutionCount != 1 {
		t.Errorf("job = %+v", def)
	}
	getJSON(t, base+"/jobs/nope", http.StatusNotFound, nil)

	resp, err := http.Post(base+"/jobs/heartbeat/run", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("POST run = %d, want 202", resp.StatusCode)
	}
	s.WaitRuns("service", "heartbeat", 2)

	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve after shutdown: %v", err)
	}
}

func getJSON(t *testing.T, url string, status int, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != status {
		t.Fatalf("GET %s = %d, want %d", url, resp.StatusCode, status)
	}
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
}
