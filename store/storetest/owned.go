package storetest

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/fill"
	"github.com/jobclock/scheduler/recurrence"
)

// What a store returns is the caller's, and what it is given stays the
// caller's too: the tests below change every member reachable from such
// records (with fill.Mutate, which changes maps, slices and what pointers
// point to in place) and check that what the store holds did not change.

// frozen returns what read returns as a value that shares no memory with
// the store: decoded afresh from its JSON form, which holds every member
// that fill.Mutate changes.
func frozen(t *testing.T, what string, read func() (any, error)) any {
	t.Helper()
	v, err := read()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	c := reflect.New(reflect.TypeOf(v))
	if err := json.Unmarshal(b, c.Interface()); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return c.Elem().Interface()
}

// checkOwned changes every member reachable from got (a pointer to what
// call returned: a record, or a slice of them) and checks that read, which
// reads what the store holds, returns the same after the change as before.
func checkOwned(t *testing.T, call string, got any, read func() (any, error)) {
	t.Helper()
	before := frozen(t, "before changing what "+call+" returned", read)
	fill.Mutate(got)
	after := frozen(t, "after changing what "+call+" returned", read)
	if diff := gocmp.Diff(before, after); diff != "" {
		t.Errorf("changing what %s returned changed the store (-before +after):\n%s", call, diff)
	}
}

// checkInstantsApart checks that no two of the instants the statuses of
// records (one answer of call) point to are one: the caller may write a
// new time into the instant a record points to (the Scheduler does), which
// must change nothing else.
func checkInstantsApart(t *testing.T, call string, records []*scheduler.JobRecord) {
	t.Helper()
	seen := map[*time.Time]string{}
	for _, r := range records {
		for what, p := range map[string]*time.Time{"LastExecutionTime": r.Status.LastExecutionTime, "NextExecutionTime": r.Status.NextExecutionTime} {
			if p == nil {
				continue
			}
			at := r.Name + "'s " + what
			if other, ok := seen[p]; ok {
				t.Errorf("%s: %s and %s point to one instant", call, other, at)
			}
			seen[p] = at
		}
	}
}

// richCollection returns a collection record with every member set.
func richCollection(name string) *scheduler.CollectionRecord {
	return &scheduler.CollectionRecord{Name: name, ETag: "etag-" + name, Created: t0, Updated: t0.Add(time.Second),
		Definition: scheduler.JobCollection{Location: "north", Tags: map[string]string{"team": "ops", "tier": "1"},
			Properties: scheduler.CollectionProperties{SKU: &scheduler.SKU{Name: scheduler.SKUP10Premium}, State: scheduler.CollectionEnabled,
				Quota: &scheduler.Quota{MaxJobCount: 10, MaxJobOccurrence: 5,
					MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Minute, Interval: 1}}}}}
}

// richRecord returns a job record due at t0 with a definition that uses
// most of the job object (see richJob) and every member of its status and
// schedule set (fill sets members added to them later too). Each call
// returns an equal record that shares nothing with the others.
func richRecord(coll, name string, seed int) *scheduler.JobRecord {
	r := &scheduler.JobRecord{Collection: coll, Name: name, Job: richJob(), State: scheduler.JobEnabled,
		ETag: "etag-" + name, Created: t0.Add(-2 * time.Hour), Updated: t0.Add(-time.Hour),
		Tags: map[string]string{"team": name, "ü": "ß"}}
	fill.Fill(&r.Status, seed)
	fill.Fill(&r.Schedule, seed)
	r.Schedule.DueAt = t0
	return r
}

// freshRecord returns a record shaped as the Scheduler creates a job that
// has not run yet, due at t0 plus an hour, with the definition of richJob.
func freshRecord(coll, name string) *scheduler.JobRecord {
	next := t0.Add(time.Hour)
	return &scheduler.JobRecord{Collection: coll, Name: name, Job: richJob(), State: scheduler.JobEnabled, ETag: "etag-" + name,
		Created: t0, Updated: t0, Status: scheduler.JobStatus{NextExecutionTime: &next},
		Schedule: scheduler.JobSchedule{DueAt: next, Anchor: t0, NextOccurrence: next}}
}

// richEntry returns a history entry of job coll/name with every member
// set.
func richEntry(coll, name string, n int) scheduler.HistoryEntry {
	return scheduler.HistoryEntry{Collection: coll, Job: name, ActionName: scheduler.ErrorAction, Status: scheduler.StatusFailed,
		ExpectedExecutionTime: t0, StartTime: t0.Add(time.Second), EndTime: t0.Add(time.Duration(n) * time.Minute),
		RetryCount: 2, RepeatCount: n, Message: "Http 500", ExecutionTag: "tag", Faulted: true}
}

