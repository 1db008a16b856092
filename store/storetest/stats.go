package storetest

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	scheduler "github.com/jobclock/scheduler"
)

// RunStats checks [scheduler.StatsReader] on stores made by newStore,
// which must implement it: exact counts and listings after a scripted
// sequence of puts, claims, recorded outcomes with history, lease changes,
// collection state changes, deletes and prunes; and, after random
// operations, answers that agree with what the Store's listings say.
func RunStats(t *testing.T, newStore func(t *testing.T) scheduler.Store) {
	t.Run("Scripted", func(t *testing.T) { statsScripted(t, newStore(t)) })
	t.Run("AgreesWithListings", func(t *testing.T) { statsRandom(t, newStore(t)) })
	t.Run("RecordsAreTheCallers", func(t *testing.T) { statsOwned(t, newStore(t)) })
}

func statsReader(t *testing.T, s scheduler.Store) scheduler.StatsReader {
	t.Helper()
	r, ok := s.(scheduler.StatsReader)
	if !ok {
		t.Fatalf("%T does not implement scheduler.StatsReader", s)
	}
	return r
}

// statsChecker compares a store's aggregate answers with expectations.
type statsChecker struct {
	t *testing.T
	r scheduler.StatsReader
}

var emptyEqual = cmpopts.EquateEmpty()

func (c statsChecker) jobs(step string, want ...scheduler.JobCount) {
	c.t.Helper()
	got, err := c.r.CountJobs(ctx)
	if err != nil {
		c.t.Fatalf("%s: CountJobs: %v", step, err)
	}
	if diff := gocmp.Diff(want, got, emptyEqual); diff != "" {
		c.t.Errorf("%s: CountJobs (-want +got):\n%s", step, diff)
	}
}

func (c statsChecker) due(step string, now time.Time, want int) {
	c.t.Helper()
	got, err := c.r.CountDue(ctx, now)
	if err != nil {
		c.t.Fatalf("%s: CountDue(%v): %v", step, now, err)
	}
	if got != want {
		c.t.Errorf("%s: CountDue(%v) = %d, want %d", step, now, got, want)
	}
}

func (c statsChecker) history(step string, from, to time.Time, width time.Duration, want ...scheduler.HistoryCount) {
	c.t.Helper()
	c.historyOf(step, nil, from, to, width, want...)
}

func (c statsChecker) historyOf(step string, colls []string, from, to time.Time, width time.Duration, want ...scheduler.HistoryCount) {
	c.t.Helper()
	got, err := c.r.CountHistory(ctx, from, to, width, colls)
	if err != nil {
		c.t.Fatalf("%s: CountHistory(%v, %v, %v, %q): %v", step, from, to, width, colls, err)
	}
	if diff := gocmp.Diff(want, got, emptyEqual); diff != "" {
		c.t.Errorf("%s: CountHistory(%v, %v, %v, %q) (-want +got):\n%s", step, from, to, width, colls, diff)
	}
	for _, h := range got {
		if h.Start.Location() != time.UTC {
			c.t.Errorf("%s: CountHistory(%v, %v, %v): Start %v is not in UTC", step, from, to, width, h.Start)
		}
	}
}

// listed checks a job's history listing with filter f.
func (c statsChecker) listed(step string, s scheduler.Store, coll, job string, f scheduler.HistoryFilter, want ...scheduler.HistoryEntry) {
	c.t.Helper()
	got, err := s.ListHistory(ctx, coll, job, f)
	if err != nil {
		c.t.Fatalf("%s: ListHistory(%s/%s, %+v): %v", step, coll, job, f, err)
	}
	if diff := gocmp.Diff(want, got, emptyEqual); diff != "" {
		c.t.Errorf("%s: ListHistory(%s/%s, %+v) (-want +got):\n%s", step, coll, job, f, diff)
	}
}

