package telemetry

import (
	"context"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestTelemetryNoSDKAllocatesNothing: with the global providers and no SDK
// installed, the events of an attempt cost no allocation.
func TestTelemetryNoSDKAllocatesNothing(t *testing.T) {
	o := New(nil)
	def := &scheduler.Job{Action: action.Action{Type: action.HTTP}}
	now := time.Now()
	hist := []scheduler.HistoryEntry{
		{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, StartTime: now, EndTime: now.Add(time.Second)},
		{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusPostponed, StartTime: now, EndTime: now},
	}
	ctx := context.Background()
	attempt := scheduler.Attempt{Instance: "a", Collection: "c", Job: "j", ActionType: action.HTTP, ActionName: scheduler.MainAction,
		Occurrence: 1, Expected: now, Due: now, Start: now, Tag: "t"}
	batchErrs := []error{nil} // the store's
	missed := scheduler.Misfire{Instance: "a", Collection: "c", Job: "j", Policy: scheduler.MisfireRunOnce, Count: 2, First: now, Last: now, At: now}
	n := testing.AllocsPerRun(1000, func() {
		if o.tracer.get() != nil {
			t.Fatal("tracing without an SDK")
		}
		actx := o.StartAttempt(ctx, attempt)
		o.EndAttempt(actx, scheduler.AttemptEnd{End: now})
		o.StoreCalled(scheduler.StoreCall{Op: "ClaimDue", Duration: time.Millisecond})
		o.StoreCalled(scheduler.StoreCall{Op: "RecordBatch", Duration: time.Millisecond, Errs: batchErrs})
		o.Missed(missed)
		o.HistoryStored(scheduler.StoredHistory{Instance: "a", Job: def, Entries: hist})
	})
	if n != 0 {
		t.Errorf("telemetry of one attempt without an SDK: %v allocations, want 0", n)
	}
}