// testRecordsAreTheCallers puts rich records, changes every member of what
// it gave the store and of what each read returns, and checks that the
// store's contents did not change.
func testRecordsAreTheCallers(t *testing.T, s scheduler.Store) {
	stored := func() (any, error) { return takeSnapshot(t, s), nil }

	// What PutCollection and PutJob are given stays the caller's.
	in := richCollection("c")
	if err := s.PutCollection(ctx, in); err != nil {
		t.Fatalf("PutCollection: %v", err)
	}
	fill.Mutate(in)
	wantColl := richCollection("c")
	wantColl.Version = 1
	if got, err := s.GetCollection(ctx, "c"); err != nil {
		t.Fatalf("GetCollection: %v", err)
	} else if diff := gocmp.Diff(wantColl, got); diff != "" {
		t.Errorf("GetCollection after changing what PutCollection was given (-want +got):\n%s", diff)
	}
	for i, name := range []string{"a", "b"} {
		in := richRecord("c", name, i+1)
		if err := s.PutJob(ctx, in); err != nil {
			t.Fatalf("PutJob(%s): %v", name, err)
		}
		fill.Mutate(in)
		want := richRecord("c", name, i+1)
		want.Version, want.Incarnation = 1, incarnation(t, s, "c", name)
		if got, err := s.GetJob(ctx, "c", name); err != nil {
			t.Fatalf("GetJob(%s): %v", name, err)
		} else if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("GetJob(%s) after changing what PutJob was given (-want +got):\n%s", name, diff)
		}
	}

	fresh := freshRecord("c", "fresh")
	if err := s.PutJob(ctx, fresh); err != nil {
		t.Fatalf("PutJob(fresh): %v", err)
	}
	fill.Mutate(fresh)
	wantFresh := freshRecord("c", "fresh")
	wantFresh.Version, wantFresh.Incarnation = 1, incarnation(t, s, "c", "fresh")
	if got, err := s.GetJob(ctx, "c", "fresh"); err != nil {
		t.Fatalf("GetJob(fresh): %v", err)
	} else if diff := gocmp.Diff(wantFresh, got); diff != "" {
		t.Errorf("GetJob(fresh) after changing what PutJob was given (-want +got):\n%s", diff)
	}

	// What the reads return is the caller's.
	coll, err := s.GetCollection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	checkOwned(t, "GetCollection", coll, stored)
	colls, err := s.ListCollections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkOwned(t, "ListCollections", &colls, stored)
	job, err := s.GetJob(ctx, "c", "a")
	if err != nil {
		t.Fatal(err)
	}
	checkOwned(t, "GetJob", job, stored)
	job, err = s.GetJob(ctx, "c", "fresh")
	if err != nil {
		t.Fatal(err)
	}
	checkOwned(t, "GetJob", job, stored)
	jobs, err := s.ListJobs(ctx, "c", scheduler.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	checkOwned(t, "ListJobs", &jobs, stored)
	checkInstantsApart(t, "ListJobs", jobs)
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 10)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("ClaimDue = %v, %v; want both jobs", names(claimed), err)
	}
	for _, c := range claimed {
		c.Handle = nil // the store's own, whatever it is
		want := richRecord("c", c.Name, map[string]int{"a": 1, "b": 2}[c.Name])
		want.Version, want.LeaseOwner, want.LeaseUntil, want.Incarnation = 2, "me", t0.Add(time.Minute), incarnation(t, s, "c", c.Name)
		if diff := gocmp.Diff(want, c); diff != "" {
			t.Errorf("ClaimDue returned (-want +got):\n%s", diff)
		}
	}
	// The claimed records are the caller's but for their definitions,
	// which it must not modify (testClaimedDefinitionsStay checks that the
	// store does not either).
	for _, c := range claimed {
		c.Job = nil
	}
	checkOwned(t, "ClaimDue", &claimed, stored)
	checkInstantsApart(t, "ClaimDue", claimed)

	// What Record is given stays the caller's.
	rec := richRecord("c", "a", 3)
	rec.Version, rec.Incarnation = 2, incarnation(t, s, "c", "a")
	hist := []scheduler.HistoryEntry{richEntry("c", "a", 1), richEntry("c", "a", 2)}
	if err := s.Record(ctx, "me", rec, hist); err != nil {
		t.Fatalf("Record: %v", err)
	}
	fill.Mutate(rec)
	fill.Mutate(&hist)
	want := richRecord("c", "a", 3)
	want.Version, want.Incarnation = 3, incarnation(t, s, "c", "a")
	if got, err := s.GetJob(ctx, "c", "a"); err != nil {
		t.Fatal(err)
	} else if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("GetJob after changing what Record was given (-want +got):\n%s", diff)
	}
	wantHist := []scheduler.HistoryEntry{richEntry("c", "a", 2), richEntry("c", "a", 1)}
	h, err := s.ListHistory(ctx, "c", "a", scheduler.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(wantHist, h); diff != "" {
		t.Errorf("ListHistory after changing what Record was given (-want +got):\n%s", diff)
	}
	checkOwned(t, "ListHistory", &h, stored)
}

