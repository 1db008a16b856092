package scheduler_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/store/memory"
)

// panicky is an Observer whose TookOver, StartAttempt, EndAttempt and
// HistoryStored panic.
type panicky struct{ traceParent }

func (panicky) TookOver(scheduler.Takeover) { panic("TookOver fails") }
func (panicky) StartAttempt(context.Context, scheduler.Attempt) context.Context {
	panic("StartAttempt fails")
}
func (panicky) EndAttempt(context.Context, scheduler.AttemptEnd) { panic("EndAttempt fails") }
func (panicky) HistoryStored(scheduler.StoredHistory)            { panic("HistoryStored fails") }

// TestObserverPanicRecovered: an Observer whose methods panic does not take
// the Scheduler down: b takes over the lease of a job x let expire
// (TookOver, StartAttempt, EndAttempt and HistoryStored panic), then runs
// another job (all but TookOver panic again); both attempts run and their
// outcomes are recorded, and the log has one error per method that
// panicked, naming it, not one per panic.
func TestObserverPanicRecovered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := memory.New()
		var runs atomic.Int64
		var log syncbuf.Buffer
		cfg := scheduler.Config{Executors: countingRegistry(&runs), LeaseDuration: 10 * time.Second, Observer: panicky{},
			Logger: slog.New(slog.NewJSONHandler(&log, nil))}
		b := instances(t, st, cfg, "b")[0]
		ctx := context.Background()
		due := time.Now().Add(10 * time.Second)
		putClaimed(t, b, st, "x", due, due.Add(time.Second))
		other, err := scheduler.ParseJob([]byte(oneTimeAt(due.Add(5*time.Second))), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.PutJob(ctx, "c", "k", other, nil); err != nil {
			t.Fatal(err)
		}
		if err := b.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer b.Stop(ctx)
		time.Sleep(time.Until(due.Add(10 * time.Second)))
		synctest.Wait()
		if n := runs.Load(); n != 2 {
			t.Errorf("%d attempts ran, want 2", n)
		}
		for _, name := range []string{"j", "k"} {
			if r, err := b.GetJob(ctx, "c", name); err != nil || r.State != scheduler.JobCompleted || r.LeaseOwner != "" {
				t.Errorf("job %s after its attempt: %v, %v; want completed, its outcome recorded", name, r, err)
			}
		}
		errs := map[string]int{}
		for line := range strings.Lines(log.String()) {
			var r map[string]any
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			if r["level"] == "ERROR" && strings.Contains(r["msg"].(string), "Observer") {
				m, _ := r["method"].(string)
				if p, _ := r["panic"].(string); p != m+" fails" {
					t.Errorf("error of method %s logs panic %q, want %q", m, p, m+" fails")
				}
				errs[m]++
			}
		}
		want := map[string]int{"TookOver": 1, "StartAttempt": 1, "EndAttempt": 1, "HistoryStored": 1}
		if diff := cmp.Diff(want, errs); diff != "" {
			t.Errorf("errors logged by method (-want +got):\n%s\nlog:\n%s", diff, log.String())
		}
	})
}
