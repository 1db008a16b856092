package memory

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
)

// TestClaimReusesRecordedRecords covers the reuse of the records that
// RecordBatch takes back for later claims: a reused record must read
// exactly as a new one, and a record that the store keeps whole, or that
// was not recorded, must not be reused.
func TestClaimReusesRecordedRecords(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	newStore := func(t *testing.T) *Store {
		var jobs []*scheduler.JobRecord
		for i, name := range []string{"a", "b"} {
			due := now.Add(time.Duration(i) * time.Second)
			jobs = append(jobs, &scheduler.JobRecord{Collection: "c", Name: name, Job: &scheduler.Job{}, State: scheduler.JobEnabled,
				Created: now.Add(-time.Hour), Updated: now.Add(-time.Hour),
				Schedule: scheduler.JobSchedule{DueAt: due, NextOccurrence: due, Anchor: now.Add(-time.Hour)}})
		}
		return storeWith(t, jobs...)
	}
	claim := claimOne
	// ran gives r what a run leaves: counters, the last execution, no
	// next occurrence (so the compact form holds it).
	ran := func(r *scheduler.JobRecord) {
		last := now
		r.State = scheduler.JobCompleted
		r.Updated = now.Add(time.Millisecond)
		r.Schedule.DueAt, r.Schedule.NextOccurrence = time.Time{}, time.Time{}
		r.Schedule.Occurrences, r.Schedule.Counted, r.Schedule.LastFailed = 1, 1, true
		r.Status = scheduler.JobStatus{ExecutionCount: 1, FailureCount: 1, FaultedCount: 1, LastExecutionTime: &last}
	}
	// fresh checks that the claimed c reads as the stored job.
	fresh := func(t *testing.T, s *Store, c *scheduler.JobRecord) {
		t.Helper()
		g, err := s.GetJob(ctx, "c", c.Name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(g, c); diff != "" {
			t.Errorf("claimed record differs from the stored one (-stored +claimed):\n%s", diff)
		}
	}

	t.Run("recorded compact: reused, cleared", func(t *testing.T) {
		s := newStore(t)
		a := claim(t, s, now)
		ran(a)
		h := scheduler.HistoryEntry{Collection: "c", Job: "a", ActionName: scheduler.MainAction, Status: scheduler.StatusFailed,
			ExpectedExecutionTime: now, StartTime: now, EndTime: now, RepeatCount: 1, ExecutionTag: "t"}
		if errs := s.RecordBatch(ctx, "me", []scheduler.RecordRequest{{Job: a, History: []scheduler.HistoryEntry{h}}}); errs[0] != nil {
			t.Fatalf("RecordBatch: %v", errs[0])
		}
		if len(s.spare) != 1 {
			t.Fatalf("%d spare records after RecordBatch of a compact record, want 1", len(s.spare))
		}
		b := claim(t, s, now.Add(time.Second))
		if b != a {
			t.Errorf("the claim of b did not reuse a's record")
		}
		fresh(t, s, b)
		ga, err := s.GetJob(ctx, "c", "a")
		if err != nil {
			t.Fatal(err)
		}
		if ga.Status.ExecutionCount != 1 || ga.Status.LastExecutionTime == nil || !ga.Status.LastExecutionTime.Equal(now) {
			t.Errorf("job a after b's claim: %+v; want what a's run recorded", ga.Status)
		}
	})
	t.Run("kept whole: not reused", func(t *testing.T) {
		s := newStore(t)
		a := claim(t, s, now)
		a.Schedule.Current = &scheduler.Occurrence{Number: 1, Expected: now, Tag: "ta", Retry: 1, At: now.Add(time.Hour)}
		a.Schedule.DueAt = now.Add(time.Hour)
		if errs := s.RecordBatch(ctx, "me", []scheduler.RecordRequest{{Job: a}}); errs[0] != nil {
			t.Fatalf("RecordBatch: %v", errs[0])
		}
		if len(s.spare) != 0 {
			t.Fatalf("%d spare records after RecordBatch kept the record whole, want 0", len(s.spare))
		}
		b := claim(t, s, now.Add(time.Second))
		fresh(t, s, b)
		ga, err := s.GetJob(ctx, "c", "a")
		if err != nil {
			t.Fatal(err)
		}
		if c := ga.Schedule.Current; c == nil || c.Tag != "ta" || c.Retry != 1 {
			t.Errorf("job a's current occurrence after b's claim: %+v; want a's", c)
		}
	})
	t.Run("refused or recorded by Record: not reused", func(t *testing.T) {
		s := newStore(t)
		a := claim(t, s, now)
		a.Version++
		if errs := s.RecordBatch(ctx, "me", []scheduler.RecordRequest{{Job: a}}); errs[0] == nil {
			t.Fatal("RecordBatch of a stale version succeeded")
		}
		a.Version--
		ran(a)
		if err := s.Record(ctx, "me", a, nil); err != nil {
			t.Fatalf("Record: %v", err)
		}
		if len(s.spare) != 0 {
			t.Fatalf("%d spare records, want 0: the caller still owns them", len(s.spare))
		}
	})
}
