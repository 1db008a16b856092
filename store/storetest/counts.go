package storetest

import (
	"cmp"
	"errors"
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
// alone, the outcomes of claimed jobs recorded as countRecords describes,
// and then creates, state changes and deletes racing from 8
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
		if err := s.DeleteCollection(ctx, "d", ""); err != nil {
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
	if err := s.DeleteJob(ctx, "c", "x", ""); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "DeleteJob(gone)", s.DeleteJob(ctx, "c", "x", ""), scheduler.ErrNotFound)
	putJob(t, s, "d", "one", t0.Add(time.Hour))
	check("deletes", jc("c", co, 1), jc("c", en, 2), jc("d", en, 1))

	// Retention deletes the final job.
	if _, err := s.Prune(ctx, scheduler.PruneRequest{FinalJobsBefore: t0.Add(time.Hour)}); err != nil {
		t.Fatalf("Prune: %v", err)
	}
	check("prune", jc("c", en, 2), jc("d", en, 1))
	if err := s.DeleteCollection(ctx, "d", ""); err != nil {
		t.Fatal(err)
	}
	check("collection deleted", jc("c", en, 2))
	countRecords(t, stores, check, jc("c", en, 2))

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
					if err := st.DeleteJob(ctx, "c", name, ""); err != nil {
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

// countRecords checks the counts through the outcomes of claimed jobs in
// collection "r", recorded by RecordBatch when the stores are
// [scheduler.BatchRecorder]s and otherwise by Record, one at a time: one
// batch that completes, faults, disables and leaves enabled two jobs
// each, one with KeepDefinition and one without, in which an element of
// a stale version, one whose lease another owner holds and one of a job
// disabled by a replace since its claim (the lease stays) fail; Records
// one at a time, one of which fails; a batch that holds a job twice,
// whose second element fails; and at last the collection's delete. base
// is what the other collections hold (all before "r"); check is
// RunCounts's.
func countRecords(t *testing.T, stores []scheduler.Store, check func(what string, want ...scheduler.JobCount), base ...scheduler.JobCount) {
	t.Helper()
	const (
		en = scheduler.JobEnabled
		di = scheduler.JobDisabled
		co = scheduler.JobCompleted
		fa = scheduler.JobFaulted
	)
	s, last := stores[0], stores[len(stores)-1]
	br, batches := s.(scheduler.BatchRecorder)
	record := func(owner string, batch []scheduler.RecordRequest) []error {
		if batches {
			return answers(t, br.RecordBatch(ctx, owner, batch), len(batch))
		}
		errs := make([]error, len(batch))
		for i, r := range batch {
			errs[i] = s.Record(ctx, owner, r.Job, r.History)
		}
		return errs
	}
	// want checks the counts, with those of "r" as n gives them.
	want := func(what string, n map[scheduler.JobState]int) {
		t.Helper()
		w := slices.Clone(base)
		for _, st := range slices.Sorted(maps.Keys(n)) {
			w = append(w, scheduler.JobCount{Collection: "r", State: st, Jobs: n[st]})
		}
		check(what, w...)
	}
	claim := func(st scheduler.Store, now time.Time, owner string, want ...string) map[string]*scheduler.JobRecord {
		t.Helper()
		claimed, err := st.ClaimDue(ctx, now, owner, now.Add(time.Minute), 100)
		if got := slices.Sorted(slices.Values(names(claimed))); err != nil || !slices.Equal(got, want) {
			t.Fatalf("ClaimDue(%v, %s) = %v, %v; want %v", now, owner, got, err, want)
		}
		byName := map[string]*scheduler.JobRecord{}
		for _, j := range claimed {
			byName[j.Name] = j
		}
		return byName
	}
	outcome := func(j *scheduler.JobRecord, st scheduler.JobState, due time.Time, keep bool) scheduler.RecordRequest {
		j.State, j.Schedule.DueAt = st, due
		j.Status.ExecutionCount++
		e := entry(j.Status.ExecutionCount, scheduler.StatusCompleted, due)
		e.Collection, e.Job, e.Message = j.Collection, j.Name, fmt.Sprintf("%s: %s", j.Name, st)
		return scheduler.RecordRequest{Job: j, History: []scheduler.HistoryEntry{e}, KeepDefinition: keep}
	}
	// The jobs of "r" fall due before any other collection's.
	due := t0.Add(-2 * time.Hour)
	later := due.Add(time.Hour)
	putCollection(t, s, "r", 0)
	putJob(t, last, "r", "lost", due)
	lost := claim(s, due, "other", "r/lost")["lost"]
	jobs := []string{"done", "done-kept", "fault", "fault-kept", "off", "off-kept", "replaced", "stale", "stay", "stay-kept"}
	for i, n := range jobs {
		putJob(t, stores[i%len(stores)], "r", n, due)
	}
	want("jobs to record", map[scheduler.JobState]int{en: 11})

	mine := claim(last, due, "me", "r/done", "r/done-kept", "r/fault", "r/fault-kept", "r/off", "r/off-kept", "r/replaced",
		"r/stale", "r/stay", "r/stay-kept")
	replace, err := s.GetJob(ctx, "r", "replaced")
	if err != nil {
		t.Fatal(err)
	}
	replace.State, replace.Schedule.DueAt = di, time.Time{}
	if err := s.PutJob(ctx, replace); err != nil {
		t.Fatalf("PutJob(r/replaced, disabled, leased): %v", err)
	}
	want("a claimed job disabled by a replace", map[scheduler.JobState]int{di: 1, en: 10})
	stale := mine["stale"].Clone()
	stale.Version--
	batch := []scheduler.RecordRequest{
		outcome(mine["done"], co, time.Time{}, false),
		outcome(mine["done-kept"], co, time.Time{}, true),
		outcome(mine["fault"], fa, time.Time{}, false),
		outcome(mine["fault-kept"], fa, time.Time{}, true),
		outcome(mine["off"], di, time.Time{}, false),
		outcome(mine["off-kept"], di, time.Time{}, true),
		outcome(stale, co, time.Time{}, true),
		outcome(mine["replaced"], co, time.Time{}, true),
		outcome(lost, fa, time.Time{}, false),
		outcome(mine["stay"], en, later, false),
		outcome(mine["stay-kept"], en, later, true),
	}
	for i, err := range record("me", batch) {
		switch n := batch[i].Job.Name; n {
		case "stale":
			wantErr(t, "record of r/stale at a stale version", err, scheduler.ErrConflict)
		case "replaced":
			wantErr(t, "record of r/replaced, replaced since its claim", err, scheduler.ErrConflict)
		case "lost":
			wantErr(t, "record of r/lost, leased to another owner", err, scheduler.ErrLeaseLost)
		default:
			if err != nil {
				t.Errorf("record of r/%s: %v", n, err)
			}
		}
	}
	want("a batch of outcomes, three of which fail", map[scheduler.JobState]int{co: 2, di: 3, en: 4, fa: 2})

	// One at a time: r/stale again at its version (after a failed
	// attempt at the stale one), r/lost by the owner of its lease.
	if err := last.Record(ctx, "me", stale, nil); !errors.Is(err, scheduler.ErrConflict) {
		t.Errorf("Record(r/stale at a stale version): %v, want an error matching %v", err, scheduler.ErrConflict)
	}
	if err := last.Record(ctx, "me", outcome(mine["stale"], co, time.Time{}, false).Job, nil); err != nil {
		t.Errorf("Record(r/stale): %v", err)
	}
	if err := s.Record(ctx, "other", lost, nil); err != nil {
		t.Errorf("Record(r/lost) by the owner of its lease: %v", err)
	}
	want("outcomes recorded one at a time, one of which fails", map[scheduler.JobState]int{co: 3, di: 3, en: 2, fa: 3})

	// A batch that holds r/stay twice: the first element releases the
	// lease, so the second fails.
	mine = claim(s, later, "me", "r/stay", "r/stay-kept")
	twice := mine["stay"].Clone()
	batch = []scheduler.RecordRequest{
		outcome(mine["stay"], di, time.Time{}, true),
		outcome(mine["stay-kept"], en, later.Add(time.Hour), true),
		outcome(twice, co, time.Time{}, false),
	}
	errs := record("me", batch)
	if errs[0] != nil || errs[1] != nil {
		t.Errorf("a batch that holds r/stay twice: %v, %v for its first two elements, want success", errs[0], errs[1])
	}
	wantErr(t, "the second element for r/stay in one batch", errs[2], scheduler.ErrLeaseLost)
	want("a batch that holds a job twice", map[scheduler.JobState]int{co: 3, di: 4, en: 1, fa: 3})

	if err := last.DeleteCollection(ctx, "r", ""); err != nil {
		t.Fatal(err)
	}
	check("a collection of jobs in every state deleted", base...)
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
	if err := s.DeleteJob(ctx, "a", "3", ""); err != nil {
		t.Fatalf("DeleteJob(a/3): %v", err)
	}
	check("after a create and a delete",
		scheduler.JobCount{Collection: "a", State: scheduler.JobEnabled, Jobs: 2},
		scheduler.JobCount{Collection: "b", State: scheduler.JobEnabled, Jobs: 2})
}
