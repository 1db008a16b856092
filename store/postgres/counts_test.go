package postgres_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
)

// deltaRows returns the number of rows of job_count_deltas in schema q.
func deltaRows(t *testing.T, c *pgx.Conn, q string) int {
	t.Helper()
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM "+q+".job_count_deltas").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCountsOfEachWrite checks, write by write, the job counts and the
// rows of changes each write adds to job_count_deltas: a create (in its
// own statement), a create in a host's transaction (counted when it
// commits, not when it rolls back), a bulk create (one row per state,
// whatever the number of jobs), a state change through a record, a
// replace that changes the state, a delete and a collection's delete.
func TestCountsOfEachWrite(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	c := connect(t)
	q := pgx.Identifier{schema}.Sanitize()
	deltas := func() int { return deltaRows(t, c, q) }
	rows := deltas()
	step := func(what string, newRows int, want ...scheduler.JobCount) {
		t.Helper()
		if got := deltas(); got != rows+newRows {
			t.Errorf("%s: added %d rows of changes, want %d", what, got-rows, newRows)
		}
		rows = deltas()
		got, err := s.CountJobs(ctx) // folds the changes
		if err != nil {
			t.Fatalf("%s: CountJobs: %v", what, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: CountJobs (-want +got):\n%s", what, diff)
		}
		rows = deltas()
	}
	jc := func(coll string, st scheduler.JobState, n int) scheduler.JobCount {
		return scheduler.JobCount{Collection: coll, State: st, Jobs: n}
	}
	job := func(coll, name string, st scheduler.JobState) *scheduler.JobRecord {
		return &scheduler.JobRecord{Collection: coll, Name: name, Job: &scheduler.Job{}, State: st}
	}
	const (
		en = scheduler.JobEnabled
		di = scheduler.JobDisabled
		co = scheduler.JobCompleted
	)
	for _, name := range []string{"c", "d"} {
		if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: name}); err != nil {
			t.Fatal(err)
		}
	}

	one := job("c", "one", en)
	one.Schedule.DueAt = t0 // the only job due
	if err := s.PutJob(ctx, one); err != nil {
		t.Fatal(err)
	}
	step("a create", 1, jc("c", en, 1))

	pool := hostPool(t)
	for _, commit := range []bool{false, true} {
		inHostTx(t, pool, s, commit, func(v scheduler.TxStore) {
			for i := range 3 {
				if err := v.PutJob(ctx, job("c", fmt.Sprintf("tx%d", i), di)); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	step("three creates in a host's transaction rolled back, then three committed", 3, jc("c", di, 3), jc("c", en, 1))

	var bulk []*scheduler.JobRecord
	for i := range 50 {
		st := en
		if i%10 == 0 {
			st = di
		}
		bulk = append(bulk, job("d", fmt.Sprintf("b%d", i), st))
	}
	if err := s.PutJobs(ctx, "d", bulk); err != nil {
		t.Fatal(err)
	}
	step("a bulk create of 45 enabled and 5 disabled jobs", 2, jc("c", di, 3), jc("c", en, 1), jc("d", di, 5), jc("d", en, 45))

	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 1)
	if err != nil || len(claimed) != 1 || claimed[0].Name != "one" {
		t.Fatalf("ClaimDue = %v, %v; want c/one", claimed, err)
	}
	claimed[0].State = co
	if err := s.Record(ctx, "me", claimed[0], nil); err != nil {
		t.Fatal(err)
	}
	step("a record that completes a job", 2, jc("c", co, 1), jc("c", di, 3), jc("d", di, 5), jc("d", en, 45))

	r, err := s.GetJob(ctx, "c", "tx0")
	if err != nil {
		t.Fatal(err)
	}
	r.State = en
	if err := s.PutJob(ctx, r); err != nil {
		t.Fatal(err)
	}
	step("a replace that enables a job", 2, jc("c", co, 1), jc("c", di, 2), jc("c", en, 1), jc("d", di, 5), jc("d", en, 45))

	if err := s.DeleteJob(ctx, "c", "tx1", ""); err != nil {
		t.Fatal(err)
	}
	step("a delete", 1, jc("c", co, 1), jc("c", di, 1), jc("c", en, 1), jc("d", di, 5), jc("d", en, 45))

	if err := s.DeleteCollection(ctx, "d", ""); err != nil {
		t.Fatal(err)
	}
	step("a collection's delete", 2, jc("c", co, 1), jc("c", di, 1), jc("c", en, 1))
}

// TestCountsOfRecords: records count their changes of state themselves
// (migration 15), in the statement that records: a batch that completes,
// faults, disables (keeping the definition) and leaves a job as it was,
// with an element that fails and changes nothing; a single record, and
// its repeat after it committed, which changes nothing; a batch that
// holds a job twice (recorded one statement per element), whose second
// element fails.
func TestCountsOfRecords(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	c := connect(t)
	q := pgx.Identifier{schema}.Sanitize()
	deltas := func() int { return deltaRows(t, c, q) }
	const (
		en = scheduler.JobEnabled
		di = scheduler.JobDisabled
		co = scheduler.JobCompleted
		fa = scheduler.JobFaulted
	)
	step := func(what string, newRows int, want map[scheduler.JobState]int) {
		t.Helper()
		rows := deltas()
		got, err := s.CountJobs(ctx) // folds the changes
		if err != nil {
			t.Fatalf("%s: CountJobs: %v", what, err)
		}
		if rows != newRows {
			t.Errorf("%s: added %d rows of changes, want %d", what, rows, newRows)
		}
		var wantCounts []scheduler.JobCount
		for _, st := range []scheduler.JobState{co, di, en, fa} {
			if n := want[st]; n > 0 {
				wantCounts = append(wantCounts, scheduler.JobCount{Collection: "c", State: st, Jobs: n})
			}
		}
		if diff := cmp.Diff(wantCounts, got); diff != "" {
			t.Errorf("%s: CountJobs (-want +got):\n%s", what, diff)
		}
		if _, err := c.Exec(ctx, "DELETE FROM "+q+".job_count_deltas"); err != nil { // folded: only the next step's rows remain
			t.Fatal(err)
		}
	}
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	names := []string{"a", "b", "c", "d", "e"}
	for _, n := range names {
		j := &scheduler.JobRecord{Collection: "c", Name: n, Job: &scheduler.Job{}, State: en, Schedule: scheduler.JobSchedule{DueAt: t0}}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	step("five creates", 5, map[scheduler.JobState]int{en: 5})
	claim := func(want int) map[string]*scheduler.JobRecord {
		t.Helper()
		claimed, err := s.ClaimDue(ctx, t0.Add(time.Hour), "me", t0.Add(2*time.Hour), 10)
		if err != nil || len(claimed) != want {
			t.Fatalf("ClaimDue = %d jobs, %v; want %d", len(claimed), err, want)
		}
		byName := map[string]*scheduler.JobRecord{}
		for _, j := range claimed {
			byName[j.Name] = j
		}
		return byName
	}
	hist := func(job, msg string) []scheduler.HistoryEntry {
		return []scheduler.HistoryEntry{{Collection: "c", Job: job, Status: scheduler.StatusCompleted, StartTime: t0, EndTime: t0, Message: msg}}
	}
	byName := claim(5)
	for _, n := range []string{"a", "b", "d", "e"} {
		byName[n].Schedule.DueAt = time.Time{} // only c stays due
	}
	byName["a"].State = co
	byName["b"].State = fa
	byName["d"].State, byName["d"].Version = co, byName["d"].Version-1
	byName["e"].State = di
	batch := []scheduler.RecordRequest{
		{Job: byName["a"], History: hist("a", "1")},
		{Job: byName["b"], History: hist("b", "1")},
		{Job: byName["c"], History: hist("c", "1")},
		{Job: byName["d"], History: hist("d", "1")},
		{Job: byName["e"], History: hist("e", "1"), KeepDefinition: true},
	}
	errs := s.RecordBatch(ctx, "me", batch)
	for i, err := range errs {
		if (err != nil) != (i == 3) {
			t.Errorf("RecordBatch element %d (%s): %v; want only d to fail", i, batch[i].Job.Name, err)
		}
	}
	step("a batch that completes, faults, disables and keeps one job each, and fails for another", 4,
		map[scheduler.JobState]int{co: 1, di: 1, en: 2, fa: 1})

	// d is still leased to me; c was released.
	d, err := s.GetJob(ctx, "c", "d")
	if err != nil {
		t.Fatal(err)
	}
	d.State, d.Schedule.DueAt = co, time.Time{}
	again := d.Clone()
	if err := s.Record(ctx, "me", d, hist("d", "2")); err != nil {
		t.Fatal(err)
	}
	step("a record that completes a job", 2, map[scheduler.JobState]int{co: 2, di: 1, en: 1, fa: 1})
	if err := s.Record(ctx, "me", again, hist("d", "2")); err != nil {
		t.Errorf("the repeat of a committed Record: %v, want nil", err)
	}
	step("the repeat of a committed record", 0, map[scheduler.JobState]int{co: 2, di: 1, en: 1, fa: 1})

	byName = claim(1) // c
	first := byName["c"]
	first.State = co
	second := first.Clone()
	errs = s.RecordBatch(ctx, "me", []scheduler.RecordRequest{
		{Job: first, History: hist("c", "2"), KeepDefinition: true},
		{Job: second, History: hist("c", "3")},
	})
	if len(errs) != 2 || errs[0] != nil || !errors.Is(errs[1], scheduler.ErrLeaseLost) {
		t.Errorf("RecordBatch of one job twice = %v; want nil, then an error matching ErrLeaseLost", errs)
	}
	step("a batch that holds a job twice", 2, map[scheduler.JobState]int{co: 3, di: 1, fa: 1})
}

// TestRecount: counts that drifted (a create that inserted no change, as
// a process of a build before schema 14 makes after the upgrade, and a
// change without a job) are put right by Recount, while creates go on in
// other connections: each of those is counted once, whether it commits
// before Recount's lock or waits for it.
func TestRecount(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	c := connect(t)
	q := pgx.Identifier{schema}.Sanitize()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	put := func(name string, st scheduler.JobState) {
		t.Helper()
		if err := s.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: name, Job: &scheduler.Job{}, State: st}); err != nil {
			t.Fatalf("PutJob(%s): %v", name, err)
		}
	}
	put("a", scheduler.JobEnabled)
	put("b", scheduler.JobDisabled)
	if _, err := s.CountJobs(ctx); err != nil { // folds both
		t.Fatal(err)
	}
	put("uncounted", scheduler.JobEnabled)
	if _, err := c.Exec(ctx, "DELETE FROM "+q+".job_count_deltas"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "INSERT INTO "+q+".job_count_deltas (collection, state, n) VALUES ('c', 'Disabled', -3)"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.CountJobs(ctx); err != nil || cmp.Equal(got, []scheduler.JobCount{{Collection: "c", State: scheduler.JobEnabled, Jobs: 2}, {Collection: "c", State: scheduler.JobDisabled, Jobs: 1}}) {
		t.Fatalf("CountJobs before Recount = %+v, %v; want counts that drifted", got, err)
	}
	const puts = 40
	var errs []error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range puts {
			if err := s.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: fmt.Sprintf("p%d", i), Job: &scheduler.Job{}, State: scheduler.JobEnabled}); err != nil {
				errs = append(errs, err)
			}
		}
	}()
	time.Sleep(5 * time.Millisecond)
	if err := s.Recount(ctx); err != nil {
		t.Fatalf("Recount: %v", err)
	}
	<-done
	for _, err := range errs {
		t.Errorf("PutJob during Recount: %v", err)
	}
	got, err := s.CountJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []scheduler.JobCount{{Collection: "c", State: scheduler.JobDisabled, Jobs: 1}, {Collection: "c", State: scheduler.JobEnabled, Jobs: 2 + puts}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CountJobs after Recount (-want +got):\n%s", diff)
	}
}