func (c statsChecker) recent(step string, f scheduler.HistoryFilter, want ...scheduler.HistoryEntry) {
	c.t.Helper()
	got, err := c.r.RecentHistory(ctx, f)
	if err != nil {
		c.t.Fatalf("%s: RecentHistory(%+v): %v", step, f, err)
	}
	if diff := gocmp.Diff(want, got, emptyEqual); diff != "" {
		c.t.Errorf("%s: RecentHistory(%+v) (-want +got):\n%s", step, f, diff)
	}
}

// claimOnly claims at now and fails the test unless exactly the jobs
// named (collection/name, in claim order) are claimed.
func claimOnly(t *testing.T, s scheduler.Store, now, until time.Time, limit int, want ...string) []*scheduler.JobRecord {
	t.Helper()
	got, err := s.ClaimDue(ctx, now, "w", until, limit)
	if err != nil {
		t.Fatalf("ClaimDue(%v): %v", now, err)
	}
	if !equal(names(got), want) {
		t.Fatalf("ClaimDue(%v) = %v, want %v", now, names(got), want)
	}
	return got
}

func statsScripted(t *testing.T, s scheduler.Store) {
	c := statsChecker{t, statsReader(t, s)}
	const (
		main  = scheduler.MainAction
		errA  = scheduler.ErrorAction
		done  = scheduler.StatusCompleted
		fail  = scheduler.StatusFailed
		later = scheduler.StatusPostponed
	)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	jc := func(coll string, st scheduler.JobState, n int) scheduler.JobCount {
		return scheduler.JobCount{Collection: coll, State: st, Jobs: n}
	}
	hc := func(start time.Time, a scheduler.ActionName, st scheduler.ExecutionStatus, n int, retriesFaulted ...int) scheduler.HistoryCount {
		c := scheduler.HistoryCount{Start: start, ActionName: a, Status: st, Entries: n}
		if len(retriesFaulted) == 2 {
			c.Retries, c.Faulted = retriesFaulted[0], retriesFaulted[1]
		}
		return c
	}
	he := func(msg, coll, job string, a scheduler.ActionName, st scheduler.ExecutionStatus, end time.Time) scheduler.HistoryEntry {
		return scheduler.HistoryEntry{Collection: coll, Job: job, ActionName: a, Status: st, ExpectedExecutionTime: at(0),
			StartTime: end, EndTime: end, RepeatCount: 1, Message: msg, ExecutionTag: "tag-" + msg}
	}
	job := func(coll, name string, st scheduler.JobState, due time.Time) {
		t.Helper()
		j := newJob(coll, name, due)
		j.State = st
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatalf("PutJob(%s/%s): %v", coll, name, err)
		}
	}
	record := func(j *scheduler.JobRecord, st scheduler.JobState, due, updated time.Time, hist ...scheduler.HistoryEntry) {
		t.Helper()
		j.State, j.Schedule.DueAt, j.Updated = st, due, updated
		if err := s.Record(ctx, "w", j, hist); err != nil {
			t.Fatalf("Record(%s): %v", j.ID(), err)
		}
	}

	c.jobs("empty store")
	c.due("empty store", at(0), 0)
	c.history("empty store", at(0), at(time.Hour), time.Minute)
	c.recent("empty store", scheduler.HistoryFilter{})

	putCollection(t, s, "a", 0)
	putCollection(t, s, "b", 0)
	d := putCollection(t, s, "d", 0)
	d.Definition.Properties.State = scheduler.CollectionDisabled
	if err := s.PutCollection(ctx, d); err != nil {
		t.Fatalf("PutCollection(disable d): %v", err)
	}
	putCollection(t, s, "e", 0) // no jobs: never counted
	job("a", "j1", scheduler.JobEnabled, at(0))
	job("a", "j2", scheduler.JobEnabled, at(time.Minute))
	job("a", "j3", scheduler.JobEnabled, at(2*time.Hour))
	job("a", "j4", scheduler.JobDisabled, time.Time{})
	job("a", "j5", scheduler.JobCompleted, time.Time{})
	job("b", "k1", scheduler.JobEnabled, at(-time.Minute))
	job("b", "k2", scheduler.JobFaulted, time.Time{})
	job("d", "x1", scheduler.JobEnabled, at(0)) // its collection is Disabled

	step := "after puts"
	c.jobs(step, jc("a", "Completed", 1), jc("a", "Disabled", 1), jc("a", "Enabled", 3),
		jc("b", "Enabled", 1), jc("b", "Faulted", 1), jc("d", "Enabled", 1))
	c.due(step, at(-2*time.Minute), 0)
	c.due(step, at(-time.Minute), 1)
	c.due(step, at(0), 2)
	c.due(step, at(time.Minute), 3)
	c.due(step, at(3*time.Hour), 4)

	// Claims take jobs out of the count until their lease ends.
	claimed := claimOnly(t, s, at(time.Minute), at(5*time.Minute), 2, "b/k1", "a/j1")
	step = "after claiming k1 and j1 until +5m"
	c.due(step, at(time.Minute), 1)
	c.due(step, at(5*time.Minute-time.Nanosecond), 1)
	c.due(step, at(5*time.Minute), 3)
	c.jobs(step, jc("a", "Completed", 1), jc("a", "Disabled", 1), jc("a", "Enabled", 3),
		jc("b", "Enabled", 1), jc("b", "Faulted", 1), jc("d", "Enabled", 1))

	// Outcomes, recorded in an order that differs from their end times.
	h1 := he("h1", "b", "k1", main, fail, at(time.Minute+10*time.Second))
	h1.RetryCount, h1.Faulted = 1, true // the last retry failed
	h2 := he("h2", "b", "k1", errA, done, at(time.Minute+20*time.Second))
	h3 := he("h3", "a", "j1", main, done, at(time.Minute+5*time.Second))
	record(claimed[0], scheduler.JobFaulted, time.Time{}, at(2*time.Minute), h1, h2)
	record(claimed[1], scheduler.JobEnabled, at(5*time.Hour), at(2*time.Minute), h3)
	step = "after recording k1 (Faulted) and j1"
	c.jobs(step, jc("a", "Completed", 1), jc("a", "Disabled", 1), jc("a", "Enabled", 3),
		jc("b", "Faulted", 2), jc("d", "Enabled", 1))
	c.due(step, at(5*time.Minute), 1)
	c.due(step, at(5*time.Hour), 3)

	j2 := claimOnly(t, s, at(10*time.Minute), at(15*time.Minute), 1, "a/j2")[0]
	h4 := he("h4", "a", "j2", main, fail, at(10*time.Minute))
	h4.Message = "h4: HTTP 500 \x00 binary \"body\"" // counted and listed like any other
	h5 := he("h5", "a", "j2", main, done, at(20*time.Minute))
	h5.RetryCount = 1
	h6 := he("h6", "a", "j2", main, later, at(30*time.Minute))
	record(j2, scheduler.JobEnabled, at(5*time.Hour+30*time.Minute), at(30*time.Minute), h4, h5, h6)
	j3 := claimOnly(t, s, at(2*time.Hour), at(3*time.Hour), 10, "a/j3")[0]
	h7 := he("h7", "a", "j3", main, done, at(2*time.Hour))
	h8 := he("h8", "a", "j3", main, later, time.Time{}) // no end time: never counted
	record(j3, scheduler.JobCompleted, time.Time{}, at(2*time.Hour), h7, h8)

	step = "after recording j2 and j3 (Completed)"
	c.jobs(step, jc("a", "Completed", 2), jc("a", "Disabled", 1), jc("a", "Enabled", 2),
		jc("b", "Faulted", 2), jc("d", "Enabled", 1))
	c.due(step, at(3*time.Hour), 0)
	c.due(step, at(5*time.Hour), 1)
	c.due(step, at(5*time.Hour+30*time.Minute), 2)
	c.recent(step, scheduler.HistoryFilter{}, h8, h7, h6, h5, h4, h3, h2, h1)
	c.recent(step, scheduler.HistoryFilter{Status: done}, h7, h5, h3, h2)
	c.recent(step, scheduler.HistoryFilter{Status: fail, Top: 1}, h4)
	c.recent(step, scheduler.HistoryFilter{Skip: 2, Top: 3}, h6, h5, h4)
	c.recent(step, scheduler.HistoryFilter{Status: done, Skip: 3}, h2)
	c.recent(step, scheduler.HistoryFilter{Status: later}, h8, h6)
	c.recent(step, scheduler.HistoryFilter{Skip: 20})
	c.history(step, at(0), at(time.Hour), 10*time.Minute,
		hc(at(0), errA, done, 1), hc(at(0), main, done, 1), hc(at(0), main, fail, 1, 1, 1), // h2, h3, h1
		hc(at(10*time.Minute), main, fail, 1),       // h4, at the start of its bucket
		hc(at(20*time.Minute), main, done, 1, 1, 0), // h5
		hc(at(30*time.Minute), main, later, 1))      // h6
	c.history(step, at(0), at(3*time.Hour), time.Hour,
		hc(at(0), errA, done, 1), hc(at(0), main, done, 2, 1, 0), hc(at(0), main, fail, 2, 1, 1), hc(at(0), main, later, 1),
		hc(at(2*time.Hour), main, done, 1))
	// Only some collections.
	c.historyOf(step, []string{"b"}, at(0), at(time.Hour), 10*time.Minute, hc(at(0), errA, done, 1), hc(at(0), main, fail, 1, 1, 1))
	c.historyOf(step, []string{"e", "a"}, at(0), at(time.Hour), 10*time.Minute,
		hc(at(0), main, done, 1), hc(at(10*time.Minute), main, fail, 1), hc(at(20*time.Minute), main, done, 1, 1, 0), hc(at(30*time.Minute), main, later, 1))
	c.historyOf(step, []string{}, at(0), at(time.Hour), 10*time.Minute)
	c.historyOf(step, []string{"nope"}, at(0), at(time.Hour), 10*time.Minute)
	c.recent(step, scheduler.HistoryFilter{Faulted: true}, h1)
	c.recent(step, scheduler.HistoryFilter{Faulted: true, Collections: []string{"a"}})
	c.recent(step, scheduler.HistoryFilter{NotFaulted: true}, h8, h7, h6, h5, h4, h3, h2)
	c.recent(step, scheduler.HistoryFilter{NotFaulted: true, Status: fail}, h4)
	c.recent(step, scheduler.HistoryFilter{NotFaulted: true, Collections: []string{"b"}, Skip: 0, Top: 5}, h2)
	c.recent(step, scheduler.HistoryFilter{Faulted: true, NotFaulted: true})
	c.recent(step, scheduler.HistoryFilter{Collections: []string{"b"}}, h2, h1)
	c.recent(step, scheduler.HistoryFilter{Collections: []string{"a", "d"}, Status: done, Top: 2}, h7, h5)
	c.recent(step, scheduler.HistoryFilter{Collections: []string{}})
	c.listed(step, s, "b", "k1", scheduler.HistoryFilter{Faulted: true}, h1)
	c.listed(step, s, "b", "k1", scheduler.HistoryFilter{Faulted: true, Status: done})
	c.listed(step, s, "b", "k1", scheduler.HistoryFilter{NotFaulted: true}, h2)
	c.listed(step, s, "b", "k1", scheduler.HistoryFilter{NotFaulted: true, Status: fail})
	c.listed(step, s, "a", "j2", scheduler.HistoryFilter{Collections: []string{"b"}})
	c.listed(step, s, "a", "j2", scheduler.HistoryFilter{Collections: []string{"b", "a"}, Status: fail}, h4)
	if _, err := s.ListHistory(ctx, "a", "nope", scheduler.HistoryFilter{Collections: []string{}}); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("%s: ListHistory(a/nope, no collections) = %v, want ErrNotFound", step, err)
	}
	// A range that starts on h1 and ends on h6, which is left out; buckets
	// not aligned to the minute, the last one cut short.
	from := at(time.Minute + 10*time.Second).In(time.FixedZone("UTC+1", 3600))
	c.history(step, from, at(30*time.Minute), 7*time.Minute,
		hc(at(time.Minute+10*time.Second), errA, done, 1), hc(at(time.Minute+10*time.Second), main, fail, 1, 1, 1),
		hc(at(8*time.Minute+10*time.Second), main, fail, 1),
		hc(at(15*time.Minute+10*time.Second), main, done, 1, 1, 0))
	c.history(step, at(3*time.Hour), at(4*time.Hour), time.Hour)
	c.history(step, at(-time.Hour), at(time.Minute+5*time.Second), time.Nanosecond*7) // ends just before h3

	// Leases and collection states.
	j1 := claimOnly(t, s, at(5*time.Hour), at(5*time.Hour+time.Minute), 1, "a/j1")[0]
	step = "with j1 leased until +5h1m"
	c.due(step, at(5*time.Hour), 0)
	c.due(step, at(5*time.Hour+30*time.Minute), 2)
	if err := s.ExtendLease(ctx, "a", "j1", "w", at(6*time.Hour)); err != nil {
		t.Fatalf("ExtendLease: %v", err)
	}
	step = "with j1's lease extended to +6h"
	c.due(step, at(5*time.Hour+30*time.Minute), 1)
	c.due(step, at(6*time.Hour-time.Nanosecond), 1)
	c.due(step, at(6*time.Hour), 2)
	a, err := s.GetCollection(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	a.Definition.Properties.State = scheduler.CollectionSuspended
	if err := s.PutCollection(ctx, a); err != nil {
		t.Fatalf("PutCollection(suspend a): %v", err)
	}
	step = "with a suspended"
	c.due(step, at(6*time.Hour), 0)
	c.jobs(step, jc("a", "Completed", 2), jc("a", "Disabled", 1), jc("a", "Enabled", 2),
		jc("b", "Faulted", 2), jc("d", "Enabled", 1))
	a.Version++
	a.Definition.Properties.State = scheduler.CollectionEnabled
	if err := s.PutCollection(ctx, a); err != nil {
		t.Fatalf("PutCollection(enable a): %v", err)
	}
	c.due("with a enabled again", at(6*time.Hour), 2)
	record(j1, scheduler.JobDisabled, time.Time{}, at(5*time.Hour))
	step = "after recording j1 as Disabled, without history"
	c.due(step, at(6*time.Hour), 1)
	c.jobs(step, jc("a", "Completed", 2), jc("a", "Disabled", 2), jc("a", "Enabled", 1),
		jc("b", "Faulted", 2), jc("d", "Enabled", 1))
	cur, err := s.GetJob(ctx, "a", "j1")
	if err != nil {
		t.Fatal(err)
	}
	cur.State = scheduler.JobEnabled
	if err := s.PutJob(ctx, cur); err != nil {
		t.Fatalf("PutJob(enable j1): %v", err)
	}
	c.jobs("after PutJob enabled j1", jc("a", "Completed", 2), jc("a", "Disabled", 1), jc("a", "Enabled", 2),
		jc("b", "Faulted", 2), jc("d", "Enabled", 1))

	// Deletes and prunes.
	if err := s.DeleteJob(ctx, "a", "j2", ""); err != nil {
		t.Fatalf("DeleteJob: %v", err)
	}
	n, err := s.Prune(ctx, scheduler.PruneRequest{HistoryBefore: at(time.Minute + 15*time.Second), FinalJobsBefore: at(time.Second), LimitsBefore: at(time.Second)})
	if err != nil {
		t.Fatalf("Prune: %v", err)
	}
	if n != 5 { // h1, h3, h8; a/j5, b/k2
		t.Errorf("Prune deleted %d, want 5", n)
	}
	if err := s.DeleteCollection(ctx, "d", ""); err != nil {
		t.Fatalf("DeleteCollection: %v", err)
	}
	step = "after deleting j2 and collection d, and pruning"
	c.jobs(step, jc("a", "Completed", 1), jc("a", "Disabled", 1), jc("a", "Enabled", 1), jc("b", "Faulted", 1))
	c.due(step, at(10*time.Hour), 0)
	c.recent(step, scheduler.HistoryFilter{}, h7, h2)
	c.recent(step, scheduler.HistoryFilter{Status: fail})
	c.history(step, at(0), at(3*time.Hour), time.Hour, hc(at(0), errA, done, 1), hc(at(2*time.Hour), main, done, 1))
	if err := s.DeleteCollection(ctx, "a", ""); err != nil {
		t.Fatalf("DeleteCollection: %v", err)
	}
	step = "after deleting collection a"
	c.jobs(step, jc("b", "Faulted", 1))
	c.recent(step, scheduler.HistoryFilter{}, h2)
}

