package storetest

import (
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
// (to check those an older version wrote, say), and checks again.
func CheckHistoryRows(t *testing.T, s scheduler.Store, rewrite func(hist []scheduler.HistoryEntry)) {
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
	}
	if err := s.Record(ctx, "me", j, hist); err != nil {
		t.Fatalf("Record: %v", err)
	}
	want := []scheduler.HistoryEntry{hist[2], hist[1], hist[0]}
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
	rewrite(hist)
	read("rewritten")
}
