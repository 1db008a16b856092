package telemetry_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
)

// TestLimitWait: two jobs due at once in a collection limited to 2
// attempts a minute: the second waits 30 s for the rate. It counts in
// jobclock.limit.waits and jobclock.limit.wait under the key of the limit,
// and the wait is not lateness: jobclock.occurrence.lateness sums to 0.
// The limits' store calls count in jobclock.store.operation.duration.
func TestLimitWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOtel()
		e := newEnv(t, o.config(scheduler.Config{InstanceID: "a"}))
		if _, err := e.s.PutCollection(context.Background(), "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
			Limits: []scheduler.Limit{{Key: scheduler.LimitCollection, RatePerMinute: 2}}}}, nil); err != nil {
			t.Fatal(err)
		}
		e.start()
		e.put("a", jobJSON(e.t0, ""))
		e.put("b", jobJSON(e.t0, ""))
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		e.stop()
		got := pick(o.metrics(t), "jobclock.limit.waits", "jobclock.limit.wait", "jobclock.occurrence.lateness")
		want := map[string][]point{
			"jobclock.limit.waits":         {{Attrs: "jobclock.limit.key=collection", Value: 1}},
			"jobclock.limit.wait":          {{Attrs: "jobclock.limit.key=collection", Count: 1, Sum: 30}},
			"jobclock.occurrence.lateness": {{Attrs: "jobclock.action.type=Http", Count: 2, Sum: 0}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("metrics (-want +got):\n%s", diff)
		}
		// The store calls of the limits are measured with the others:
		// three takes (one refused), and no give-back: a rate's starts
		// are not given back.
		counts := map[string]uint64{}
		for _, p := range o.metrics(t)["jobclock.store.operation.duration"] {
			counts[p.Attrs] = p.Count
		}
		wantCounts := map[string]uint64{"jobclock.store.operation=AcquirePermits": 3, "jobclock.store.operation=ReleasePermits": 0}
		for k, n := range wantCounts {
			if counts[k] != n {
				t.Errorf("jobclock.store.operation.duration{%s} counts %d calls, want %d", k, counts[k], n)
			}
		}
	})
}

// TestPermitsLost: an attempt that ended with its permits lost counts in
// jobclock.limit.permits_lost; one that failed otherwise does not.
func TestPermitsLost(t *testing.T) {
	o := newOtel()
	obs := o.config(scheduler.Config{}).Observer
	ctx := context.Background()
	obs.EndAttempt(ctx, scheduler.AttemptEnd{End: time.Now(), Err: context.Canceled, ErrorType: "*errors.errorString", PermitsLost: true})
	obs.EndAttempt(ctx, scheduler.AttemptEnd{End: time.Now(), Err: context.Canceled, ErrorType: "*errors.errorString"})
	got := pick(o.metrics(t), "jobclock.limit.permits_lost")
	want := map[string][]point{"jobclock.limit.permits_lost": {{Value: 1}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}
