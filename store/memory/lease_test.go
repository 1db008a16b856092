package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// TestLeasesInClaimOrder covers the queue of jobs under lease when leases
// are taken in the order they end, which keeps them in its FIFO: leases
// extended out of that order, released, expired and taken over by another
// owner must be found exactly when they end, in the order they end.
func TestLeasesInClaimOrder(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	const n = 400
	var jobs []*scheduler.JobRecord
	for i := range n {
		jobs = append(jobs, &scheduler.JobRecord{Collection: "c", Name: fmt.Sprintf("j%03d", i), Job: &scheduler.Job{},
			State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: now}})
	}
	s := New()
	c := &scheduler.CollectionRecord{Name: "c"}
	c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: n}
	if err := s.PutCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	for _, r := range jobs {
		if err := s.PutJob(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	until := map[string]time.Time{} // the lease end of each job "me" holds
	claims := map[string]*scheduler.JobRecord{}
	for k := range 4 { // four claims, a second apart, a minute's lease each
		at := now.Add(time.Duration(k) * time.Second)
		got, err := s.ClaimDue(ctx, at, "me", at.Add(time.Minute), n/4)
		if err != nil || len(got) != n/4 {
			t.Fatalf("claim %d: %d jobs, %v; want %d", k, len(got), err, n/4)
		}
		for _, r := range got {
			until[r.Name], claims[r.Name] = at.Add(time.Minute), r
		}
	}
	if inFIFO := s.leased.fifo.len() - s.leased.head - s.leased.holes; inFIFO != n {
		t.Errorf("%d of %d leases taken in order are in the FIFO", inFIFO, n)
	}
	extend := func(name string, to time.Time) {
		t.Helper()
		if err := s.ExtendLease(ctx, "c", name, "me", to); err != nil {
			t.Fatalf("ExtendLease(%s): %v", name, err)
		}
		until[name] = to
	}
	extend("j010", now.Add(30*time.Second))                      // ends first now, out of order
	extend("j020", now.Add(10*time.Minute))                      // ends last, in order
	extend("j150", now.Add(61*time.Second+500*time.Millisecond)) // among the others
	extend("j390", now.Add(59*time.Second))                      // earlier than its claim's lease
	// Release most of the first claim's leases, leaving holes in the FIFO.
	for i := range n / 4 {
		name := fmt.Sprintf("j%03d", i)
		if name == "j010" || name == "j020" || i%10 == 9 {
			continue
		}
		r := claims[name]
		r.Schedule.DueAt = time.Time{}
		if err := s.Record(ctx, "me", r, nil); err != nil {
			t.Fatalf("Record(%s): %v", name, err)
		}
		delete(until, name)
	}
	// Another owner finds each lease when it ends, and only then.
	times := []time.Duration{0, 29 * time.Second, 30 * time.Second, 59 * time.Second, 60 * time.Second, 61 * time.Second,
		61*time.Second + 500*time.Millisecond, 62 * time.Second, 63 * time.Second, 9 * time.Minute, 10 * time.Minute}
	for _, d := range times {
		at := now.Add(d)
		var want []string
		for name, u := range until {
			if !u.After(at) {
				want = append(want, name)
			}
		}
		slices.SortFunc(want, func(a, b string) int {
			if c := until[a].Compare(until[b]); c != 0 {
				return c
			}
			return cmpName(a, b)
		})
		next, err := s.NextDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var wantNext time.Time
		for _, u := range until {
			if wantNext.IsZero() || u.Before(wantNext) {
				wantNext = u
			}
		}
		if !next.Equal(wantNext) {
			t.Errorf("NextDue before %v = %v, want %v", d, next, wantNext)
		}
		if c, err := s.CountDue(ctx, at); err != nil || c != len(want) {
			t.Errorf("CountDue at %v = %d, %v; want %d", d, c, err, len(want))
		}
		got, err := s.ClaimDue(ctx, at, "other", at.Add(time.Hour), n)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range got {
			names = append(names, r.Name)
			if r.PreviousLeaseOwner != "me" {
				t.Errorf("at %v: %s taken from %q, want me", d, r.Name, r.PreviousLeaseOwner)
			}
			delete(until, r.Name)
			// The lease is other's now: me can no longer record.
			if err := s.Record(ctx, "me", claims[r.Name], nil); !errors.Is(err, scheduler.ErrLeaseLost) {
				t.Errorf("at %v: Record(%s) by its previous owner: %v, want ErrLeaseLost", d, r.Name, err)
			}
			r.Schedule.DueAt = time.Time{}
			if err := s.Record(ctx, "other", r, nil); err != nil {
				t.Errorf("at %v: Record(%s) by its new owner: %v", d, r.Name, err)
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("ClaimDue at %v = %v, want %v", d, names, want)
		}
	}
	if len(until) != 0 {
		t.Errorf("leases never found: %v", until)
	}
	if c, _ := s.CountDue(ctx, now.Add(time.Hour)); c != 0 || s.leased.len() != 0 || s.due.len() != 0 {
		t.Errorf("after every job was recorded: CountDue %d, %d under lease, %d due; want none", c, s.leased.len(), s.due.len())
	}
}

// cmpName orders job names as their creation order in the test, which
// is that of their names.
func cmpName(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
