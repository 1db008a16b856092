package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
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
	"github.com/jobclock/scheduler/store/postgres"
)

// privateServer starts a PostgreSQL server of the test's own with
// scripts/start-postgres.sh, so that the test can stop and start it while
// the shared one serves other tests. It returns the server's address and
// a function that runs its postgres.ctl (stop or start).
func privateServer(t *testing.T) (string, func(verb string)) {
	t.Helper()
	dsn(t) // skips, or fails with CI=true, when PostgreSQL is not installed and started
	// Not t.TempDir: the postgres user must be able to reach the cluster.
	state, err := os.MkdirTemp("", "jobclock-pg-restart-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(state) })
	if err := os.Chmod(state, 0o755); err != nil {
		t.Fatal(err)
	}
	start := exec.Command("bash", "../../scripts/start-postgres.sh", state)
	var stderr bytes.Buffer
	start.Stderr = &stderr
	out, err := start.Output()
	if err != nil {
		t.Fatalf("start-postgres.sh: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { exec.Command("bash", filepath.Join(state, "postgres.stop")).Run() })
	addr := ""
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "export JOBCLOCK_POSTGRES_DSN="); ok {
			addr = strings.Trim(v, "'")
		}
	}
	if addr == "" {
		t.Fatalf("start-postgres.sh printed no DSN: %q", out)
	}
	return addr, func(verb string) {
		t.Helper()
		if out, err := exec.Command("bash", filepath.Join(state, "postgres.ctl"), verb).CombinedOutput(); err != nil {
			t.Fatalf("postgres.ctl %s: %v\n%s", verb, err, out)
		}
	}
}

// TestSchedulerSurvivesRestart restarts the PostgreSQL server under a
// running Scheduler at its default settings while attempts are in flight
// and occurrences come due: every occurrence runs exactly once and is
// recorded once, the attempts that ended while the server was away are
// recorded when it is back rather than run again, and the log says when
// the store stopped answering and when it answered again.
func TestSchedulerSurvivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and restarts a PostgreSQL server")
	}
	addr, ctl := privateServer(t)
	st, err := postgres.Open(ctx, addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	type hit struct {
		job, tag string
		expected string
	}
	var mu sync.Mutex
	var hits []hit
	const delay = 2 * time.Second
	rv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, hit{r.Header.Get(httpaction.HeaderJobID), r.Header.Get(httpaction.HeaderExecutionTag),
			r.Header.Get(httpaction.HeaderExpectedExecutionTime)})
		mu.Unlock()
		time.Sleep(delay)
		io.WriteString(w, "ok")
	}))
	defer rv.Close()

	var log syncbuf.Buffer
	s, err := scheduler.New(st, &scheduler.Config{InstanceID: "a",
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	// Jobs come due one per 400ms from first on, for 12 seconds: before,
	// during and after the server is away.
	const jobs = 30
	if _, err := s.PutCollection(ctx, scheduler.DefaultCollection, &scheduler.JobCollection{}, nil); err != nil {
		t.Fatal(err)
	}
	first := time.Now().Add(3 * time.Second).Truncate(time.Second)
	for i := range jobs {
		start := first.Add(time.Duration(i) * 400 * time.Millisecond)
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

	// Stop the server 3.5s in, while attempts are in flight, and start
	// it again 5s later.
	time.Sleep(time.Until(first.Add(3500 * time.Millisecond)))
	ctl("stop")
	stoppedAt := time.Now()
	if err := s.Ready(ctx); err == nil {
		t.Error("Ready succeeded while the server was stopped")
	}
	time.Sleep(5 * time.Second)
	ctl("start")
	t.Logf("server away for %s", time.Since(stoppedAt).Round(time.Millisecond))

	// Every job's first occurrence runs and is recorded.
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
	runs := make(map[string][]hit)
	for _, h := range hits {
		runs[h.job] = append(runs[h.job], h)
	}
	for i := range jobs {
		name := fmt.Sprintf("j%02d", i)
		id := scheduler.DefaultCollection + "/" + name
		hist, err := st.ListHistory(ctx, scheduler.DefaultCollection, name, scheduler.HistoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs[id]) != 1 {
			t.Errorf("%s ran %d times, want once: %+v", id, len(runs[id]), runs[id])
			continue
		}
		if len(hist) != 1 || hist[0].Status != scheduler.StatusCompleted || hist[0].ExecutionTag != runs[id][0].tag {
			t.Errorf("%s history = %+v, want one Completed entry with tag %s", id, hist, runs[id][0].tag)
		}
	}
	text := log.String()
	for _, want := range []string{"the store does not answer", "the store answers again", "recorded job outcome after the store failed"} {
		if !strings.Contains(text, want) {
			t.Errorf("the log does not say %q:\n%s", want, text)
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("log:\n%s", text)
	}
}
