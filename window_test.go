package scheduler_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
)

// TestWindowThroughEngine runs a job spread over 15 minutes on two
// Schedulers that share a store. Each occurrence runs once, at its planned
// instant (pinned here, computed apart from the product with FNV-1a and
// fmix64 for c/spread: see recurrence's package documentation), which is the
// expected time its executor gets (the x-ms-scheduler-expected-execution-time
// header of an HTTP action) and history records; it starts at that
// instant, so it is not late.
func TestWindowThroughEngine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		other := e.newScheduler()
		if err := other.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		defer other.Stop(context.Background())
		e.start()
		defer e.stop()
		r := e.put("spread", jobJSON(date("2000-01-01T01:00:00Z"),
			`"recurrence": {"frequency": "Hour", "schedule": {"minutes": [0]}, "window": "PT15M", "count": 3}`))
		want := []time.Time{date("2000-01-01T01:14:26Z"), date("2000-01-01T02:13:11Z"), date("2000-01-01T03:11:13Z")}
		if !r.Schedule.NextOccurrence.Equal(want[0]) {
			t.Errorf("NextOccurrence = %v, want the first planned instant %v", r.Schedule.NextOccurrence, want[0])
		}
		time.Sleep(time.Until(date("2000-01-01T04:00:00Z")))
		synctest.Wait()

		var expected, called []time.Time
		for _, req := range e.exec.requests() {
			expected = append(expected, req.ExpectedTime)
		}
		for _, d := range e.exec.times(e.t0) {
			called = append(called, e.t0.Add(d))
		}
		eq := cmp.Comparer(time.Time.Equal)
		if !cmp.Equal(want, expected, eq) {
			t.Errorf("expected times the executor got = %v, want %v", expected, want)
		}
		if !cmp.Equal(want, called, eq) {
			t.Errorf("the executor ran at %v, want %v", called, want)
		}
		var hist []time.Time
		for _, h := range e.history("spread") { // newest first
			hist = append([]time.Time{h.ExpectedExecutionTime}, hist...)
			if late := h.StartTime.Sub(h.ExpectedExecutionTime); late != 0 {
				t.Errorf("occurrence %d started %v after its expected time %v", h.RepeatCount, late, h.ExpectedExecutionTime)
			}
		}
		if !cmp.Equal(want, hist, eq) {
			t.Errorf("history's expected times = %v, want %v", hist, want)
		}
	})
}

// TestPutJobCronHash puts the same spec with H as two jobs: each is
// stored with its own minute (recurrence's TestCronHashPinned pins 18 for
// reports/nightly and 42 for reports/hourly) and runs at it, while
// ParseJob, which knows no job, leaves the minutes out.
func TestPutJobCronHash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		if _, err := e.s.PutCollection(ctx, "reports", nil, nil); err != nil {
			t.Fatal(err)
		}
		def, err := scheduler.ParseJob([]byte(jobJSON(time.Time{}, `"recurrence": {"cron": "H * * * *", "schedule": {"minutes": [7]}}`)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if def.Recurrence.Schedule != nil && len(def.Recurrence.Schedule.Minutes) != 0 {
			t.Errorf("ParseJob kept minutes %v next to H; want them left out", def.Recurrence.Schedule.Minutes)
		}
		for name, minute := range map[string]int{"nightly": 18, "hourly": 42} {
			r, err := e.s.PutJob(ctx, "reports", name, def, nil)
			if err != nil {
				t.Fatalf("PutJob(%s): %v", name, err)
			}
			if got := r.Job.Recurrence.Schedule.Minutes; !cmp.Equal(got, []int{minute}) {
				t.Errorf("%s stored with minutes %v, want [%d]", name, got, minute)
			}
			want := time.Now().Truncate(time.Hour).Add(time.Duration(minute) * time.Minute)
			if !want.After(time.Now()) {
				want = want.Add(time.Hour)
			}
			if !r.Schedule.NextOccurrence.Equal(want) {
				t.Errorf("%s: NextOccurrence = %v, want %v", name, r.Schedule.NextOccurrence, want)
			}
		}
	})
}

// TestWindowCatchUp starts the scheduler 30 seconds after a spread
// occurrence's planned instant (01:14:26 for c/spread, 14 minutes after
// its scheduled 01:00), with a catch-up window of a minute: lateness counts
// from the planned instant, so the occurrence runs, 30 seconds late;
// counted from the scheduled instant it would be skipped.
func TestWindowCatchUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.put("spread", jobJSON(date("2000-01-01T01:00:00Z"),
			`"recurrence": {"frequency": "Hour", "schedule": {"minutes": [0]}, "window": "PT15M", "count": 1}, "runPolicy": {"catchUpWindow": "PT1M"}`))
		planned := date("2000-01-01T01:14:26Z")
		time.Sleep(time.Until(planned.Add(30 * time.Second)))
		e.start()
		defer e.stop()
		time.Sleep(time.Minute)
		synctest.Wait()
		h := e.history("spread")
		if len(h) != 1 || h[0].Status != scheduler.StatusCompleted || !h[0].ExpectedExecutionTime.Equal(planned) {
			t.Fatalf("history = %+v, want one Completed entry expected at %v", h, planned)
		}
		if late := h[0].StartTime.Sub(h[0].ExpectedExecutionTime); late != 30*time.Second {
			t.Errorf("started %v after its planned instant, want 30s", late)
		}
	})
}

// TestWindowQuota: a collection whose plan allows a job every hour takes
// an hourly job spread over 15 minutes, although two of its planned
// instants can lie less than an hour apart.
func TestWindowQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		free := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{SKU: &scheduler.SKU{Name: scheduler.SKUFree}}}
		if _, err := e.s.PutCollection(ctx, "free", free, nil); err != nil {
			t.Fatal(err)
		}
		job, err := scheduler.ParseJob([]byte(jobJSON(time.Time{}, `"recurrence": {"frequency": "Hour", "schedule": {"minutes": [0]}, "window": "PT15M"}`)), nil)
		if err != nil {
			t.Fatal(err)
		}
		// reports/nightly runs at 00:07:55, 01:02:28, ... (recurrence's
		// TestWindowPinned): 54 minutes 33 seconds apart.
		if _, err := e.s.PutJob(ctx, "free", "nightly", job, nil); err != nil {
			t.Errorf("PutJob(hourly, spread) in a Free collection: %v", err)
		}
		job.Recurrence.Schedule.Minutes = []int{0, 30}
		if _, err := e.s.PutJob(ctx, "free", "twice", job, nil); !errors.Is(err, scheduler.ErrQuotaExceeded) {
			t.Errorf("PutJob(twice an hour) in a Free collection = %v, want ErrQuotaExceeded", err)
		}
	})
}
