package scheduler_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// slowExecutor answers after 8 seconds, or when its context ends, and
// records the expected time of each request, as an offset from t0.
type slowExecutor struct {
	t0      time.Time
	mu      sync.Mutex
	got     []time.Duration
	started func(n int) // called as request n (from 0) arrives, when set
}

func (x *slowExecutor) Execute(ctx context.Context, req *action.Request) (*action.Result, error) {
	x.mu.Lock()
	n := len(x.got)
	x.got = append(x.got, req.ExpectedTime.Sub(x.t0))
	x.mu.Unlock()
	if x.started != nil {
		x.started(n)
	}
	select {
	case <-time.After(8 * time.Second):
		return &action.Result{Message: "ok"}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (x *slowExecutor) expected() []time.Duration {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]time.Duration(nil), x.got...)
}

// TestTakeoverCancelRunningMergesMissed: a job every 5 seconds whose
// action takes 8 (runPolicy.overlap CancelRunning, no retries) loses its
// instance in the middle of an attempt, and no instance runs for a
// minute. The instance that takes it over then records the occurrence
// whose attempt was lost as cancelled after its instance stopped (the
// occurrences after it came due), runs the next once for every
// occurrence missed meanwhile (runPolicy.missed RunOnce), all of them
// merged into it, including those less late than the recurrence interval,
// which under CancelRunning would cancel it before it ran.
func TestTakeoverCancelRunningMergesMissed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{InstanceID: "b"})
		coll := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
			Quota: &scheduler.Quota{MaxRecurrence: &scheduler.MaxRecurrence{Frequency: "Second", Interval: 1}}}}
		if _, err := e.s.PutCollection(ctx, "c", coll, nil); err != nil {
			t.Fatal(err)
		}
		e.put("j", jobJSON(e.t0.Add(5*time.Second), `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/hello", "method": "POST"},
			"retryPolicy": {"retryType": "None"}}, "recurrence": {"frequency": "Second", "interval": 5}, "runPolicy": {"overlap": "CancelRunning"}`))

		// Instance a runs the occurrences of 5s, 10s and 15s, and dies as
		// the attempt of 20s starts.
		crash := &crashingStore{Store: e.store}
		xa := &slowExecutor{t0: e.t0, started: func(n int) {
			if n == 3 {
				crash.dead.Store(true)
			}
		}}
		regA := &action.Registry{}
		regA.Register(action.HTTP, xa)
		cfgA := e.cfg
		cfgA.InstanceID, cfgA.Executors, cfgA.OnHistory = "a", regA, nil
		a, err := scheduler.New(crash, &cfgA)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(e.t0.Add(90 * time.Second)))
		synctest.Wait()
		if diff := cmp.Diff([]time.Duration{5 * time.Second, 10 * time.Second, 15 * time.Second, 20 * time.Second}, xa.expected()); diff != "" {
			t.Fatalf("instance a's attempts, by expected time (-want +got):\n%s", diff)
		}

		// Instance b starts at 90s, on the live store.
		xb := &slowExecutor{t0: e.t0}
		regB := &action.Registry{}
		regB.Register(action.HTTP, xb)
		e.cfg.Executors = regB
		e.s = e.newScheduler()
		e.start()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		e.stop()
		a.Stop(ctx)

		// 25s runs once for 25s..90s.
		if diff := cmp.Diff([]time.Duration{25 * time.Second}, xb.expected()); diff != "" {
			t.Errorf("instance b's attempts, by expected time (-want +got):\n%s", diff)
		}
		var ended []string
		for _, h := range e.history("j") {
			switch h.Status {
			case scheduler.StatusSkipped:
				if got, want := (skip{h.ExpectedExecutionTime.Sub(e.t0), h.LastExpectedTime.Sub(e.t0), h.Skipped, h.StartTime.Sub(e.t0)}),
					(skip{30 * time.Second, 90 * time.Second, 13, 90 * time.Second}); got != want || !strings.Contains(h.Message, "missed; the job ran once for them") {
					t.Errorf("Skipped entry %+v %q; want %+v, missed and run once", got, h.Message, want)
				}
			case scheduler.StatusFailed:
				if h.ExpectedExecutionTime.Sub(e.t0) >= 20*time.Second {
					ended = append(ended, h.ExpectedExecutionTime.Sub(e.t0).String()+": "+h.Message)
				}
			case scheduler.StatusCompleted:
				if h.ExpectedExecutionTime.Sub(e.t0) >= 20*time.Second {
					ended = append(ended, h.ExpectedExecutionTime.Sub(e.t0).String()+": Completed")
				}
			}
		}
		want := []string{
			// 25s ran, and ended on its own: b was stopping when 95s came due.
			"25s: Completed",
			"20s: cancelled: the instance that ran or was about to run its attempt stopped before recording the outcome, " +
				"and the occurrence expected at 2000-01-01T00:00:25Z came due meanwhile (runPolicy.overlap CancelRunning); an attempt lost is not counted",
		}
		if diff := cmp.Diff(want, ended); diff != "" {
			t.Errorf("entries of the occurrences that ended from 20s on, newest first (-want +got):\n%s", diff)
		}
	})
}
