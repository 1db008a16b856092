package memory_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

// TestStatsAtScale checks the job counts the store keeps up to date on
// every write, and CountDue's walk of the due heaps, against a recount
// from the listings after many random operations on thousands of jobs.
func TestStatsAtScale(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	rng := rand.New(rand.NewPCG(3, 4))
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(n int) time.Time { return t0.Add(time.Duration(rng.IntN(n)) * time.Second) }
	states := []scheduler.JobState{scheduler.JobEnabled, scheduler.JobDisabled, scheduler.JobCompleted, scheduler.JobFaulted}
	colls := []string{"a", "b", "c", "d"}
	for _, c := range colls {
		if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: c, Definition: scheduler.JobCollection{
			Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 5000}}}}); err != nil {
			t.Fatal(err)
		}
	}
	put := func(coll, name string) {
		j, err := s.GetJob(ctx, coll, name)
		if err != nil {
			j = &scheduler.JobRecord{Collection: coll, Name: name, Job: &scheduler.Job{}}
		}
		j.State, j.Updated = states[rng.IntN(len(states))], at(1000)
		j.Schedule.DueAt = time.Time{}
		if rng.IntN(5) > 0 {
			j.Schedule.DueAt = at(1000)
		}
		if err := s.PutJob(ctx, j); err != nil && !errors.Is(err, scheduler.ErrNotFound) {
			t.Fatal(err)
		}
	}
	for i := range 4000 {
		put(colls[i%len(colls)], fmt.Sprint("j", i))
	}
	var claimed []*scheduler.JobRecord
	for step := range 6000 {
		coll, name := colls[rng.IntN(len(colls))], fmt.Sprint("j", rng.IntN(5000))
		switch rng.IntN(12) {
		case 0, 1, 2:
			put(coll, name)
		case 3, 4, 5:
			now := at(1000)
			got, err := s.ClaimDue(ctx, now, "w", now.Add(time.Duration(1+rng.IntN(300))*time.Second), 1+rng.IntN(20))
			if err != nil {
				t.Fatal(err)
			}
			claimed = append(claimed, got...)
		case 6, 7, 8:
			if len(claimed) > 0 {
				k := rng.IntN(len(claimed))
				j := claimed[k]
				claimed = slices.Delete(claimed, k, k+1)
				j.State, j.Schedule.DueAt = states[rng.IntN(len(states))], at(1200)
				_ = s.Record(ctx, "w", j, nil) // fails when replaced, deleted or claimed again meanwhile
			}
		case 9:
			if err := s.DeleteJob(ctx, coll, name, ""); err != nil && !errors.Is(err, scheduler.ErrNotFound) {
				t.Fatal(err)
			}
		case 10:
			if rng.IntN(20) == 0 {
				if _, err := s.Prune(ctx, scheduler.PruneRequest{FinalJobsBefore: at(300)}); err != nil {
					t.Fatal(err)
				}
			}
		case 11:
			c, err := s.GetCollection(ctx, coll)
			if err != nil {
				t.Fatal(err)
			}
			if c.Definition.State() == scheduler.CollectionEnabled && rng.IntN(3) == 0 {
				c.Definition.Properties.State = scheduler.CollectionDisabled
			} else {
				c.Definition.Properties.State = scheduler.CollectionEnabled
			}
			if err := s.PutCollection(ctx, c); err != nil {
				t.Fatal(err)
			}
		}
		if step%500 == 499 {
			recount(t, s, fmt.Sprintf("after %d operations", step+1), at(1300))
		}
	}
}

func recount(t *testing.T, s *memory.Store, step string, now time.Time) {
	t.Helper()
	ctx := context.Background()
	colls, err := s.ListCollections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []scheduler.JobCount
	due, total := 0, 0
	for _, c := range colls {
		jobs, err := s.ListJobs(ctx, c.Name, scheduler.JobFilter{})
		if err != nil {
			t.Fatal(err)
		}
		total += len(jobs)
		n := map[scheduler.JobState]int{}
		for _, j := range jobs {
			n[j.State]++
			if c.Definition.State() == scheduler.CollectionEnabled && !j.Schedule.DueAt.IsZero() && !j.Schedule.DueAt.After(now) &&
				(j.LeaseOwner == "" || !j.LeaseUntil.After(now)) {
				due++
			}
		}
		for _, st := range []scheduler.JobState{"Completed", "Disabled", "Enabled", "Faulted"} {
			if n[st] > 0 {
				want = append(want, scheduler.JobCount{Collection: c.Name, State: st, Jobs: n[st]})
			}
		}
	}
	if total < 1000 {
		t.Fatalf("%s: only %d jobs left; the test no longer works at scale", step, total)
	}
	got, err := s.CountJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("%s: CountJobs (-recount +got):\n%s", step, diff)
	}
	if got, err := s.CountDue(ctx, now); err != nil || got != due {
		t.Errorf("%s: CountDue(%v) = %d, %v; recount %d", step, now, got, err, due)
	}
}