// statsRandom applies random operations and compares the aggregate answers
// with what ListCollections, ListJobs and ListHistory say.
func statsRandom(t *testing.T, s scheduler.Store) {
	r := statsReader(t, s)
	rng := rand.New(rand.NewPCG(1, 2))
	states := []scheduler.JobState{scheduler.JobEnabled, scheduler.JobDisabled, scheduler.JobCompleted, scheduler.JobFaulted}
	statuses := []scheduler.ExecutionStatus{scheduler.StatusCompleted, scheduler.StatusFailed, scheduler.StatusPostponed}
	colls := []string{"c0", "c1", "c2"}
	pick := func(n int) time.Time { return t0.Add(time.Duration(rng.IntN(n)) * time.Minute) }
	randomDue := func() time.Time {
		if rng.IntN(4) == 0 {
			return time.Time{}
		}
		return pick(60)
	}
	seq := 0
	var claimed []*scheduler.JobRecord
	for i := range 600 {
		coll := colls[rng.IntN(len(colls))]
		name := fmt.Sprintf("j%d", rng.IntN(12))
		switch rng.IntN(20) {
		case 0: // create or re-enable a collection, or toggle its state
			c, err := s.GetCollection(ctx, coll)
			if err != nil {
				putCollection(t, s, coll, 0)
				break
			}
			if c.Definition.State() == scheduler.CollectionEnabled {
				c.Definition.Properties.State = scheduler.CollectionDisabled
			} else {
				c.Definition.Properties.State = scheduler.CollectionEnabled
			}
			if err := s.PutCollection(ctx, c); err != nil {
				t.Fatalf("op %d: PutCollection: %v", i, err)
			}
		case 1, 2, 3, 4, 5: // create or replace a job
			j, err := s.GetJob(ctx, coll, name)
			if err != nil {
				j = newJob(coll, name, time.Time{})
			}
			j.State, j.Schedule.DueAt = states[rng.IntN(len(states))], randomDue()
			j.Updated = pick(60)
			if err := s.PutJob(ctx, j); err != nil && !errors.Is(err, scheduler.ErrNotFound) {
				t.Fatalf("op %d: PutJob: %v", i, err)
			}
		case 6, 7, 8, 9: // claim
			got, err := s.ClaimDue(ctx, pick(60), "w", t0.Add(time.Duration(60+rng.IntN(60))*time.Minute), 1+rng.IntN(3))
			if err != nil {
				t.Fatalf("op %d: ClaimDue: %v", i, err)
			}
			claimed = append(claimed, got...)
		case 10, 11, 12, 13, 14, 15: // record a claimed job, maybe changing its state, with history
			if len(claimed) == 0 {
				break
			}
			k := rng.IntN(len(claimed))
			j := claimed[k]
			claimed = slices.Delete(claimed, k, k+1)
			j.State, j.Schedule.DueAt = states[rng.IntN(len(states))], randomDue()
			var hist []scheduler.HistoryEntry
			for range rng.IntN(4) {
				seq++
				end := pick(120)
				if rng.IntN(10) == 0 {
					end = time.Time{}
				}
				h := scheduler.HistoryEntry{Collection: j.Collection, Job: j.Name,
					ActionName: []scheduler.ActionName{scheduler.MainAction, scheduler.ErrorAction}[rng.IntN(2)],
					Status:     statuses[rng.IntN(len(statuses))], StartTime: end, EndTime: end, Message: fmt.Sprint(seq),
					RetryCount: rng.IntN(3)}
				h.Faulted = h.Status == scheduler.StatusFailed && h.ActionName == scheduler.MainAction && rng.IntN(2) == 0
				hist = append(hist, h)
			}
			// Fails when the job was deleted, replaced or claimed again
			// meanwhile; the checks below see whichever happened.
			_ = s.Record(ctx, "w", j, hist)
		case 16, 17: // delete a job
			if err := s.DeleteJob(ctx, coll, name, ""); err != nil && !errors.Is(err, scheduler.ErrNotFound) {
				t.Fatalf("op %d: DeleteJob: %v", i, err)
			}
		case 18: // prune
			if _, err := s.Prune(ctx, scheduler.PruneRequest{HistoryBefore: pick(30), FinalJobsBefore: pick(20), PerJob: 2 + rng.IntN(8)}); err != nil {
				t.Fatalf("op %d: Prune: %v", i, err)
			}
		case 19: // delete a collection, rarely
			if rng.IntN(4) == 0 {
				if err := s.DeleteCollection(ctx, coll, ""); err != nil && !errors.Is(err, scheduler.ErrNotFound) {
					t.Fatalf("op %d: DeleteCollection: %v", i, err)
				}
			}
		}
		if i%30 == 29 {
			checkAgainstListings(t, s, r, fmt.Sprintf("after %d operations", i+1), pick(120))
		}
	}
}

