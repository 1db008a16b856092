package storetest

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	scheduler "github.com/jobclock/scheduler"
)

// RunCounts checks that [scheduler.StatsReader.CountJobs] follows every
// write that creates a job, deletes one or changes its state, made
// through any of stores (instances over one shared database, or a single
// store), each of which must be a StatsReader: single and bulk puts (when
// the store is a [scheduler.BulkPutter]), replaces that change the state
// and that do not, outcomes recorded by Record, deletes, prunes of final
// jobs, a deleted collection, writes that fail and leave the counts
// alone, and then creates, state changes and deletes racing from 8
// goroutines across the stores. After each step every store's counts must
// equal the expected ones, which are also those the listings give.
func RunCounts(t *testing.T, stores []scheduler.Store) {
	t.Helper()
	s := stores[0]
	step := 0
	check := func(what string, want ...scheduler.JobCount) {
		t.Helper()
		step++
		for i, st := range stores {
			got, err := statsReader(t, st).CountJobs(ctx)
			if err != nil {
				t.Fatalf("step %d (%s): CountJobs (store %d): %v", step, what, i, err)
			}
			if diff := gocmp.Diff(want, got, emptyEqual); diff != "" {
				t.Errorf("step %d (%s): CountJobs (store %d) (-want +got):\n%s", step, what, i, diff)
			}
		}
		if diff := gocmp.Diff(want, listedCounts(t, s), emptyEqual); diff != "" {
			t.Fatalf("step %d (%s): the expected counts differ from the listings' (-want +listed):\n%s", step, what, diff)
		}
	}
	jc := func(coll string, st scheduler.JobState, n int) scheduler.JobCount {
		return scheduler.JobCount{Collection: coll, State: st, Jobs: n}
	}
	const (
		en = scheduler.JobEnabled
		di = scheduler.JobDisabled
		co = scheduler.JobCompleted
	)
	check("empty store")
	putCollection(t, s, "c", 1000)
	putCollection(t, s, "d", 100)
	check("collections without jobs")

	for i := range 3 {
		putJob(t, stores[i%len(stores)], "c", fmt.Sprintf("e%d", i), t0)
	}
	dis := newJob("c", "x", time.Time{})
	dis.State = di
	if err := s.PutJob(ctx, dis); err != nil {
		t.Fatal(err)
	}
	check("single creates", jc("c", di, 1), jc("c", en, 3))

	bp, bulk := s.(scheduler.BulkPutter)
	if bulk {
		var batch []*scheduler.JobRecord
		for i := range 50 {
			j := newJob("d", fmt.Sprintf("b%02d", i), t0.Add(time.Hour))
			if i%5 == 0 {
				j.State = di
			}
			batch = append(batch, j)
		}
		if err := bp.PutJobs(ctx, "d", batch); err != nil {
			t.Fatalf("PutJobs: %v", err)
		}
		check("bulk creates", jc("c", di, 1), jc("c", en, 3), jc("d", di, 10), jc("d", en, 40))
		// A batch that fails (its last job exists) creates none.
		failed := []*scheduler.JobRecord{newJob("d", "new1", t0), newJob("d", "new2", t0), newJob("d", "b01", t0)}
		if err := bp.PutJobs(ctx, "d", failed); err == nil {
			t.Fatal("PutJobs of a batch whose last job exists: no error")
		}
		check("a failed bulk put", jc("c", di, 1), jc("c", en, 3), jc("d", di, 10), jc("d", en, 40))
		// Replaces in a batch: one changes its state, one does not.
		got, err := bp.GetJobs(ctx, "d", []string{"b00", "b01"})
		if err != nil {
			t.Fatal(err)
		}
		got[0].State, got[1].ETag = en, "j2"
		if err := bp.PutJobs(ctx, "d", got); err != nil {
			t.Fatalf("PutJobs (replaces): %v", err)
		}
		check("bulk replaces", jc("c", di, 1), jc("c", en, 3), jc("d", di, 9), jc("d", en, 41))
		if err := s.DeleteCollection(ctx, "d"); err != nil {
			t.Fatal(err)
		}
		putCollection(t, s, "d", 100)
		check("collection deleted and put again", jc("c", di, 1), jc("c", en, 3))
	}

	// Replaces: one changes the state, one does not, one fails.
	x, err := stores[len(stores)-1].GetJob(ctx, "c", "x")
	if err != nil {
		t.Fatal(err)
	}
	x.State = en
	if err := stores[len(stores)-1].PutJob(ctx, x); err != nil {
		t.Fatal(err)
	}
	e0, err := s.GetJob(ctx, "c", "e0")
	if err != nil {
		t.Fatal(err)
	}
	e0.ETag = "j2"
	if err := s.PutJob(ctx, e0); err != nil {
		t.Fatal(err)
	}
	e0.State = di // e0.Version is stale now
	wantErr(t, "PutJob(stale version)", s.PutJob(ctx, e0), scheduler.ErrConflict)
	check("replaces", jc("c", en, 4))

	// A claimed one-time job completes: Record changes its state.
	claimed, err := stores[len(stores)-1].ClaimDue(ctx, t0, "w", t0.Add(time.Minute), 1)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimDue = %v, %v; want one job", names(claimed), err)
	}
	done := claimed[0]
	done.State, done.Schedule.DueAt, done.Updated = co, time.Time{}, t0
	if err := stores[len(stores)-1].Record(ctx, "w", done, nil); err != nil {
		t.Fatalf("Record: %v", err)
	}
	check("an outcome recorded", jc("c", co, 1), jc("c", en, 3))

	// Deletes, and a delete of a job that is gone.
	if err := s.DeleteJob(ctx, "c", "x"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "DeleteJob(gone)", s.DeleteJob(ctx, "c", "x"), scheduler.ErrNotFound)
	putJob(t, s, "d", "one", t0.Add(time.Hour))
	check("deletes", jc("c", co, 1), jc("c", en, 2), jc("d", en, 1))

	// Retention deletes the final job.
	if _, err := s.Prune(ctx, scheduler.PruneRequest{FinalJobsBefore: t0.Add(time.Hour)}); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	check("prune", jc("c", en, 2), jc("d", en, 1))
	if err := s.DeleteCollection(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	check("collection deleted", jc("c", en, 2))

	// Racing writers: creates, state changes and deletes (and bulk puts)
	// from 8 goroutines over the stores.
	var wg sync.WaitGroup
	var mu sync.Mutex
	want := map[scheduler.JobState]int{en: 2}
	for w := range 8 {
		st := stores[w%len(stores)]
		wg.Go(func() {
			n := map[scheduler.JobState]int{}
			for i := range 24 {
				name := fmt.Sprintf("w%d-%02d", w, i)
				if bp, ok := st.(scheduler.BulkPutter); ok && w%4 == 3 && i%6 == 0 {
					batch := []*scheduler.JobRecord{newJob("c", name, t0), newJob("c", name+"b", t0)}
					if err := bp.PutJobs(ctx, "c", batch); err != nil {
						t.Errorf("PutJobs(%s): %v", name, err)
						return
					}
					n[en] += 2
					continue
				}
				if err := st.PutJob(ctx, newJob("c", name, t0.Add(time.Hour))); err != nil {
					t.Errorf("PutJob(%s): %v", name, err)
					return
				}
				n[en]++
				switch i % 3 {
				case 1: // disabled
					j, err := st.GetJob(ctx, "c", name)
					if err != nil {
						t.Errorf("GetJob(%s): %v", name, err)
						return
					}
					j.State = di
					if err := st.PutJob(ctx, j); err != nil {
						t.Errorf("PutJob(%s, disabled): %v", name, err)
						return
					}
					n[en]--
					n[di]++
				case 2: // deleted
					if err := st.DeleteJob(ctx, "c", name); err != nil {
						t.Errorf("DeleteJob(%s): %v", name, err)
						return
					}
					n[en]--
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for k, v := range n {
				want[k] += v
			}
		})
	}
	wg.Wait()
	var raced []scheduler.JobCount
	for _, st := range slices.Sorted(maps.Keys(want)) {
		raced = append(raced, jc("c", st, want[st]))
	}
	check("racing writers", raced...)
}

// listedCounts returns the job counts of s as its listings give them.
func listedCounts(t *testing.T, s scheduler.Store) []scheduler.JobCount {
	t.Helper()
	colls, err := s.ListCollections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []scheduler.JobCount
	for _, c := range colls {
		jobs, err := s.ListJobs(ctx, c.Name, scheduler.JobFilter{})
		if err != nil {
			t.Fatal(err)
		}
		n := map[scheduler.JobState]int{}
		for _, j := range jobs {
			n[j.State]++
		}
		for _, st := range slices.Sorted(maps.Keys(n)) {
			out = append(out, scheduler.JobCount{Collection: c.Name, State: st, Jobs: n[st]})
		}
	}
	slices.SortFunc(out, func(a, b scheduler.JobCount) int {
		return cmp.Or(cmp.Compare(a.Collection, b.Collection), cmp.Compare(a.State, b.State))
	})
	return out
}

// PutJobsForCounts puts collections "a" and "b" and jobs a/1 and a/2
// (enabled), a/3 (disabled) and b/1 (enabled), for a backend's migration
// test: it takes away the store's job counts, then calls
// CheckCountsAfterMigration on the store opened again.
func PutJobsForCounts(t *testing.T, s scheduler.Store) {
	t.Helper()
	putCollection(t, s, "a", 0)
	putCollection(t, s, "b", 0)
	for _, id := range []string{"a/1", "a/2", "a/3", "b/1"} {
		j := newJob(id[:1], id[2:], t0)
		if id == "a/3" {
			j.State = scheduler.JobDisabled
		}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatalf("PutJob(%s): %v", id, err)
		}
	}
}

// CheckCountsAfterMigration checks the counts of the jobs PutJobsForCounts
// put, in a store migrated since, and that they follow a create and a
// delete after the migration.
func CheckCountsAfterMigration(t *testing.T, s scheduler.Store) {
	t.Helper()
	r := statsReader(t, s)
	check := func(what string, want ...scheduler.JobCount) {
		t.Helper()
		got, err := r.CountJobs(ctx)
		if err != nil {
			t.Fatalf("CountJobs %s: %v", what, err)
		}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("CountJobs %s (-want +got):\n%s", what, diff)
		}
	}
	check("after the migration",
		scheduler.JobCount{Collection: "a", State: scheduler.JobDisabled, Jobs: 1},
		scheduler.JobCount{Collection: "a", State: scheduler.JobEnabled, Jobs: 2},
		scheduler.JobCount{Collection: "b", State: scheduler.JobEnabled, Jobs: 1})
	if err := s.PutJob(ctx, newJob("b", "2", t0)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteJob(ctx, "a", "3"); err != nil {
		t.Fatalf("DeleteJob(a/3): %v", err)
	}
	check("after a create and a delete",
		scheduler.JobCount{Collection: "a", State: scheduler.JobEnabled, Jobs: 2},
		scheduler.JobCount{Collection: "b", State: scheduler.JobEnabled, Jobs: 2})
}
