package scheduler

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jobclock/scheduler/action"
)

// RunDue exposes the loop's step function to the external tests.
func (s *Scheduler) RunDue(ctx context.Context, now time.Time) time.Time { return s.runDue(ctx, now) }

// TelemetryAllocs returns the allocations of the telemetry calls one
// attempt makes, with the providers of a default Config (the global ones).
func TelemetryAllocs(t *testing.T) float64 {
	s, err := New(nopStore{}, &Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	def := &Job{Action: action.Action{Type: action.HTTP}}
	now := time.Now()
	r := &JobRecord{Collection: "c", Name: "j", Job: def, Schedule: JobSchedule{NextOccurrence: now.Add(time.Minute)}}
	tm, err := def.Timing(now)
	if err != nil {
		t.Fatal(err)
	}
	hist := []HistoryEntry{
		{Collection: "c", Job: "j", ActionName: MainAction, Status: StatusCompleted, StartTime: now, EndTime: now.Add(time.Second)},
		{Collection: "c", Job: "j", ActionName: MainAction, Status: StatusPostponed, StartTime: now, EndTime: now},
	}
	return testing.AllocsPerRun(1000, func() {
		if s.tel.tracing() != nil {
			t.Fatal("tracing without an SDK")
		}
		t0 := s.tel.storeStart()
		s.tel.storeEnd(opClaimDue, t0, nil)
		s.tel.storeBatchEnd(s.tel.storeStart(), []error{nil}, 1)
		s.tel.recordMissed(s.tel.passedOver(r, tm, now, 0, MisfireRunOnce, now), true)
		s.tel.history(def, hist)
	})
}

// nopStore is a Store whose methods are never called.
type nopStore struct{ Store }
