package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/sqlite"
)

// TestSchedulerSurvivesFullDatabase fills the database file up to its
// limit (max_page_count, as a full disk would) under a running Scheduler
// while attempts are in flight and occurrences come due, then frees space:
// writes meanwhile fail with an error that says the database is full, the
// Scheduler resumes once there is space again, every occurrence runs and is
// recorded exactly once, and the file passes SQLite's integrity check.
func TestSchedulerSurvivesFullDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for about 20 seconds")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jobclock.db")
	// Every connection of the pool, the store's writer among them, may
	// grow the file to 2 MiB at most (512 pages of 4 KiB).
	db, err := sql.Open("sqlite", path+"?_pragma=max_page_count(512)&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := sqlite.New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	var mu sync.Mutex
	runs := make(map[string][]string) // job ID: execution tags
	rv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		id := r.Header.Get(httpaction.HeaderJobID)
		runs[id] = append(runs[id], r.Header.Get(httpaction.HeaderExecutionTag))
		mu.Unlock()
		time.Sleep(time.Second)
		io.WriteString(w, "ok")
	}))
	defer rv.Close()
	var log syncbuf.Buffer
	s, err := scheduler.New(st, &scheduler.Config{InstanceID: "a",
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, scheduler.DefaultCollection, &scheduler.JobCollection{}, nil); err != nil {
		t.Fatal(err)
	}
	const jobs = 30
	first := time.Now().Add(2 * time.Second).Truncate(time.Second)
	for i := range jobs {
		start := first.Add(time.Duration(i) * 300 * time.Millisecond)
		def := &scheduler.Job{StartTime: &start,
			Action:     action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: rv.URL, Method: "POST"}},
			Recurrence: &recurrence.Recurrence{Frequency: recurrence.Minute, Interval: 1}}
		if _, err := s.PutJob(ctx, scheduler.DefaultCollection, fmt.Sprintf("j%02d", i), def, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(context.Background())

	// Fill the file 2s in, while attempts are in flight.
	time.Sleep(time.Until(first.Add(2 * time.Second)))
	if _, err := db.ExecContext(ctx, "CREATE TABLE filler (b BLOB)"); err != nil {
		t.Fatal(err)
	}
	// In a few statements, so that the file is full at once while most
	// occurrences are still to come (one row a statement took seconds on
	// a busy machine, by when the occurrences had all been recorded): a
	// statement that finds the file full writes none of its rows, so
	// smaller ones fill what is left.
	var full error
	for _, rows := range []int{100, 10, 1} {
		for range 2000 {
			if _, full = db.ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < ?)
				INSERT INTO filler SELECT randomblob(2000) FROM n`, rows); full != nil {
				break
			}
		}
		if full == nil || !strings.Contains(full.Error(), "full") {
			t.Fatalf("filling the file with %d rows a statement: %v, want a full database", rows, full)
		}
	}
	// Writes through the API fail, saying why.
	start := time.Now().Add(time.Hour)
	_, perr := s.PutJob(ctx, scheduler.DefaultCollection, "late", &scheduler.Job{StartTime: &start,
		Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: rv.URL, Method: "POST",
			Body: strings.Repeat("x", 8000)}}, // so that the write needs pages
	}, nil)
	if !errors.Is(perr, sqlite.ErrFull) || !strings.Contains(perr.Error(), "database is full") {
		t.Errorf("PutJob on a full database = %v, want an error saying the database is full (ErrFull)", perr)
	}
	// Until a write of the Scheduler has found the file full (the last
	// occurrence comes due 9s after the first), and at least 4s.
	wait := time.Now().Add(4 * time.Second)
	for until := first.Add(jobs*300*time.Millisecond + 10*time.Second); time.Now().Before(wait) ||
		!strings.Contains(log.String(), "database is full") && time.Now().Before(until); {
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := db.ExecContext(ctx, "DROP TABLE filler"); err != nil {
		t.Fatalf("free the space: %v", err)
	}

	deadline := time.Now().Add(45 * time.Second)
	for {
		done := 0
		for i := range jobs {
			h, err := st.ListHistory(ctx, scheduler.DefaultCollection, fmt.Sprintf("j%02d", i), scheduler.HistoryFilter{})
			if err == nil && len(h) > 0 {
				done++
			}
		}
		if done == jobs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 45s, %d of %d jobs have history; log:\n%s", done, jobs, log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.Stop(sctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range jobs {
		name := fmt.Sprintf("j%02d", i)
		id := scheduler.DefaultCollection + "/" + name
		hist, err := st.ListHistory(ctx, scheduler.DefaultCollection, name, scheduler.HistoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs[id]) != 1 {
			t.Errorf("%s ran %d times, want once: %v", id, len(runs[id]), runs[id])
			continue
		}
		if len(hist) != 1 || hist[0].Status != scheduler.StatusCompleted || hist[0].ExecutionTag != runs[id][0] {
			t.Errorf("%s history = %+v, want one Completed entry with tag %s", id, hist, runs[id][0])
		}
	}
	var check string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v; want ok", check, err)
	}
	text := log.String()
	if !strings.Contains(text, "database is full") {
		t.Errorf("the log does not say that the database is full:\n%s", text)
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("log:\n%s", text)
	}
}