func checkAgainstListings(t *testing.T, s scheduler.Store, r scheduler.StatsReader, step string, now time.Time) {
	t.Helper()
	colls, err := s.ListCollections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantDue := 0
	var all []scheduler.HistoryEntry
	perJob := map[string][]scheduler.HistoryEntry{}
	for _, c := range colls {
		jobs, err := s.ListJobs(ctx, c.Name, scheduler.JobFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if c.Definition.State() == scheduler.CollectionEnabled && !j.Schedule.DueAt.IsZero() && !j.Schedule.DueAt.After(now) &&
				(j.LeaseOwner == "" || !j.LeaseUntil.After(now)) {
				wantDue++
			}
			h, err := s.ListHistory(ctx, c.Name, j.Name, scheduler.HistoryFilter{})
			if err != nil {
				t.Fatal(err)
			}
			perJob[j.ID()] = h
			all = append(all, h...)
		}
	}
	c := statsChecker{t, r}
	c.jobs(step, listedCounts(t, s)...)
	c.due(step, now, wantDue)
	from, to, width := t0.Add(-time.Minute), t0.Add(100*time.Minute), 7*time.Minute
	for _, only := range [][]string{nil, {"c0", "c2"}} {
		f := scheduler.HistoryFilter{Collections: only}
		c.historyOf(step, only, from, to, width, countBuckets(all, &f, from, to, width)...)
	}

	// RecentHistory holds every entry once, each job's in its own order.
	recent, err := r.RecentHistory(ctx, scheduler.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recent) != len(all) {
		t.Errorf("%s: RecentHistory returned %d entries, the jobs hold %d", step, len(recent), len(all))
	}
	byJob := map[string][]scheduler.HistoryEntry{}
	for _, e := range recent {
		byJob[e.Collection+"/"+e.Job] = append(byJob[e.Collection+"/"+e.Job], e)
	}
	for id, want := range perJob {
		if diff := gocmp.Diff(want, byJob[id], emptyEqual); diff != "" {
			t.Errorf("%s: RecentHistory's entries of %s differ from ListHistory's (-ListHistory +RecentHistory):\n%s", step, id, diff)
		}
	}
	filters := []scheduler.HistoryFilter{
		{Status: scheduler.StatusFailed}, {Status: scheduler.StatusPostponed}, {Faulted: true},
		{Collections: []string{"c1"}}, {Collections: []string{"c0", "c2"}, Status: scheduler.StatusCompleted}, {Collections: []string{"c2"}, Faulted: true},
		{NotFaulted: true}, {Collections: []string{"c1"}, Status: scheduler.StatusFailed, NotFaulted: true},
	}
	for _, f := range filters {
		var want []scheduler.HistoryEntry
		for _, e := range recent {
			if f.Keeps(&e) {
				want = append(want, e)
			}
		}
		c.recent(step, f, want...)
		if len(want) > 3 {
			f.Skip, f.Top = 1, 2
			c.recent(step, f, want[1:3]...)
		}
	}
}

