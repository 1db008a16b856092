package scheduler_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jobclock/scheduler"
)

// TestGiveBackDeletedNotObservedAsError: a claim held ahead of its instant
// on a job deleted meanwhile needs no give-back, so the Observer (and the
// telemetry that counts store errors from it) sees no failed GiveBack; a
// give-back that does fail is still seen (TestStopStoreFailuresSeen).
func TestGiveBackDeletedNotObservedAsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs := &giveBackCalls{}
		e := newEnv(t, scheduler.Config{ClaimAhead: scheduler.DefaultClaimAhead, Observer: obs})
		due := e.t0.Add(10 * time.Second).Truncate(time.Second)
		e.put("j", oneTimeAt(due))
		e.put("k", oneTimeAt(due))
		e.start()
		time.Sleep(time.Until(due.Add(-20 * time.Millisecond)))
		synctest.Wait()
		if r := e.job("j"); r.LeaseOwner == "" {
			t.Fatalf("the job is not leased 20 ms before it is due, want its claim held")
		}
		if err := e.s.DeleteJob(context.Background(), "c", "j", nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(due.Add(time.Second)))
		synctest.Wait()
		e.stop()
		obs.mu.Lock()
		defer obs.mu.Unlock()
		if obs.calls == 0 {
			t.Fatalf("no GiveBack call observed, want the held claim of the deleted job given back")
		}
		if len(obs.errs) != 0 {
			t.Errorf("the Observer saw give-back errors %v, want none: the deleted job needed no give-back", obs.errs)
		}
		if n := len(e.exec.calls); n != 1 {
			t.Errorf("%d attempts, want 1 (k's)", n)
		}
	})
}

// giveBackCalls is giveBackErrs that also counts the GiveBack calls.
type giveBackCalls struct {
	giveBackErrs
	calls int
}

func (o *giveBackCalls) StoreCalled(c scheduler.StoreCall) {
	if c.Op == "GiveBack" {
		o.mu.Lock()
		o.calls++
		o.mu.Unlock()
	}
	o.giveBackErrs.StoreCalled(c)
}
