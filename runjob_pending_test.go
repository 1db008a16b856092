package scheduler_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/tracectx"
)

// callerTrace is an observer that gives RunJob the trace context its
// caller's ctx carries (under callerTraceKey), and notes the trace
// context each attempt starts in.
type callerTrace struct {
	traceParent
	mu      sync.Mutex
	started []string
}

type callerTraceKey struct{}

func (o *callerTrace) TraceParent(ctx context.Context) (string, string) {
	p, _ := ctx.Value(callerTraceKey{}).(string)
	return p, ""
}

func (o *callerTrace) StartAttempt(ctx context.Context, _ scheduler.Attempt) context.Context {
	p, _ := tracectx.Parent(ctx)
	o.mu.Lock()
	o.started = append(o.started, p)
	o.mu.Unlock()
	return ctx
}

// TestRunNowDuringScheduledRunKeepsItsRequest: runs requested while a
// scheduled occurrence's attempt runs run once after it, as the first of
// them was asked for: expected at its request's time and traced under its
// caller's span. The later requests do not move it to their own time and
// trace.
func TestRunNowDuringScheduledRunKeepsItsRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs := &callerTrace{}
		e := newEnv(t, scheduler.Config{Observer: obs})
		e.exec.fn = func(_ *action.Request, n int) error {
			if n == 0 {
				time.Sleep(30 * time.Second) // the scheduled occurrence's attempt
			}
			return nil
		}
		e.put("j", jobJSON(e.t0.Add(time.Minute), "")) // one occurrence, at 1m
		e.start()
		defer e.stop()
		const first = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		const second = "00-11111111111111111111111111111111-2222222222222222-01"
		time.Sleep(time.Minute + 5*time.Second)
		if _, err := e.s.RunJob(context.WithValue(context.Background(), callerTraceKey{}, first), "c", "j"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second)
		r, err := e.s.RunJob(context.WithValue(context.Background(), callerTraceKey{}, second), "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		if want := e.t0.Add(time.Minute + 5*time.Second); !r.Schedule.RunRequested.Equal(want) || r.Schedule.RunTrace != first {
			t.Errorf("RunJob again while the occurrence ran: requested at %v with trace %q, want the first request's %v and %q",
				r.Schedule.RunRequested, r.Schedule.RunTrace, want, first)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if diff := cmp.Diff([]time.Duration{time.Minute, 90 * time.Second}, e.exec.times(e.t0)); diff != "" {
			t.Errorf("attempt times (-want +got):\n%s", diff)
		}
		obs.mu.Lock()
		started := obs.started
		obs.mu.Unlock()
		if diff := cmp.Diff([]string{"", first}, started); diff != "" {
			t.Errorf("trace contexts the attempts started in (-want +got):\n%s", diff)
		}
		var manual []row
		for _, h := range e.rows("j") {
			if h.Repeat == 2 {
				manual = append(manual, h)
			}
		}
		want := []row{
			{scheduler.MainAction, scheduler.StatusCompleted, 65 * time.Second, 90 * time.Second, 0, 2},
			{scheduler.MainAction, scheduler.StatusPostponed, 65 * time.Second, 65 * time.Second, 0, 2},
		}
		if diff := cmp.Diff(want, manual); diff != "" {
			t.Errorf("history of the run requested (-want +got):\n%s", diff)
		}
	})
}

// TestRunNowExpectedToTheMillisecond: a run now's expected time is when it
// was asked for, cut to the millisecond, in the record RunJob answers, its
// attempt's request (the HTTP executor's expected-time header) and its
// history entry, as the times of scheduled occurrences carry no digits
// past the second.
func TestRunNowExpectedToTheMillisecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.put("j", jobJSON(e.t0.Add(time.Hour), "")) // one occurrence, in an hour
		e.start()
		defer e.stop()
		time.Sleep(10*time.Second + 1234567*time.Nanosecond)
		r, err := e.s.RunJob(context.Background(), "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		want := e.t0.Add(10*time.Second + time.Millisecond)
		if !r.Schedule.RunRequested.Equal(want) {
			t.Errorf("RunJob at %v: requested at %v, want %v", e.t0.Add(10*time.Second+1234567*time.Nanosecond), r.Schedule.RunRequested, want)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		reqs := e.exec.requests()
		if len(reqs) != 1 || !reqs[0].ExpectedTime.Equal(want) {
			var got []time.Time
			for _, q := range reqs {
				got = append(got, q.ExpectedTime)
			}
			t.Errorf("expected times of the attempts %v, want [%v]", got, want)
		}
		h := e.history("j")
		if len(h) != 1 || !h[0].ExpectedExecutionTime.Equal(want) || !h[0].Manual {
			t.Errorf("history %+v, want the run's entry, expected at %v", h, want)
		}
	})
}