// countBuckets counts the entries f keeps as CountHistory should.
func countBuckets(all []scheduler.HistoryEntry, f *scheduler.HistoryFilter, from, to time.Time, width time.Duration) []scheduler.HistoryCount {
	type key struct {
		start  time.Time
		action scheduler.ActionName
		status scheduler.ExecutionStatus
	}
	buckets := map[key]*scheduler.HistoryCount{}
	for _, e := range all {
		if !f.Keeps(&e) || e.EndTime.IsZero() || e.EndTime.Before(from) || !e.EndTime.Before(to) {
			continue
		}
		k := key{from.Add(e.EndTime.Sub(from) / width * width), e.ActionName, e.Status}
		if buckets[k] == nil {
			buckets[k] = &scheduler.HistoryCount{Start: k.start, ActionName: k.action, Status: k.status}
		}
		b := buckets[k]
		b.Entries++
		if e.RetryCount > 0 {
			b.Retries++
		}
		if e.Faulted {
			b.Faulted++
		}
	}
	var out []scheduler.HistoryCount
	for _, b := range buckets {
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b scheduler.HistoryCount) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.ActionName, b.ActionName), cmp.Compare(a.Status, b.Status))
	})
	return out
}

// statsOwned checks that what the StatsReader returns is the caller's:
// changing every member of it changes nothing the store holds.
func statsOwned(t *testing.T, s scheduler.Store) {
	r := statsReader(t, s)
	stored := func() (any, error) { return takeSnapshot(t, s), nil }
	if err := s.PutCollection(ctx, richCollection("c")); err != nil {
		t.Fatal(err)
	}
	if err := s.PutJob(ctx, richRecord("c", "j", 1)); err != nil {
		t.Fatal(err)
	}
	j := claimOnly(t, s, t0, t0.Add(time.Minute), 1, "c/j")[0]
	if err := s.Record(ctx, "w", j, []scheduler.HistoryEntry{richEntry("c", "j", 1), richEntry("c", "j", 2)}); err != nil {
		t.Fatal(err)
	}
	h, err := r.RecentHistory(ctx, scheduler.HistoryFilter{})
	if err != nil || len(h) != 2 {
		t.Fatalf("RecentHistory = %d entries, %v; want 2", len(h), err)
	}
	checkOwned(t, "RecentHistory", &h, stored)
	jc, err := r.CountJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkOwned(t, "CountJobs", &jc, stored)
	hc, err := r.CountHistory(ctx, t0, t0.Add(time.Hour), time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkOwned(t, "CountHistory", &hc, stored)
}
