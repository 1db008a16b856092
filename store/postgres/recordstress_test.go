package postgres_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

// TestRecordBatchStress records, in one batch, jobs and history entries
// whose texts stress the array parameters the batch sends (the array
// literal's punctuation, quotes, backslashes, the word NULL, non-ASCII, a
// large JSON text) with times in zones to the nanosecond, NULL times and
// the largest numbers, then reads back each job and its history: exactly
// what was recorded.
func TestRecordBatchStress(t *testing.T) {
	s := open(t, newSchema(t))
	const coll = `c{,}"\ü`
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: coll}); err != nil {
		t.Fatal(err)
	}
	names := []string{`j"`, `j\`, `j\"`, `{a,b}`, "NULL", "null", " j ", "ünïcødé ✓ 日本", `j,`, `{"k":[1]}`}
	for _, n := range names {
		j := &scheduler.JobRecord{Collection: coll, Name: n, Job: &scheduler.Job{}, State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Hour), 100)
	if err != nil || len(claimed) != len(names) {
		t.Fatalf("claim = %d jobs, %v; want %d", len(claimed), err, len(names))
	}
	east := time.FixedZone("east", 5*3600+1800)
	west := time.FixedZone("west", -(9*3600 + 30*60))
	large := strings.Repeat(`{"k":"v\\\"{,}NULL ü",`, 170) // near MaxHistoryMessage
	texts := []string{"", `"`, `\`, "{}", "{a,b}", ",", "NULL", "tab\tnew\nline", "ünïcødé ✓", large}
	var batch []scheduler.RecordRequest
	for i, c := range claimed {
		j := c.Clone()
		last := time.Date(2029, 12, 31, 23, 59, 59, 999999999, east)
		j.Status = scheduler.JobStatus{LastExecutionTime: &last, ExecutionCount: math.MaxInt32 + int(i), FailureCount: i}
		j.Schedule = scheduler.JobSchedule{DueAt: time.Date(2261, 12, 31, 0, 0, 0, 1, west), Anchor: time.Date(1700, 1, 1, 0, 0, 0, 0, east)}
		if i%3 == 0 {
			j.Schedule.DueAt = time.Time{} // due_at NULL: nothing pending
			j.State = scheduler.JobCompleted
		}
		j.ETag = texts[i%len(texts)] + "etag"
		j.Updated = time.Date(2030, 1, 2, 3, 4, 5, 123456789, west)
		h := scheduler.HistoryEntry{Collection: coll, Job: j.Name, ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted,
			ExpectedExecutionTime: time.Date(2030, 1, 2, 3, 4, 0, 1, east), StartTime: time.Date(2030, 1, 2, 3, 4, 0, 500, west),
			EndTime: time.Date(2030, 1, 2, 3, 4, 1, 999999999, east), RetryCount: math.MaxInt32, RepeatCount: math.MaxInt,
			Message: texts[i%len(texts)], ExecutionTag: texts[(i+2)%len(texts)]}
		second := h
		second.EndTime, second.Status, second.RetryCount, second.Message = time.Time{}, scheduler.StatusFailed, 0, large
		second.Faulted = true
		batch = append(batch, scheduler.RecordRequest{Job: j, History: []scheduler.HistoryEntry{h, second}, KeepDefinition: i%2 == 0})
	}
	for i, err := range s.RecordBatch(ctx, "me", batch) {
		if err != nil {
			t.Fatalf("element %d: %v", i, err)
		}
	}
	for _, r := range batch {
		got, err := s.GetJob(ctx, coll, r.Job.Name)
		if err != nil {
			t.Fatal(err)
		}
		want := sqlstore.NormJob(r.Job)
		want.Version++
		want.LeaseOwner, want.LeaseUntil, want.Handle = "", time.Time{}, nil // a read record has no handle
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("job %q (-want +got):\n%s", r.Job.Name, diff)
		}
		hist, err := s.ListHistory(ctx, coll, r.Job.Name, scheduler.HistoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		// Newest first.
		wantHist := []scheduler.HistoryEntry{sqlstore.NormHistory(r.History[1]), sqlstore.NormHistory(r.History[0])}
		for i := range wantHist {
			wantHist[i].LastExpectedTime = wantHist[i].LastExpectedTime.UTC()
		}
		if diff := cmp.Diff(wantHist, hist); diff != "" {
			t.Errorf("history of job %q (-want +got):\n%s", r.Job.Name, diff)
		}
	}
}
