package storetest

import (
	"math"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
)

// CheckHistoryRows is for a backend's tests of the rows it keeps history
// in: it puts job c/j (and collection c) in s, claims it, records entries
// that use every member of an entry, and checks that ListHistory and, when
// s is a [scheduler.StatsReader], RecentHistory return them; then it calls
// rewrite with the entries, in recording order, to change the stored rows
// (to check those an older version wrote, say), and checks again. The
// first exact entries hold values that columns of the usual types give
// back exactly; the others do not (other names than the job's, no end
// time, end times outside 1678–2262 or finer than a microsecond, retry
// counts past int32 or below 0).
func CheckHistoryRows(t *testing.T, s scheduler.Store, rewrite func(hist []scheduler.HistoryEntry, exact int)) {
	t.Helper()
	j := claimedJob(t, s)
	hist := []scheduler.HistoryEntry{
		{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusFailed, ExpectedExecutionTime: t0,
			StartTime: t0, EndTime: t0.Add(time.Second), RetryCount: 2, RepeatCount: 1, Message: "boom <&>", ExecutionTag: "tag",
			Faulted: true, Backfill: true, LimitWaitMillis: 7, HTTPStatus: 500},
		{Collection: "c", Job: "j", ActionName: scheduler.ErrorAction, Status: scheduler.StatusCompleted, ExpectedExecutionTime: t0,
			StartTime: t0.Add(time.Second), EndTime: t0.Add(2 * time.Second), RepeatCount: 1, ExecutionTag: "tag"},
		{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusSkipped, ExpectedExecutionTime: t0,
			StartTime: t0.Add(3 * time.Second), EndTime: t0.Add(3 * time.Second), Message: "skipped", Skipped: 3, LastExpectedTime: t0.Add(time.Minute)},
		{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, ExpectedExecutionTime: t0,
			StartTime: t0.Add(4 * time.Second), EndTime: t0.Add(5 * time.Second), RepeatCount: 2, ExecutionTag: "run", Manual: true},
		// Values a row's columns may not hold exactly.
		{Collection: "other", Job: "k", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, ExpectedExecutionTime: t0,
			StartTime: t0, RetryCount: math.MaxInt, ExecutionTag: "tag"},
		{Collection: "c", Job: "j", ActionName: scheduler.ErrorAction, Status: scheduler.StatusFailed, ExpectedExecutionTime: t0,
			StartTime: t0, EndTime: time.Date(2300, 1, 2, 3, 4, 5, 6, time.FixedZone("IST", 19800)), RetryCount: -1},
		{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, ExpectedExecutionTime: t0,
			StartTime: t0, EndTime: time.Date(1600, 1, 2, 3, 4, 5, 0, time.UTC)},
		{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, ExpectedExecutionTime: t0,
			StartTime: t0, EndTime: t0.Add(time.Nanosecond).In(time.FixedZone("IST", 19800))},
	}
	if err := s.Record(ctx, "me", j, hist); err != nil {
		t.Fatalf("Record: %v", err)
	}
	want := slices.Clone(hist)
	slices.Reverse(want) // newest first
	read := func(what string) {
		t.Helper()
		list, err := s.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{})
		if diff := gocmp.Diff(want, list); err != nil || diff != "" {
			t.Errorf("%s: ListHistory: %v (-want +got):\n%s", what, err, diff)
		}
		if sr, ok := s.(scheduler.StatsReader); ok {
			recent, err := sr.RecentHistory(ctx, scheduler.HistoryFilter{})
			if diff := gocmp.Diff(want, recent); err != nil || diff != "" {
				t.Errorf("%s: RecentHistory: %v (-want +got):\n%s", what, err, diff)
			}
		}
	}
	read("as recorded")
	rewrite(hist, 4)
	read("rewritten")
}