// testClaimedDefinitionsStay checks that a store changes no definition
// that ClaimDue handed out, which it may share with what it holds (see
// [scheduler.Store]): it claims a job kept whole and one shaped as the
// Scheduler creates jobs, records them back with the definitions they were
// handed out (as the Scheduler does), replaces a definition with PutJob,
// claims and records again (in a batch, when the store has RecordBatch),
// and compares every definition handed out with its JSON form from when
// it was.
func testClaimedDefinitionsStay(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 0)
	compact := freshRecord("c", "compact")
	compact.ETag = "0123456789abcdef" // as the Scheduler writes ETags
	for _, r := range []*scheduler.JobRecord{richRecord("c", "whole", 1), compact} {
		if err := s.PutJob(ctx, r); err != nil {
			t.Fatalf("PutJob(%s): %v", r.Name, err)
		}
	}
	type handedOut struct {
		def  *scheduler.Job
		json string
	}
	var defs []handedOut
	claim := func(at time.Time, want int) []*scheduler.JobRecord {
		t.Helper()
		claimed, err := s.ClaimDue(ctx, at, "me", at.Add(time.Minute), 10)
		if err != nil || len(claimed) != want {
			t.Fatalf("ClaimDue(%v) = %v, %v; want %d jobs", at, names(claimed), err, want)
		}
		for _, c := range claimed {
			b, err := json.Marshal(c.Job)
			if err != nil {
				t.Fatal(err)
			}
			defs = append(defs, handedOut{c.Job, string(b)})
		}
		return claimed
	}
	// record records each claimed job as run at at, due again an hour
	// later, its definition as handed out.
	record := func(claimed []*scheduler.JobRecord, at time.Time, batch bool) {
		t.Helper()
		var reqs []scheduler.RecordRequest
		for _, c := range claimed {
			c.Updated, c.Schedule.DueAt, c.Schedule.NextOccurrence = at, at.Add(time.Hour), at.Add(time.Hour)
			c.Status.ExecutionCount++
			c.Status.LastExecutionTime = &at
			c.Status.NextExecutionTime = &c.Schedule.NextOccurrence
			c.PreviousLeaseOwner, c.PreviousLeaseUntil = "", time.Time{}
			reqs = append(reqs, scheduler.RecordRequest{Job: c, History: []scheduler.HistoryEntry{richEntry("c", c.Name, 1)}})
		}
		if br, ok := s.(scheduler.BatchRecorder); ok && batch {
			for i, err := range answers(t, br.RecordBatch(ctx, "me", reqs), len(reqs)) {
				if err != nil {
					t.Fatalf("RecordBatch(%s): %v", reqs[i].Job.Name, err)
				}
			}
			return
		}
		for _, r := range reqs {
			if err := s.Record(ctx, "me", r.Job, r.History); err != nil {
				t.Fatalf("Record(%s): %v", r.Job.Name, err)
			}
		}
	}
	at := t0.Add(time.Hour)
	record(claim(at, 2), at, false)
	// A put replaces the compact job's definition.
	r, err := s.GetJob(ctx, "c", "compact")
	if err != nil {
		t.Fatal(err)
	}
	r.Job = richJob()
	r.Job.Action.Request.URI = "https://example.com/other"
	if err := s.PutJob(ctx, r); err != nil {
		t.Fatalf("PutJob(compact): %v", err)
	}
	at = at.Add(time.Hour)
	record(claim(at, 2), at, true)
	at = at.Add(time.Hour)
	record(claim(at, 2), at, false)
	takeSnapshot(t, s)
	for _, d := range defs {
		b, err := json.Marshal(d.def)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != d.json {
			t.Errorf("a definition that ClaimDue handed out changed:\nwas %s\nnow %s", d.json, b)
		}
	}
}

