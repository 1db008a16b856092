package memory

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// TestFirstHistoryItemInline records, prunes and records again one job's
// history, checking after each step that it reads back as recorded and
// that its first item is kept in the job's extra exactly while the history
// has never held more than one.
func TestFirstHistoryItemInline(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s := New()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutJob(ctx, freshRecord("j", now, now)); err != nil {
		t.Fatal(err)
	}
	var model []scheduler.HistoryEntry // oldest first
	n := 0
	record := func(k int) {
		t.Helper()
		var hist []scheduler.HistoryEntry
		for range k {
			n++
			at := now.Add(time.Duration(n) * time.Minute)
			hist = append(hist, scheduler.HistoryEntry{Collection: "c", Job: "j", ActionName: scheduler.MainAction,
				Status: scheduler.StatusCompleted, ExpectedExecutionTime: at, StartTime: at, EndTime: at.Add(time.Second),
				RepeatCount: n, Message: fmt.Sprint("attempt ", n), ExecutionTag: fmt.Sprintf("%016x", n)})
		}
		claimed, err := s.ClaimDue(ctx, now.Add(time.Hour), "me", now.Add(2*time.Hour), 1)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("ClaimDue = %v, %v", claimed, err)
		}
		r := claimed[0]
		r.Schedule.DueAt = now // due again for the next claim
		if errs := s.RecordBatch(ctx, "me", []scheduler.RecordRequest{{Job: r, History: hist}}); errs[0] != nil {
			t.Fatalf("RecordBatch: %v", errs[0])
		}
		model = append(model, hist...)
	}
	check := func(step string, inline bool) {
		t.Helper()
		got, err := s.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{})
		want := slices.Clone(model)
		slices.Reverse(want)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: ListHistory =\n%+v, %v\nwant\n%+v", step, got, err, want)
		}
		x := s.colls["c"].jobs["j"].x
		if in := cap(x.hist) == 1 && &x.hist[:1][0] == &x.one[0]; in != inline {
			t.Errorf("%s: history in the extra: %v, want %v", step, in, inline)
		}
		if !inline && x.one[0] != (histItem{}) {
			t.Errorf("%s: the extra still holds %+v", step, x.one[0])
		}
	}
	record(1)
	check("one entry", true)
	record(2)
	check("three entries", false)
	// prune applies p, after which the history is keep.
	prune := func(p scheduler.PruneRequest, keep []scheduler.HistoryEntry) {
		t.Helper()
		if _, err := s.Prune(ctx, p); err != nil {
			t.Fatal(err)
		}
		model = keep
	}
	byAge := scheduler.PruneRequest{HistoryBefore: now.Add(24 * time.Hour)}
	prune(scheduler.PruneRequest{PerJob: 1}, model[len(model)-1:])
	check("pruned to one", false)
	record(1)
	check("one more", false)
	prune(byAge, nil)
	check("pruned", false)
	record(1)
	check("after pruning", false)

	// A new job whose only entry is pruned and that records again keeps
	// using its extra.
	if err := s.DeleteJob(ctx, "c", "j"); err != nil {
		t.Fatal(err)
	}
	if err := s.PutJob(ctx, freshRecord("j", now, now)); err != nil {
		t.Fatal(err)
	}
	model, n = nil, 0
	record(1)
	check("new job", true)
	prune(byAge, nil)
	check("its entry pruned", true)
	record(1)
	check("recorded again", true)
}
