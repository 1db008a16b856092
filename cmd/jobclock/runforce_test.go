package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/sqlite"
)

// TestRunSecondSignalForcesTheExit interrupts "jobclock run" while an
// attempt is held by a receiver that answers only when the request is
// cancelled: after the first SIGINT run waits for the attempt; a second
// one cancels it, and run exits 1, saying so, with the cancelled attempt
// stored as a failure and the job's lease released.
func TestRunSecondSignalForcesTheExit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	arrived := make(chan struct{}, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	defer receiver.Close()

	dir := t.TempDir()
	db := filepath.Join(dir, "jobs.db")
	job := writeRunFile(t, dir, "held.json", fmt.Sprintf(`{"action": {"type": "Http", "request": {"uri": %q, "method": "GET"}}}`, receiver.URL))
	cmd := exec.Command(buildJobclock(t), "run", "-db", db, job)
	stderr := new(syncBuffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatalf("the attempt did not reach the receiver; stderr:\n%s", stderr)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	eventually(t, "run says it waits for the attempts", func() error {
		if !strings.Contains(stderr.String(), "waiting for attempts in flight") {
			return errors.New("not yet")
		}
		return nil
	})
	select {
	case err := <-done:
		t.Fatalf("run exited (%v) after one signal with an attempt in flight; stderr:\n%s", err, stderr)
	default:
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		done <- err // for the cleanup
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("run exited with %v after a second SIGINT, want exit status 1; stderr:\n%s", err, stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("run did not exit after a second SIGINT; stderr:\n%s", stderr)
	}
	if !strings.Contains(stderr.String(), "second signal") {
		t.Errorf("run does not say that a second signal cancelled the attempts; stderr:\n%s", stderr)
	}

	ctx := context.Background()
	st, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		t.Fatalf("the database does not open after the forced exit: %v", err)
	}
	defer st.Close()
	r, err := st.GetJob(ctx, scheduler.DefaultCollection, "held")
	if err != nil {
		t.Fatal(err)
	}
	if r.LeaseOwner != "" {
		t.Errorf("the job is still leased by %q after the forced exit", r.LeaseOwner)
	}
	h, err := st.ListHistory(ctx, scheduler.DefaultCollection, "held", scheduler.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || h[0].Status != scheduler.StatusFailed {
		t.Errorf("history after the forced exit = %+v, want the cancelled attempt as one Failed entry", h)
	}
}
