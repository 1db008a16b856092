package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRunNowWhileRequestedRuns: a run requested while a requested run is in
// progress is postponed until that run ends, and then runs once however
// many requests came meanwhile; one requested while that second run is in
// progress runs after it in turn.
func TestRunNowWhileRequestedRuns(t *testing.T) {
	recreateStores(t, func(t *testing.T, st recreateStore) {
		ctx := context.Background()
		x := newSlowJobs(t, st, nil)
		t0 := time.Now()
		// A one-time job a year ahead: only the runs requested run.
		x.put(t, "slow", 15, `, "startTime": "`+t0.AddDate(1, 0, 0).Format(time.RFC3339)+`"`)
		first, err := x.s.RunJob(ctx, "c", "slow")
		if err != nil {
			t.Fatal(err)
		}
		if !first.Schedule.RunRequested.Equal(t0) {
			t.Errorf("RunJob: requested at %v, want %v", first.Schedule.RunRequested, t0)
		}
		time.Sleep(4 * time.Second) // the first run's attempt runs
		for i := range 3 {
			again, err := x.s.RunJob(ctx, "c", "slow")
			if err != nil {
				t.Fatal(err)
			}
			if !again.Schedule.RunRequested.After(t0) {
				t.Errorf("RunJob %d while the first run ran: requested at %v, want after the first run's %v", i+2, again.Schedule.RunRequested, t0)
			}
			time.Sleep(time.Second)
		}
		time.Sleep(20 * time.Second) // the second run runs (from 15s to 30s)
		if _, err := x.s.RunJob(ctx, "c", "slow"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		var starts []time.Duration
		for _, c := range x.attempts() {
			starts = append(starts, c.Start.Sub(t0))
		}
		if diff := cmp.Diff([]time.Duration{0, 15 * time.Second, 30 * time.Second}, starts); diff != "" {
			t.Errorf("starts of the attempts (-want +got):\n%s", diff)
		}
	})
}

// TestRunNowWhileScheduledRuns: runs requested while a scheduled occurrence
// is in progress run once after it, however many requests came.
func TestRunNowWhileScheduledRuns(t *testing.T) {
	recreateStores(t, func(t *testing.T, st recreateStore) {
		ctx := context.Background()
		x := newSlowJobs(t, st, nil)
		t0 := time.Now()
		x.put(t, "slow", 15, "") // runs once, now
		time.Sleep(2 * time.Second)
		for range 3 {
			if _, err := x.s.RunJob(ctx, "c", "slow"); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
		}
		time.Sleep(time.Minute)
		var starts []time.Duration
		for _, c := range x.attempts() {
			starts = append(starts, c.Start.Sub(t0))
		}
		if diff := cmp.Diff([]time.Duration{0, 15 * time.Second}, starts); diff != "" {
			t.Errorf("starts of the attempts (-want +got):\n%s", diff)
		}
	})
}
