package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
)

// TestBackfill: after an outage under the Skip policy, a backfill of the
// missing occurrences runs each of them once, in order, with its original
// expected time, its own execution tag and a Backfill mark in history; a
// dry run answers the same and runs nothing; All also runs those that ran.
func TestBackfill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e, _ := outageRun(t, scheduler.Config{}, nil, `"runPolicy": {"missed": "Skip"}`) // ran at 1m, 11m30s (11m) and 12m; 2m..10m skipped
		e.s = e.newScheduler()
		e.start()
		defer e.stop()
		m := time.Minute
		at := func(ds ...time.Duration) []time.Time {
			var out []time.Time
			for _, d := range ds {
				out = append(out, e.t0.Add(d))
			}
			return out
		}
		missing := at(2*m, 3*m, 4*m, 5*m, 6*m, 7*m, 8*m, 9*m, 10*m)
		got, err := e.s.BackfillJob(ctx, "c", "j", e.t0, e.t0.Add(12*m), &scheduler.BackfillOptions{DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(missing, got); diff != "" {
			t.Errorf("dry run (-want +got):\n%s", diff)
		}
		got, err = e.s.BackfillJob(ctx, "c", "j", e.t0, e.t0.Add(4*m), &scheduler.BackfillOptions{Only: "all", DryRun: true})
		if err != nil || !cmp.Equal(at(m, 2*m, 3*m, 4*m), got) {
			t.Errorf("dry run of All = %v, %v; want 1m..4m", got, err)
		}
		calls := len(e.exec.times(e.t0))
		synctest.Wait()
		if n := len(e.exec.times(e.t0)); n != calls {
			t.Fatalf("%d attempts after dry runs, want none", n-calls)
		}
		before := time.Since(e.t0)
		got, err = e.s.BackfillJob(ctx, "c", "j", e.t0, e.t0.Add(12*m), nil)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(missing, got); diff != "" {
			t.Errorf("backfill (-want +got):\n%s", diff)
		}
		synctest.Wait()
		reqs := e.exec.requests()[calls:]
		var expected []time.Time
		tags := map[string]bool{}
		for _, r := range reqs {
			expected = append(expected, r.ExpectedTime)
			tags[r.ExecutionTag()] = true
		}
		if diff := cmp.Diff(missing, expected); diff != "" {
			t.Errorf("expected times of the backfilled attempts (-want +got):\n%s", diff)
		}
		if len(tags) != len(missing) {
			t.Errorf("%d execution tags for %d occurrences, want one each", len(tags), len(missing))
		}
		for _, d := range e.exec.times(e.t0)[calls:] {
			if d != before {
				t.Errorf("a backfilled attempt started at %v, want at once (%v)", d, before)
			}
		}
		n := 0
		for _, h := range e.history("j") {
			if h.Backfill {
				n++
				if h.Status != scheduler.StatusCompleted || tags[h.ExecutionTag] != true {
					t.Errorf("backfilled entry %+v: want Completed with one of the attempts' tags", h)
				}
			}
		}
		if n != len(missing) {
			t.Errorf("%d history entries marked Backfill, want %d", n, len(missing))
		}
		// Now nothing is missing.
		if got, err := e.s.BackfillJob(ctx, "c", "j", e.t0, e.t0.Add(12*m), &scheduler.BackfillOptions{DryRun: true}); err != nil || len(got) != 0 {
			t.Errorf("dry run after the backfill = %v, %v; want nothing missing", got, err)
		}
	})
}

func TestBackfillErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		e.put("j", jobJSON(e.t0.Add(-24*time.Hour), `"recurrence": {"frequency": "Minute"}`))
		time.Sleep(3 * 24 * time.Hour)
		now := time.Now()
		tests := []struct {
			name     string
			job      string
			from, to time.Time
			opts     *scheduler.BackfillOptions
			path     string
			is       error
		}{
			{name: "reversed", job: "j", from: now.Add(-time.Hour), to: now.Add(-2 * time.Hour), path: "to"},
			{name: "in the future", job: "j", from: now.Add(-time.Hour), to: now.Add(time.Hour), path: "to"},
			{name: "too many", job: "j", from: now.Add(-48 * time.Hour), to: now, path: "to"},
			{name: "no from", job: "j", to: now, path: "from"},
			{name: "bad only", job: "j", from: now.Add(-time.Hour), to: now, opts: &scheduler.BackfillOptions{Only: "Some"}, path: "only"},
			{name: "missing job", job: "nope", from: now.Add(-time.Hour), to: now, is: scheduler.ErrNotFound},
		}
		for _, tt := range tests {
			_, err := e.s.BackfillJob(ctx, "c", tt.job, tt.from, tt.to, tt.opts)
			if tt.is != nil {
				if !errors.Is(err, tt.is) {
					t.Errorf("%s: %v, want %v", tt.name, err, tt.is)
				}
				continue
			}
			if ve := scheduler.ValidationErrors(err); len(ve) != 1 || ve[0].Path != tt.path {
				t.Errorf("%s: %v, want one error at %s", tt.name, err, tt.path)
			}
		}
		// 1000 occurrences is the limit: 16h40m of minutes.
		if got, err := e.s.BackfillJob(ctx, "c", "j", now.Add(-999*time.Minute).Truncate(time.Minute), now, &scheduler.BackfillOptions{Only: scheduler.BackfillAll, DryRun: true}); err != nil || len(got) != 1000 {
			t.Errorf("a backfill of 1000: %d, %v", len(got), err)
		}
	})
}

// TestBackfillMissingNoHistory: a Scheduler that keeps no history cannot
// know which occurrences ran, so it refuses a backfill of the missing
// ones (the default) and runs nothing again; All runs every one.
func TestBackfillMissingNoHistory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{HistoryPerJob: scheduler.NoHistory})
		e.start()
		defer e.stop()
		e.put("j", jobJSON(e.t0, `"recurrence": {"frequency": "Minute", "interval": 10}`))
		time.Sleep(25 * time.Minute)
		synctest.Wait()
		for _, opts := range []*scheduler.BackfillOptions{nil, {Only: "missing"}, {DryRun: true}} {
			got, err := e.s.BackfillJob(ctx, "c", "j", e.t0, time.Now(), opts)
			ve := scheduler.ValidationErrors(err)
			if len(ve) != 1 || ve[0].Path != "only" || !strings.Contains(ve[0].Reason, "NoHistory") || !strings.Contains(ve[0].Reason, "All") {
				t.Errorf("BackfillJob(%+v) = %v, %v; want one error at only that names NoHistory and All", opts, got, err)
			}
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if r := e.job("j"); r.Status.ExecutionCount != 3 {
			t.Errorf("executionCount %d after the refused backfills, want 3", r.Status.ExecutionCount)
		}
		got, err := e.s.BackfillJob(ctx, "c", "j", e.t0, e.t0.Add(25*time.Minute), &scheduler.BackfillOptions{Only: scheduler.BackfillAll})
		if err != nil || len(got) != 3 {
			t.Fatalf("BackfillJob(All) = %v, %v; want the three occurrences", got, err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if r := e.job("j"); r.Status.ExecutionCount != 6 {
			t.Errorf("executionCount %d after a backfill of All, want 6", r.Status.ExecutionCount)
		}
	})
}
