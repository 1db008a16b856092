package main

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/sqlite"
)

// TestServeWarnsOfAGoProgramsJobs starts serve on a SQLite file in which a
// Go program scheduled a function (ScheduleFunc), a job of an action type
// of its own registry (Schedule) and an HTTP job: serve's log warns once
// at start, naming the first two and their types, not the HTTP job.
func TestServeWarnsOfAGoProgramsJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	db := filepath.Join(t.TempDir(), "jobclock.db")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	type report struct{ To string }
	reg := new(action.Registry)
	rep := action.Handle(reg, "Report", func(ctx context.Context, req *action.Request, r report) error { return nil })
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg})
	if err != nil {
		t.Fatal(err)
	}
	hourly := recurrence.Every(1, recurrence.Hour)
	if _, err := s.ScheduleFunc(ctx, "cleanup", hourly, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Schedule(ctx, "nightly-report", hourly, rep.Action(report{To: "ops"})); err != nil {
		t.Fatal(err)
	}
	web := action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://127.0.0.1:1/", Method: "GET"}}
	if _, err := s.Schedule(ctx, "ping", hourly, web); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()

	srv := startServe(t, buildJobclock(t), "-addr", "127.0.0.1:0", "-db", db)
	// serve warns before it logs that it serves without authentication;
	// its stderr is copied to srv.stderr apart from its stdout, on which
	// startServe waited for where it listens.
	eventually(t, "serve logs that it serves without authentication", func() error {
		if !strings.Contains(srv.stderr.String(), "serving without authentication") {
			return errors.New("not yet")
		}
		return nil
	})
	var line string
	for _, l := range strings.Split(srv.stderr.String(), "\n") {
		if strings.Contains(l, "cannot run") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("serve did not warn of the Go program's jobs; stderr:\n%s", srv.stderr)
	}
	for _, re := range []string{`jobs="cleanup, nightly-report"`, `action_types="Func, Report"`, `collection=default`} {
		if !regexp.MustCompile(regexp.QuoteMeta(re)).MatchString(line) {
			t.Errorf("the warning has no %s: %s", re, line)
		}
	}
	if strings.Contains(line, "ping") {
		t.Errorf("the warning names the HTTP job, which serve runs: %s", line)
	}
}
