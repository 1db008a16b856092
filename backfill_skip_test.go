package scheduler_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// TestBackfillAfterOutageUnderSkip: after an outage (no instance ran the
// loop), BackfillJob(Missing) over the outage runs the job's due next
// occurrence too when the loop's step would pass it over (missed Skip,
// later than the window), so that every occurrence of the range runs.
func TestBackfillAfterOutageUnderSkip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := memory.New()
		x := &slowJobs{}
		reg := &action.Registry{}
		reg.Register("Slow", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			x.mu.Lock()
			x.calls = append(x.calls, slowCall{req.ExpectedTime, req.IDs.ExecutionTag(), time.Now()})
			x.mu.Unlock()
			return &action.Result{Message: "done"}, nil
		}))
		s, err := scheduler.New(st, &scheduler.Config{Executors: reg, InstanceID: "a", Logger: discard})
		if err != nil {
			t.Fatal(err)
		}
		x.s = s
		if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		x.put(t, "hourly", 0, fmt.Sprintf(`, "startTime": %q, "recurrence": {"frequency": "Hour", "interval": 1}, "runPolicy": {"missed": "Skip"}`, t0.Add(time.Hour).Format(time.RFC3339)))
		// The outage: nothing steps the job for 5 hours.
		time.Sleep(5*time.Hour + 30*time.Minute)
		from, to := t0.Add(time.Hour), t0.Add(5*time.Hour)
		got, err := s.BackfillJob(ctx, "c", "hourly", from, to, nil)
		t.Logf("backfill answered %v, %v", got, err)
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Minute)
		if err := s.Stop(ctx); err != nil {
			t.Error(err)
		}
		ran := map[time.Time]bool{}
		for _, c := range x.attempts() {
			ran[c.Expected.UTC()] = true
		}
		for at := from; !at.After(to); at = at.Add(time.Hour) {
			if !ran[at.UTC()] {
				t.Errorf("occurrence %v never ran, though the backfill of the range asked for the missing ones", at)
			}
		}
	})
}