// TestRecordCountsWithClaimedState: a record of a claimed job counts the
// change from the state the claim saw only when the record is of the same
// job at the same version; a record that comes with another job's claim,
// or with its own claim after a replace changed the job's state, counts
// the change from the state stored. Record and RecordBatch alike.
func TestRecordCountsWithClaimedState(t *testing.T) {
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) {
			s := open(t, newSchema(t))
			record := func(r *scheduler.JobRecord) {
				t.Helper()
				var err error
				if batch {
					err = s.RecordBatch(ctx, "me", []scheduler.RecordRequest{{Job: r}})[0]
				} else {
					err = s.Record(ctx, "me", r, nil)
				}
				if err != nil {
					t.Fatalf("record %s: %v", r.Name, err)
				}
			}
			if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"a", "b", "c"} {
				j := &scheduler.JobRecord{Collection: "c", Name: name, Job: &scheduler.Job{}, State: scheduler.JobEnabled}
				j.Schedule.DueAt = t0
				if err := s.PutJob(ctx, j); err != nil {
					t.Fatal(err)
				}
			}
			claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 10)
			if err != nil || len(claimed) != 3 {
				t.Fatalf("ClaimDue = %d jobs, %v; want 3", len(claimed), err)
			}
			a, b, c := claimed[0], claimed[1], claimed[2]
			// b and c become Disabled, their leases kept.
			for _, j := range []*scheduler.JobRecord{b, c} {
				j.State = scheduler.JobDisabled
				if err := s.PutJob(ctx, j.Clone()); err != nil {
					t.Fatal(err)
				}
				j.Version++
			}
			// b recorded with a's claim: another job.
			rb := a.Clone()
			rb.Name, rb.Version, rb.State, rb.Incarnation = "b", b.Version, scheduler.JobCompleted, b.Incarnation
			record(rb)
			// c recorded with its own claim, now out of date.
			c.State = scheduler.JobCompleted
			record(c)
			// a recorded with its own claim.
			a.State = scheduler.JobCompleted
			record(a)
			got, err := s.CountJobs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := []scheduler.JobCount{{Collection: "c", State: scheduler.JobCompleted, Jobs: 3}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("CountJobs (-want +got):\n%s", diff)
			}
		})
	}
}
