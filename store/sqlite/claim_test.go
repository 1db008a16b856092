package sqlite_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// TestClaimManyAtOnce checks a claim of many jobs, which the store updates
// in one statement: the jobs come back in the order they are due (not the
// order of their names or rows), each with its lease, its new version and
// the owner of the expired lease it replaced.
func TestClaimManyAtOnce(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "jobclock.db"))
	const n = 300
	c := &scheduler.CollectionRecord{Name: "c"}
	c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: n}
	if err := s.PutCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	def := &scheduler.Job{}
	for i := range n {
		// Names ascend while due times descend.
		due := base.Add(time.Duration(n-i) * time.Second)
		j := &scheduler.JobRecord{Collection: "c", Name: fmt.Sprintf("j%03d", i), Job: def, State: scheduler.JobEnabled,
			Schedule: scheduler.JobSchedule{DueAt: due}, Created: base, Updated: base}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	// "a" claims the 100 earliest; its lease expires.
	now := base.Add(time.Hour)
	first, err := s.ClaimDue(ctx, now, "a", now.Add(time.Minute), 100)
	if err != nil || len(first) != 100 {
		t.Fatalf("first ClaimDue = %d jobs, %v; want 100", len(first), err)
	}
	leasedByA := make(map[string]bool)
	for _, j := range first {
		leasedByA[j.Name] = true
	}
	later := now.Add(2 * time.Minute)
	got, err := s.ClaimDue(ctx, later, "b", later.Add(time.Minute), 256)
	if err != nil || len(got) != 256 {
		t.Fatalf("ClaimDue = %d jobs, %v; want 256", len(got), err)
	}
	// Due times: the jobs never claimed are due before a's leases end.
	var prev time.Time
	for i, j := range got {
		ready := j.Schedule.DueAt
		if leasedByA[j.Name] {
			ready = now.Add(time.Minute)
		}
		if ready.Before(prev) {
			t.Errorf("claim %d: %s ready at %v, before the previous one's %v", i, j.Name, ready, prev)
		}
		prev = ready
		wantPrev, wantVersion := "", int64(2)
		if leasedByA[j.Name] {
			wantPrev, wantVersion = "a", 3
		}
		if j.LeaseOwner != "b" || !j.LeaseUntil.Equal(later.Add(time.Minute)) || j.Version != wantVersion || j.PreviousLeaseOwner != wantPrev {
			t.Errorf("claimed %s: owner %q until %v, version %d, previous owner %q; want b, %v, %d, %q",
				j.Name, j.LeaseOwner, j.LeaseUntil, j.Version, j.PreviousLeaseOwner, later.Add(time.Minute), wantVersion, wantPrev)
		}
		stored, err := s.GetJob(ctx, "c", j.Name)
		if err != nil || stored.LeaseOwner != "b" || stored.Version != j.Version {
			t.Errorf("GetJob(%s) = owner %q version %d, %v; want b, %d", j.Name, stored.LeaseOwner, stored.Version, err, j.Version)
		}
	}
	rest, err := s.ClaimDue(ctx, later, "b", later.Add(time.Minute), 256)
	if err != nil || len(rest) != n-256 {
		t.Errorf("last ClaimDue = %d jobs, %v; want %d", len(rest), err, n-256)
	}
}

// TestRecordBatchUndoesAPartlyRecordedElement checks the path where an
// element of a batch fails after its job row was updated (here a trigger
// refuses its history entry): the batch is recorded again element by
// element, so that the failed one changes nothing and the others are
// recorded.
func TestRecordBatchUndoesAPartlyRecordedElement(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobclock.db")
	s := open(t, path)
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, name := range []string{"a", "bad", "z"} {
		j := &scheduler.JobRecord{Collection: "c", Name: name, Job: &scheduler.Job{}, State: scheduler.JobEnabled,
			Schedule: scheduler.JobSchedule{DueAt: base}, Created: base, Updated: base}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TRIGGER refuse BEFORE INSERT ON history WHEN NEW.job = 'bad' BEGIN SELECT RAISE(ABORT, 'refused'); END`); err != nil {
		t.Fatal(err)
	}
	now := base.Add(time.Minute)
	claimed, err := s.ClaimDue(ctx, now, "me", now.Add(time.Minute), 10)
	if err != nil || len(claimed) != 3 {
		t.Fatalf("ClaimDue = %d jobs, %v; want 3", len(claimed), err)
	}
	var batch []scheduler.RecordRequest
	for _, j := range claimed {
		j.Status.ExecutionCount = 1
		j.Schedule.DueAt = time.Time{}
		h := scheduler.HistoryEntry{Collection: "c", Job: j.Name, ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted,
			StartTime: now, EndTime: now, Message: "done"}
		batch = append(batch, scheduler.RecordRequest{Job: j, History: []scheduler.HistoryEntry{h}})
	}
	errs := s.RecordBatch(ctx, "me", batch)
	for i, j := range claimed {
		stored, err := s.GetJob(ctx, "c", j.Name)
		if err != nil {
			t.Fatal(err)
		}
		hist, err := s.ListHistory(ctx, "c", j.Name, scheduler.HistoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if j.Name == "bad" {
			if errs[i] == nil || !strings.Contains(errs[i].Error(), "refused") {
				t.Errorf("RecordBatch element bad: %v, want the trigger's refusal", errs[i])
			}
			if stored.Version != 2 || stored.LeaseOwner != "me" || stored.Status.ExecutionCount != 0 || len(hist) != 0 {
				t.Errorf("bad after a failed record: version %d, owner %q, count %d, %d history entries; want 2, me, 0, 0 (unchanged)",
					stored.Version, stored.LeaseOwner, stored.Status.ExecutionCount, len(hist))
			}
			continue
		}
		if errs[i] != nil {
			t.Errorf("RecordBatch element %s: %v", j.Name, errs[i])
		}
		if stored.Version != 3 || stored.LeaseOwner != "" || stored.Status.ExecutionCount != 1 || len(hist) != 1 {
			t.Errorf("%s after RecordBatch: version %d, owner %q, count %d, %d history entries; want 3, none, 1, 1",
				j.Name, stored.Version, stored.LeaseOwner, stored.Status.ExecutionCount, len(hist))
		}
	}
}