// testClaimHandles checks that a store finds the job a record given to
// Record or RecordBatch names, whatever Handle ClaimDue set on it: a
// claimed record renamed to another claimed job (and given its
// Incarnation) records that job; one whose job was deleted fails with
// ErrNotFound, also once a job of that name is created again (or its
// collection is), at the same instant: that job is another. No other
// method returns a Handle.
func testClaimHandles(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 0)
	for _, name := range []string{"a", "b"} {
		r := richRecord("c", name, 1)
		r.Tags = nil
		if name == "b" {
			r.Tags = map[string]string{"kept": "whole"} // store/memory keeps such records whole
		}
		if err := s.PutJob(ctx, r); err != nil {
			t.Fatalf("PutJob(%s): %v", name, err)
		}
	}
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 10)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("ClaimDue = %v, %v; want both jobs", names(claimed), err)
	}
	byName := map[string]*scheduler.JobRecord{claimed[0].Name: claimed[0], claimed[1].Name: claimed[1]}
	ra, rb := byName["a"], byName["b"]
	// a's record, renamed to b, records b.
	ra.Name, ra.Tags, ra.Incarnation = "b", rb.Tags, rb.Incarnation
	ra.Updated = t0.Add(time.Second)
	ra.Schedule.DueAt = time.Time{}
	if err := s.Record(ctx, "me", ra, nil); err != nil {
		t.Fatalf("Record of a's claimed record renamed to b: %v", err)
	}
	a, err := s.GetJob(ctx, "c", "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.GetJob(ctx, "c", "b")
	if err != nil {
		t.Fatal(err)
	}
	if a.LeaseOwner != "me" || a.Version != 2 || !a.Updated.Equal(t0.Add(-time.Hour)) {
		t.Errorf("a after recording a's record renamed to b: lease %q, version %d, updated %v; want unchanged (me, 2, %v)",
			a.LeaseOwner, a.Version, a.Updated, t0.Add(-time.Hour))
	}
	if b.LeaseOwner != "" || b.Version != 3 || !b.Updated.Equal(t0.Add(time.Second)) {
		t.Errorf("b after recording a's record renamed to b: lease %q, version %d, updated %v; want recorded (\"\", 3, %v)",
			b.LeaseOwner, b.Version, b.Updated, t0.Add(time.Second))
	}
	for _, r := range []*scheduler.JobRecord{a, b} {
		if r.Handle != nil {
			t.Errorf("GetJob(%s) returned a Handle", r.Name)
		}
	}
	// A job deleted since its claim, then created again.
	if err := s.DeleteJob(ctx, "c", "a", ""); err != nil {
		t.Fatal(err)
	}
	old := byName["a"]
	old.Name, old.Tags = "a", nil
	if err := s.Record(ctx, "me", old, nil); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("Record of a deleted job's claimed record: %v, want ErrNotFound", err)
	}
	if err := s.PutJob(ctx, richRecord("c", "a", 1)); err != nil {
		t.Fatal(err)
	}
	old.Version = 1
	if err := s.Record(ctx, "me", old, nil); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("Record of a claimed record whose job was deleted and created again: %v, want ErrNotFound", err)
	}
	// A collection deleted since the claim, then created again.
	claimed, err = s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 10)
	if err != nil || len(claimed) != 1 || claimed[0].Name != "a" {
		t.Fatalf("ClaimDue = %v, %v; want a", names(claimed), err)
	}
	if err := s.DeleteCollection(ctx, "c", ""); err != nil {
		t.Fatal(err)
	}
	putCollection(t, s, "c", 0)
	if err := s.PutJob(ctx, richRecord("c", "a", 1)); err != nil {
		t.Fatal(err)
	}
	claimed[0].Version = 1
	if err := s.Record(ctx, "me", claimed[0], nil); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("Record of a claimed record whose collection was deleted and created again: %v, want ErrNotFound", err)
	}
	if br, ok := s.(scheduler.BatchRecorder); ok {
		claimed, err = s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 10)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("ClaimDue = %v, %v; want a", names(claimed), err)
		}
		claimed[0].Tags = map[string]string{"team": "a", "ü": "ß"} // kept whole by store/memory
		if err := answers(t, br.RecordBatch(ctx, "me", []scheduler.RecordRequest{{Job: claimed[0]}}), 1)[0]; err != nil {
			t.Fatalf("RecordBatch: %v", err)
		}
		if r, err := s.GetJob(ctx, "c", "a"); err != nil || r.Handle != nil {
			t.Errorf("GetJob after RecordBatch = handle %v, %v; want no Handle", r.Handle, err)
		}
	}
}