// runNowAfterUnwrittenClaim: a run now asked while another instance's
// claim held the job (a run requested before it, and one noted while it
// held the job), a claim that ended without a write (handOver: its owner
// died, or gave it back unrun); the Scheduler then claims the job and
// starts the run requested. A run now asked while that run is in progress
// runs once after it: the note of the earlier claim does not hold under
// the Scheduler's.
func runNowAfterUnwrittenClaim(t *testing.T, handOver func(e *env, claims []*scheduler.JobRecord)) {
	e := newEnv(t, scheduler.Config{LeaseDuration: 30 * time.Second})
	e.exec.fn = func(_ *action.Request, n int) error {
		if n == 0 {
			time.Sleep(30 * time.Second) // the requested run the Scheduler starts
		}
		return nil
	}
	e.put("j", jobJSON(e.t0.Add(time.Hour), "")) // one occurrence, in an hour
	time.Sleep(time.Second)
	ctx := context.Background()
	if _, err := e.s.RunJob(ctx, "c", "j"); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	claims, err := e.store.ClaimDue(ctx, now, "other", now.Add(30*time.Second), 10)
	if err != nil || len(claims) != 1 {
		t.Fatalf("ClaimDue as another instance: %d jobs, %v; want 1", len(claims), err)
	}
	time.Sleep(time.Second)
	if _, err := e.s.RunJob(ctx, "c", "j"); err != nil { // while the other instance holds the job
		t.Fatal(err)
	}
	handOver(e, claims)
	start := time.Now()
	e.start()
	defer e.stop()
	for i := 0; i < 120 && len(e.exec.times(e.t0)) == 0; i++ {
		time.Sleep(time.Second)
	}
	if len(e.exec.times(e.t0)) == 0 {
		t.Fatal("the run requested did not start within 2 minutes")
	}
	began := e.exec.times(e.t0)[0]
	time.Sleep(15 * time.Second)
	asked := time.Now()
	if _, err := e.s.RunJob(ctx, "c", "j"); err != nil { // while the Scheduler's run is in progress
		t.Fatal(err)
	}
	time.Sleep(3 * time.Minute)
	synctest.Wait()
	if got := e.exec.times(e.t0); len(got) != 2 || got[1] < began+30*time.Second {
		t.Errorf("attempts at %v (started at %v, the first at %v; the run asked for at %v), want two, the second after the first ends",
			got, start.Sub(e.t0), began, asked.Sub(e.t0))
	}
}

// TestRunNowAfterTakeover: the other instance died holding the job; the
// Scheduler takes it over when the lease expires.
func TestRunNowAfterTakeover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		runNowAfterUnwrittenClaim(t, func(*env, []*scheduler.JobRecord) {})
	})
}

// TestRunNowAfterGiveBack: the other instance gave the job back unrun (as
// a Scheduler does with a claim it held ahead, or at Stop).
func TestRunNowAfterGiveBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		runNowAfterUnwrittenClaim(t, func(e *env, claims []*scheduler.JobRecord) {
			for i, err := range e.store.GiveBack(context.Background(), "other", claims) {
				if err != nil {
					t.Fatalf("GiveBack %s: %v", claims[i].ID(), err)
				}
			}
		})
	})
}

// TestRunNowKeepsItsRequestThroughAWrite: a write through the API between
// two runs now asked while a scheduled occurrence's attempt runs (its
// lease extended meanwhile) leaves the first request as it was: the second
// does not move it to its own time.
func TestRunNowKeepsItsRequestThroughAWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{LeaseDuration: 6 * time.Second})
		e.exec.fn = func(_ *action.Request, n int) error {
			if n == 0 {
				time.Sleep(30 * time.Second) // the scheduled occurrence's attempt
			}
			return nil
		}
		e.put("j", jobJSON(e.t0.Add(time.Minute), "")) // one occurrence, at 1m
		e.start()
		defer e.stop()
		ctx := context.Background()
		time.Sleep(time.Minute + 5*time.Second)
		if _, err := e.s.RunJob(ctx, "c", "j"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second)
		if _, err := e.s.PatchJob(ctx, "c", "j", []byte(`{}`), nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Second)
		r, err := e.s.RunJob(ctx, "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		if want := e.t0.Add(time.Minute + 5*time.Second); !r.Schedule.RunRequested.Equal(want) {
			t.Errorf("RunJob again after a patch while the occurrence ran: requested at %v, want the first request's %v", r.Schedule.RunRequested, want)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if diff := cmp.Diff([]time.Duration{time.Minute, 90 * time.Second}, e.exec.times(e.t0)); diff != "" {
			t.Errorf("attempt times (-want +got):\n%s", diff)
		}
	})
}
