package sqlite_test

import (
	"fmt"
	"path/filepath"
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
