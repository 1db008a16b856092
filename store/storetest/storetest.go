// Package storetest is the conformance suite for [scheduler.Store]
// implementations. A backend's tests call [Run] with a function that
// returns a new, empty store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) scheduler.Store { return memory.New() })
//	}
//
// The suite checks the behaviour that the Store interface documents:
// create/replace/delete edge cases, versions, creates of one record at once
// (directly and through a Scheduler's create-only puts), the job-count quota under
// concurrency, claim order and leases (also with many concurrent
// claimers), recording with a lost lease, history order, filters, paging
// and retention, cascading deletes, deletes that name an ETag (also racing
// puts of the job: none deletes a version it did not name), that errors
// match the scheduler's
// sentinel errors, and that records are the caller's: changing every
// member of a record a store (or a Scheduler over it) returned, or of one
// it was given, changes nothing it holds. Where the contract leaves a
// choice open, the suite accepts any: jobs due at the same instant may be
// claimed in any order (store/memory runs the suite with such ties broken
// at random, to keep it so).
//
// Stores with optional capabilities run their suites too:
// [RunBatchRecorder] for [scheduler.BatchRecorder], [RunBulkPutter] for
// [scheduler.BulkPutter] and [RunStats] for [scheduler.StatsReader]. Run
// itself checks [scheduler.AheadClaimer] and [scheduler.LeaseExtender]
// when the store has them.
// [RunConcurrentPuts] races creates into one collection from several
// instances over one database, and [RunCounts] checks that a StatsReader's
// job counts follow every write that creates, deletes or changes the state
// of a job, from one instance or several.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// Run runs the conformance suite against stores made by newStore, one
// fresh store per subtest.
func Run(t *testing.T, newStore func(t *testing.T) scheduler.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s scheduler.Store)
	}{
		{"Collections", testCollections},
		{"CollectionVersions", testCollectionVersions},
		{"CollectionQuotaOnReplace", testCollectionQuotaOnReplace},
		{"Jobs", testJobs},
		{"JobVersions", testJobVersions},
		{"JobCountQuota", testJobCountQuota},
		{"JobCountQuotaConcurrent", testJobCountQuotaConcurrent},
		{"JobCountQuotaLowered", testJobCountQuotaLowered},
		{"DeletesFreePlaces", testDeletesFreePlaces},
		{"GetJobNotFound", testGetJobNotFound},
		{"ReadForPut", testReadForPut},
		{"CreateJob", testCreateJob},
		{"ListJobs", testListJobs},
		{"ListJobsOrder", testListJobsOrder},
		{"JobTags", testJobTags},
		{"ClaimOrder", testClaimOrder},
		{"ClaimTies", testClaimTies},
		{"ClaimSkipsDisabledCollections", testClaimSkipsDisabled},
		{"ClaimDueBy", testClaimDueBy},
		{"GiveBack", testGiveBack},
		{"GiveBackAfterClaimedAgain", testGiveBackAfterClaimedAgain},
		{"GiveBackZeroPreviousEnd", testGiveBackZeroPreviousEnd},
		{"GiveBackAfterRecreate", recreatedLater(testGiveBackAfterRecreate)},
		{"GiveBackAfterRecreateAtOneInstant", recreatedAtOnce(testGiveBackAfterRecreate)},
		{"Leases", testLeases},
		{"ExtendLeaseWithoutOwner", testExtendLeaseWithoutOwner},
		{"ExtendLeases", testExtendLeases},
		{"ExtendLeasesMany", testExtendLeasesMany},
		{"ExtendLeasesKeys", testExtendLeasesKeys},
		{"ConcurrentClaimers", testConcurrentClaimers},
		{"Record", testRecord},
		{"RecordAfterRecreate", recreatedLater(testRecordAfterRecreate)},
		{"RecordAfterRecreateAtOneInstant", recreatedAtOnce(testRecordAfterRecreate)},
		{"RecordAfterRecreateCancelled", recreatedLater(testRecordAfterRecreateCancelled)},
		{"RecordAfterRecreateCancelledAtOneInstant", recreatedAtOnce(testRecordAfterRecreateCancelled)},
		{"Incarnation", testIncarnation},
		{"PutKeepsLease", testPutKeepsLease},
		{"History", testHistory},
		{"Prune", testPrune},
		{"DeleteCascades", testDeleteCascades},
		{"ConditionalDelete", testConditionalDelete},
		{"ConditionalDeleteRace", testConditionalDeleteRace},
		{"SchedulerConditionalDeleteRace", testSchedulerConditionalDeleteRace},
		{"TimesInUTC", testTimesInUTC},
		{"PolicyResumed", testPolicyResumed},
		{"RecordsAreTheCallers", testRecordsAreTheCallers},
		{"ClaimedDefinitionsStay", testClaimedDefinitionsStay},
		{"ClaimHandles", testClaimHandles},
		{"SchedulerRecordsAreTheCallers", testSchedulerRecordsAreTheCallers},
		{"CreateOnly", testCreateOnly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, newStore(t))
		})
	}
}

var (
	ctx = context.Background()
	t0  = time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)
)

func def() *scheduler.Job {
	return &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://127.0.0.1/", Method: "GET"}}}
}

func putCollection(t *testing.T, s scheduler.Store, name string, maxJobs int) *scheduler.CollectionRecord {
	t.Helper()
	c := &scheduler.CollectionRecord{Name: name, ETag: "e1", Created: t0, Updated: t0}
	if maxJobs > 0 {
		c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: maxJobs}
	}
	if err := s.PutCollection(ctx, c); err != nil {
		t.Fatalf("PutCollection(%q): %v", name, err)
	}
	got, err := s.GetCollection(ctx, name)
	if err != nil {
		t.Fatalf("GetCollection(%q): %v", name, err)
	}
	return got
}

func newJob(coll, name string, due time.Time) *scheduler.JobRecord {
	return &scheduler.JobRecord{
		Collection: coll, Name: name, Job: def(), State: scheduler.JobEnabled, ETag: "j1",
		Created: t0, Updated: t0, Schedule: scheduler.JobSchedule{DueAt: due, Anchor: t0, NextOccurrence: due},
	}
}

func putJob(t *testing.T, s scheduler.Store, coll, name string, due time.Time) *scheduler.JobRecord {
	t.Helper()
	if err := s.PutJob(ctx, newJob(coll, name, due)); err != nil {
		t.Fatalf("PutJob(%s/%s): %v", coll, name, err)
	}
	j, err := s.GetJob(ctx, coll, name)
	if err != nil {
		t.Fatalf("GetJob(%s/%s): %v", coll, name, err)
	}
	return j
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error %v, want one matching %v", what, err, target)
	}
}

func names(jobs []*scheduler.JobRecord) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Collection+"/"+j.Name)
	}
	return out
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func testCollections(t *testing.T, s scheduler.Store) {
	_, err := s.GetCollection(ctx, "nope")
	wantErr(t, "GetCollection(missing)", err, scheduler.ErrNotFound)
	wantErr(t, "DeleteCollection(missing)", s.DeleteCollection(ctx, "nope", ""), scheduler.ErrNotFound)
	c := &scheduler.CollectionRecord{Name: "b", ETag: "x", Created: t0, Updated: t0,
		Definition: scheduler.JobCollection{Location: "here", Tags: map[string]string{"k": "v"},
			Properties: scheduler.CollectionProperties{SKU: &scheduler.SKU{Name: scheduler.SKUFree}}}}
	if err := s.PutCollection(ctx, c); err != nil {
		t.Fatalf("PutCollection: %v", err)
	}
	c.Definition.Tags["k"] = "changed by caller"
	got, err := s.GetCollection(ctx, "b")
	if err != nil {
		t.Fatalf("GetCollection: %v", err)
	}
	if got.Version != 1 || got.ETag != "x" || got.Definition.Location != "here" || got.Definition.Tags["k"] != "v" ||
		got.Definition.Plan() != scheduler.SKUFree || !got.Created.Equal(t0) {
		t.Errorf("GetCollection = %+v, want version 1, etag x, location here, tag k=v, plan Free, created %v", got, t0)
	}
	got.Definition.Tags["k"] = "changed by reader"
	again, _ := s.GetCollection(ctx, "b")
	if again.Definition.Tags["k"] != "v" {
		t.Errorf("store shares its tag map with callers")
	}
	putCollection(t, s, "a", 0)
	list, err := s.ListCollections(ctx)
	if err != nil {
		t.Fatalf("ListCollections: %v", err)
	}
	var ns []string
	for _, c := range list {
		ns = append(ns, c.Name)
	}
	if !equal(ns, []string{"a", "b"}) {
		t.Errorf("ListCollections = %v, want [a b]", ns)
	}
	if err := s.DeleteCollection(ctx, "a", ""); err != nil {
		t.Fatalf("DeleteCollection: %v", err)
	}
	_, err = s.GetCollection(ctx, "a")
	wantErr(t, "GetCollection(deleted)", err, scheduler.ErrNotFound)
}

func testCollectionVersions(t *testing.T, s scheduler.Store) {
	c := putCollection(t, s, "c", 0)
	dup := &scheduler.CollectionRecord{Name: "c"}
	wantErr(t, "PutCollection(create existing)", s.PutCollection(ctx, dup), scheduler.ErrConflict)
	stale := c.Clone()
	c.ETag = "e2"
	if err := s.PutCollection(ctx, c); err != nil {
		t.Fatalf("PutCollection(replace): %v", err)
	}
	wantErr(t, "PutCollection(stale version)", s.PutCollection(ctx, stale), scheduler.ErrConflict)
	got, _ := s.GetCollection(ctx, "c")
	if got.Version != 2 || got.ETag != "e2" {
		t.Errorf("after replace: version %d etag %q, want 2 e2", got.Version, got.ETag)
	}
	missing := &scheduler.CollectionRecord{Name: "m", Version: 3}
	if err := s.PutCollection(ctx, missing); err == nil {
		t.Errorf("PutCollection(replace missing) succeeded, want an error")
	}
}

func testCollectionQuotaOnReplace(t *testing.T, s scheduler.Store) {
	c := putCollection(t, s, "c", 0)
	for i := range 3 {
		putJob(t, s, "c", fmt.Sprintf("j%d", i), time.Time{})
	}
	c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: 2}
	wantErr(t, "PutCollection(quota below job count)", s.PutCollection(ctx, c), scheduler.ErrQuotaExceeded)
	c.Definition.Properties.Quota.MaxJobCount = 3
	if err := s.PutCollection(ctx, c); err != nil {
		t.Errorf("PutCollection(quota equal to job count): %v", err)
	}
}

func testJobs(t *testing.T, s scheduler.Store) {
	wantErr(t, "PutJob(no collection)", s.PutJob(ctx, newJob("none", "j", t0)), scheduler.ErrNotFound)
	putCollection(t, s, "c", 0)
	_, err := s.GetJob(ctx, "c", "j")
	wantErr(t, "GetJob(missing)", err, scheduler.ErrNotFound)
	_, err = s.GetJob(ctx, "none", "j")
	wantErr(t, "GetJob(missing collection)", err, scheduler.ErrNotFound)
	wantErr(t, "DeleteJob(missing)", s.DeleteJob(ctx, "c", "j", ""), scheduler.ErrNotFound)
	in := newJob("c", "j", t0)
	in.Status.ExecutionCount = 7
	in.Schedule.Current = &scheduler.Occurrence{Number: 2, Tag: "tag", Expected: t0}
	if err := s.PutJob(ctx, in); err != nil {
		t.Fatalf("PutJob: %v", err)
	}
	in.Schedule.Current.Tag = "changed by caller"
	got, err := s.GetJob(ctx, "c", "j")
	if err != nil {
		t.Fatalf("GetJob: %v", err)
	}
	if got.Version != 1 || got.ETag != "j1" || got.State != scheduler.JobEnabled || got.Status.ExecutionCount != 7 ||
		got.Schedule.Current == nil || got.Schedule.Current.Tag != "tag" || !got.Schedule.DueAt.Equal(t0) ||
		got.Job == nil || got.Job.Action.Type != action.HTTP {
		t.Errorf("GetJob = %+v, want the record as put with version 1", got)
	}
	wantErr(t, "PutJob(create existing)", s.PutJob(ctx, newJob("c", "j", t0)), scheduler.ErrConflict)
	if err := s.DeleteJob(ctx, "c", "j", ""); err != nil {
		t.Fatalf("DeleteJob: %v", err)
	}
	_, err = s.GetJob(ctx, "c", "j")
	wantErr(t, "GetJob(deleted)", err, scheduler.ErrNotFound)
}

func testJobVersions(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 0)
	j := putJob(t, s, "c", "j", t0)
	stale := j.Clone()
	j.ETag = "j2"
	if err := s.PutJob(ctx, j); err != nil {
		t.Fatalf("PutJob(replace): %v", err)
	}
	wantErr(t, "PutJob(stale)", s.PutJob(ctx, stale), scheduler.ErrConflict)
	got, _ := s.GetJob(ctx, "c", "j")
	if got.Version != 2 || got.ETag != "j2" {
		t.Errorf("after replace: version %d etag %q, want 2 j2", got.Version, got.ETag)
	}
}

func testJobCountQuota(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 2)
	putJob(t, s, "c", "a", t0)
	putJob(t, s, "c", "b", t0)
	err := s.PutJob(ctx, newJob("c", "x", t0))
	wantErr(t, "PutJob(third job, maxJobCount 2)", err, scheduler.ErrQuotaExceeded)
	var qe *scheduler.QuotaError
	if !errors.As(err, &qe) || qe.Quota != "maxJobCount" || qe.Collection != "c" {
		t.Errorf("PutJob(third job) error %v, want a *QuotaError for maxJobCount of c", err)
	}
	// Replacing an existing job is not a new job.
	a, _ := s.GetJob(ctx, "c", "a")
	if err := s.PutJob(ctx, a); err != nil {
		t.Errorf("PutJob(replace in full collection): %v", err)
	}
	free := &scheduler.CollectionRecord{Name: "f", Definition: scheduler.JobCollection{Properties: scheduler.CollectionProperties{SKU: &scheduler.SKU{Name: scheduler.SKUFree}}}}
	if err := s.PutCollection(ctx, free); err != nil {
		t.Fatal(err)
	}
	for i := range scheduler.FreeMaxJobCount {
		putJob(t, s, "f", fmt.Sprintf("j%d", i), time.Time{})
	}
	wantErr(t, "PutJob(sixth job in Free collection)", s.PutJob(ctx, newJob("f", "x", t0)), scheduler.ErrQuotaExceeded)
}

func testJobCountQuotaConcurrent(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 5)
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, quota := 0, 0
	for i := range 40 {
		wg.Go(func() {
			err := s.PutJob(ctx, newJob("c", fmt.Sprintf("j%02d", i), t0))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, scheduler.ErrQuotaExceeded):
				quota++
			default:
				t.Errorf("PutJob: %v", err)
			}
		})
	}
	wg.Wait()
	if ok != 5 || quota != 35 {
		t.Errorf("40 concurrent creates with maxJobCount 5: %d succeeded, %d quota errors; want 5 and 35", ok, quota)
	}
}

// testJobCountQuotaLowered: a collection whose quota is lowered to a few
// more than the jobs it holds takes that many more, whatever it held
// before.
func testJobCountQuotaLowered(t *testing.T, s scheduler.Store) {
	c := putCollection(t, s, "c", 1000)
	for i := range 30 {
		putJob(t, s, "c", fmt.Sprintf("j%02d", i), t0)
	}
	for i := range 25 { // 5 left, in the places a store gave them
		if err := s.DeleteJob(ctx, "c", fmt.Sprintf("j%02d", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: 7}
	if err := s.PutCollection(ctx, c); err != nil {
		t.Fatalf("PutCollection(quota 7 over 5 jobs): %v", err)
	}
	for i, want := range []bool{true, true, false} {
		err := s.PutJob(ctx, newJob("c", fmt.Sprintf("n%d", i), t0))
		if (err == nil) != want || !want && !errors.Is(err, scheduler.ErrQuotaExceeded) {
			t.Errorf("PutJob(job %d of a quota of 7) = %v; want success %v, else ErrQuotaExceeded", 6+i, err, want)
		}
	}
	if err := s.DeleteJob(ctx, "c", "j25", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.PutJob(ctx, newJob("c", "again", t0)); err != nil {
		t.Errorf("PutJob(into the place a delete freed): %v", err)
	}
}

// testDeletesFreePlaces fills a collection to its quota, deletes jobs
// here and there, and creates as many again: each delete frees the place
// for exactly one create, however full the collection is.
func testDeletesFreePlaces(t *testing.T, s scheduler.Store) {
	const limit = 40
	putCollection(t, s, "c", limit)
	for i := range limit {
		putJob(t, s, "c", fmt.Sprintf("j%02d", i), t0)
	}
	wantErr(t, "PutJob(into a full collection)", s.PutJob(ctx, newJob("c", "more", t0)), scheduler.ErrQuotaExceeded)
	for round := range 3 {
		for _, i := range []int{3, 17, 18, 29, 39} {
			name := fmt.Sprintf("j%02d", i)
			if round > 0 {
				name = fmt.Sprintf("r%d-%02d", round-1, i)
			}
			if err := s.DeleteJob(ctx, "c", name, ""); err != nil {
				t.Fatalf("DeleteJob(%s): %v", name, err)
			}
		}
		for _, i := range []int{3, 17, 18, 29, 39} {
			if err := s.PutJob(ctx, newJob("c", fmt.Sprintf("r%d-%02d", round, i), t0)); err != nil {
				t.Errorf("round %d: PutJob(into one of 5 places deleted in a full collection): %v", round, err)
			}
		}
		wantErr(t, fmt.Sprintf("round %d: PutJob(a sixth)", round), s.PutJob(ctx, newJob("c", "more", t0)), scheduler.ErrQuotaExceeded)
		if got := jobNames(t, s, "c"); len(got) != limit {
			t.Errorf("round %d: %d jobs stored, want %d", round, len(got), limit)
		}
	}
}

// testGetJobNotFound: GetJob's not-found error names what is missing,
// the collection or the job, before and after the collection holds jobs.
func testGetJobNotFound(t *testing.T, s scheduler.Store) {
	check := func(step, coll, job string, want scheduler.NotFoundError) {
		t.Helper()
		_, err := s.GetJob(ctx, coll, job)
		var nf *scheduler.NotFoundError
		if !errors.As(err, &nf) || *nf != want {
			t.Errorf("%s: GetJob(%q, %q) = %v, want %+v", step, coll, job, err, want)
		}
	}
	check("no collection", "c", "j", scheduler.NotFoundError{Collection: "c"})
	putCollection(t, s, "c", 10)
	check("empty collection", "c", "j", scheduler.NotFoundError{Collection: "c", Job: "j"})
	putJob(t, s, "c", "k", t0)
	check("another job", "c", "j", scheduler.NotFoundError{Collection: "c", Job: "j"})
	check("another collection", "d", "k", scheduler.NotFoundError{Collection: "d"})
	if err := s.DeleteCollection(ctx, "c", ""); err != nil {
		t.Fatal(err)
	}
	check("collection deleted", "c", "k", scheduler.NotFoundError{Collection: "c"})
}

func testListJobs(t *testing.T, s scheduler.Store) {
	_, err := s.ListJobs(ctx, "none", scheduler.JobFilter{})
	wantErr(t, "ListJobs(missing collection)", err, scheduler.ErrNotFound)
	putCollection(t, s, "c", 100)
	putCollection(t, s, "d", 0)
	putJob(t, s, "d", "other", t0)
	for _, n := range []string{"e", "b", "d", "a", "c"} {
		j := newJob("c", n, t0)
		if n == "b" || n == "d" {
			j.State = scheduler.JobDisabled
		}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		f    scheduler.JobFilter
		want []string
	}{
		{"all", scheduler.JobFilter{}, []string{"a", "b", "c", "d", "e"}},
		{"top", scheduler.JobFilter{Top: 2}, []string{"a", "b"}},
		{"skip", scheduler.JobFilter{Skip: 3}, []string{"d", "e"}},
		{"skip past end", scheduler.JobFilter{Skip: 9}, nil},
		{"page", scheduler.JobFilter{Skip: 1, Top: 3}, []string{"b", "c", "d"}},
		{"state", scheduler.JobFilter{State: scheduler.JobDisabled}, []string{"b", "d"}},
		{"state and page", scheduler.JobFilter{State: scheduler.JobEnabled, Skip: 1, Top: 1}, []string{"c"}},
		{"no match", scheduler.JobFilter{State: scheduler.JobFaulted}, nil},
	}
	for _, tt := range tests {
		got, err := s.ListJobs(ctx, "c", tt.f)
		if err != nil {
			t.Fatalf("ListJobs(%s): %v", tt.name, err)
		}
		var ns []string
		for _, j := range got {
			ns = append(ns, j.Name)
		}
		if !equal(ns, tt.want) {
			t.Errorf("ListJobs(%s) = %v, want %v", tt.name, ns, tt.want)
		}
	}
}

func testClaimOrder(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 100)
	putJob(t, s, "c", "late", t0.Add(3*time.Second))
	putJob(t, s, "c", "first", t0.Add(1*time.Second))
	putJob(t, s, "c", "second", t0.Add(2*time.Second))
	putJob(t, s, "c", "future", t0.Add(time.Hour))
	putJob(t, s, "c", "idle", time.Time{})
	next, err := s.NextDue(ctx)
	if err != nil || !next.Equal(t0.Add(time.Second)) {
		t.Errorf("NextDue = %v, %v; want %v", next, err, t0.Add(time.Second))
	}
	now := t0.Add(10 * time.Second)
	got, err := s.ClaimDue(ctx, now, "me", now.Add(time.Minute), 2)
	if err != nil {
		t.Fatalf("ClaimDue: %v", err)
	}
	if !equal(names(got), []string{"c/first", "c/second"}) {
		t.Errorf("ClaimDue(limit 2) = %v, want [c/first c/second]", names(got))
	}
	for _, j := range got {
		if j.LeaseOwner != "me" || !j.LeaseUntil.Equal(now.Add(time.Minute)) || j.Version != 2 {
			t.Errorf("claimed %s: owner %q until %v version %d; want me, %v, 2", j.Name, j.LeaseOwner, j.LeaseUntil, j.Version, now.Add(time.Minute))
		}
	}
	got, _ = s.ClaimDue(ctx, now, "me", now.Add(time.Minute), 10)
	if !equal(names(got), []string{"c/late"}) {
		t.Errorf("second ClaimDue = %v, want [c/late]", names(got))
	}
	got, _ = s.ClaimDue(ctx, now, "me", now.Add(time.Minute), 10)
	if len(got) != 0 {
		t.Errorf("third ClaimDue = %v, want nothing", names(got))
	}
	got, _ = s.ClaimDue(ctx, t0.Add(2*time.Hour), "me", t0.Add(3*time.Hour), 0)
	if len(got) != 0 {
		t.Errorf("ClaimDue(limit 0) = %v, want nothing", names(got))
	}
	next, _ = s.NextDue(ctx)
	if !next.Equal(now.Add(time.Minute)) {
		t.Errorf("NextDue with leases until %v = %v", now.Add(time.Minute), next)
	}
}

// testClaimTies checks jobs due at the same instant: the contract lets a
// store claim them in any order, but each exactly once, and the limit
// counts them.
func testClaimTies(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 0)
	putCollection(t, s, "d", 0)
	putJob(t, s, "c", "b", t0)
	putJob(t, s, "c", "a", t0)
	putJob(t, s, "d", "a", t0)
	putJob(t, s, "c", "early", t0.Add(-time.Second))
	want := map[string]bool{"c/a": true, "c/b": true, "d/a": true}
	first, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 3)
	if err != nil {
		t.Fatalf("ClaimDue: %v", err)
	}
	if len(first) != 3 || names(first)[0] != "c/early" || !want[names(first)[1]] || !want[names(first)[2]] || names(first)[1] == names(first)[2] {
		t.Fatalf("ClaimDue(limit 3) = %v, want c/early, then two of the jobs due at %v", names(first), t0)
	}
	rest, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 3)
	if err != nil {
		t.Fatalf("ClaimDue: %v", err)
	}
	if len(rest) != 1 || !want[rest[0].Collection+"/"+rest[0].Name] || rest[0].ID() == first[1].ID() || rest[0].ID() == first[2].ID() {
		t.Errorf("second ClaimDue = %v, want the one job due at %v left out of %v", names(rest), t0, names(first))
	}
}

// testExtendLeaseWithoutOwner checks that an empty owner holds no lease:
// ExtendLease fails with ErrLeaseLost and changes nothing, whether the job
// is leased or not.
func testExtendLeaseWithoutOwner(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 0)
	free := putJob(t, s, "c", "free", t0.Add(time.Second))
	putJob(t, s, "c", "held", t0)
	wantErr(t, `ExtendLease("", a job nobody leased)`, s.ExtendLease(ctx, "c", "free", "", t0.Add(time.Hour)), scheduler.ErrLeaseLost)
	wantErr(t, `ExtendLease("", a missing job)`, s.ExtendLease(ctx, "c", "nope", "", t0.Add(time.Hour)), scheduler.ErrNotFound)
	if got, _ := s.GetJob(ctx, "c", "free"); got.LeaseOwner != "" || !got.LeaseUntil.IsZero() || got.Version != free.Version {
		t.Errorf(`after ExtendLease(""): owner %q until %v version %d; want no lease, version %d`, got.LeaseOwner, got.LeaseUntil, got.Version, free.Version)
	}
	held, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 10)
	if err != nil || len(held) != 1 || held[0].Name != "held" {
		t.Fatalf("ClaimDue = %v, %v; want c/held", names(held), err)
	}
	wantErr(t, `ExtendLease("", a leased job)`, s.ExtendLease(ctx, "c", "held", "", t0.Add(time.Hour)), scheduler.ErrLeaseLost)
	if got, _ := s.GetJob(ctx, "c", "held"); got.LeaseOwner != "me" || !got.LeaseUntil.Equal(t0.Add(time.Minute)) {
		t.Errorf(`after ExtendLease("") of a leased job: owner %q until %v; want me until %v`, got.LeaseOwner, got.LeaseUntil, t0.Add(time.Minute))
	}
	// Nobody holds the job beyond its lease, nor the free one at all.
	if got, _ := s.ClaimDue(ctx, t0.Add(time.Minute), "other", t0.Add(2*time.Minute), 10); len(got) != 2 {
		t.Errorf("ClaimDue when the lease ended = %v, want both jobs", names(got))
	}
}

func testClaimSkipsDisabled(t *testing.T, s scheduler.Store) {
	c := putCollection(t, s, "c", 0)
	putJob(t, s, "c", "j", t0)
	c.Definition.Properties.State = scheduler.CollectionDisabled
	if err := s.PutCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, _ := s.ClaimDue(ctx, t0.Add(time.Hour), "me", t0.Add(2*time.Hour), 10)
	if len(got) != 0 {
		t.Errorf("ClaimDue in a Disabled collection = %v, want nothing", names(got))
	}
	if next, _ := s.NextDue(ctx); !next.IsZero() {
		t.Errorf("NextDue with only a Disabled collection = %v, want zero", next)
	}
	c, _ = s.GetCollection(ctx, "c")
	c.Definition.Properties.State = scheduler.CollectionEnabled
	if err := s.PutCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, _ = s.ClaimDue(ctx, t0.Add(time.Hour), "me", t0.Add(2*time.Hour), 10)
	if !equal(names(got), []string{"c/j"}) {
		t.Errorf("ClaimDue after enabling = %v, want [c/j]", names(got))
	}
}

func testLeases(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 0)
	putJob(t, s, "c", "j", t0)
	got, _ := s.ClaimDue(ctx, t0, "a", t0.Add(time.Minute), 1)
	if len(got) != 1 {
		t.Fatalf("ClaimDue = %v, want c/j", names(got))
	}
	if again, _ := s.ClaimDue(ctx, t0.Add(59*time.Second), "b", t0.Add(2*time.Minute), 1); len(again) != 0 {
		t.Errorf("ClaimDue during the lease = %v, want nothing", names(again))
	}
	wantErr(t, "ExtendLease(not owner)", s.ExtendLease(ctx, "c", "j", "b", t0.Add(time.Hour)), scheduler.ErrLeaseLost)
	wantErr(t, "ExtendLease(missing)", s.ExtendLease(ctx, "c", "x", "a", t0.Add(time.Hour)), scheduler.ErrNotFound)
	if err := s.ExtendLease(ctx, "c", "j", "a", t0.Add(2*time.Minute)); err != nil {
		t.Fatalf("ExtendLease: %v", err)
	}
	if again, _ := s.ClaimDue(ctx, t0.Add(90*time.Second), "b", t0.Add(3*time.Minute), 1); len(again) != 0 {
		t.Errorf("ClaimDue during the extended lease = %v, want nothing", names(again))
	}
	taken, _ := s.ClaimDue(ctx, t0.Add(2*time.Minute), "b", t0.Add(3*time.Minute), 1)
	if len(taken) != 1 || taken[0].LeaseOwner != "b" {
		t.Fatalf("ClaimDue after the lease expired = %v, want c/j leased to b", names(taken))
	}
	err := s.Record(ctx, "a", got[0], nil)
	wantErr(t, "Record(lease taken over)", err, scheduler.ErrLeaseLost)
	wantErr(t, "ExtendLease(lease taken over)", s.ExtendLease(ctx, "c", "j", "a", t0.Add(time.Hour)), scheduler.ErrLeaseLost)
	if err := s.Record(ctx, "b", taken[0], nil); err != nil {
		t.Errorf("Record(by new owner): %v", err)
	}
	if got[0].PreviousLeaseOwner != "" || taken[0].PreviousLeaseOwner != "a" {
		t.Errorf("PreviousLeaseOwner of the first claim = %q, of the claim after a's lease expired = %q; want none and a",
			got[0].PreviousLeaseOwner, taken[0].PreviousLeaseOwner)
	}
	// b's Record released the lease: the next claim takes it from nobody,
	// and reads return no previous owner.
	if j, err := s.GetJob(ctx, "c", "j"); err != nil || j.PreviousLeaseOwner != "" {
		t.Errorf("GetJob after Record = PreviousLeaseOwner %q, %v; want none", prevOwner(j), err)
	}
	free, _ := s.ClaimDue(ctx, t0.Add(3*time.Minute), "c", t0.Add(4*time.Minute), 1)
	if len(free) != 1 || free[0].PreviousLeaseOwner != "" {
		t.Fatalf("ClaimDue of a released job = %v, PreviousLeaseOwner %q; want c/j from nobody", names(free), prevOwner(first(free)))
	}
	// An owner that claims its own expired lease again sees itself.
	again, _ := s.ClaimDue(ctx, t0.Add(4*time.Minute), "c", t0.Add(5*time.Minute), 1)
	if len(again) != 1 || again[0].PreviousLeaseOwner != "c" {
		t.Errorf("ClaimDue of its own expired lease = %v, PreviousLeaseOwner %q; want c/j from c", names(again), prevOwner(first(again)))
	}
	if err := s.PutJob(ctx, again[0]); err != nil {
		t.Fatalf("PutJob: %v", err)
	}
	if j, err := s.GetJob(ctx, "c", "j"); err != nil || j.PreviousLeaseOwner != "" {
		t.Errorf("GetJob after PutJob of a claimed record = PreviousLeaseOwner %q, %v; want none (a store does not keep it)", prevOwner(j), err)
	}
}

func first(js []*scheduler.JobRecord) *scheduler.JobRecord {
	if len(js) == 0 {
		return nil
	}
	return js[0]
}

func prevOwner(j *scheduler.JobRecord) string {
	if j == nil {
		return "<none>"
	}
	return j.PreviousLeaseOwner
}

func testConcurrentClaimers(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 1000)
	const jobs = 300
	for i := range jobs {
		putJob(t, s, "c", fmt.Sprintf("j%03d", i), t0.Add(time.Duration(i)*time.Millisecond))
	}
	now := t0.Add(time.Hour)
	var mu sync.Mutex
	seen := make(map[string]string)
	var wg sync.WaitGroup
	for w := range 8 {
		owner := fmt.Sprintf("w%d", w)
		wg.Go(func() {
			for {
				got, err := s.ClaimDue(ctx, now, owner, now.Add(time.Minute), 7)
				if err != nil {
					t.Errorf("ClaimDue: %v", err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, j := range got {
					if prev, dup := seen[j.Name]; dup {
						t.Errorf("job %s claimed by %s and %s", j.Name, prev, owner)
					}
					seen[j.Name] = owner
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != jobs {
		t.Errorf("claimed %d distinct jobs, want %d", len(seen), jobs)
	}
}

func testRecord(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 0)
	putJob(t, s, "c", "j", t0)
	unclaimed, _ := s.GetJob(ctx, "c", "j")
	wantErr(t, "Record(never claimed)", s.Record(ctx, "me", unclaimed, nil), scheduler.ErrLeaseLost)
	got, _ := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 1)
	if len(got) != 1 {
		t.Fatal("nothing claimed")
	}
	j := got[0]
	stale := j.Clone()
	stale.Version--
	wantErr(t, "Record(stale version)", s.Record(ctx, "me", stale, nil), scheduler.ErrConflict)
	j.Status.ExecutionCount = 1
	j.Schedule.DueAt = t0.Add(time.Hour)
	h := scheduler.HistoryEntry{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted,
		ExpectedExecutionTime: t0, StartTime: t0, EndTime: t0.Add(time.Second), RepeatCount: 1, Message: "ok"}
	if err := s.Record(ctx, "me", j, []scheduler.HistoryEntry{h}); err != nil {
		t.Fatalf("Record: %v", err)
	}
	after, _ := s.GetJob(ctx, "c", "j")
	if after.LeaseOwner != "" || !after.LeaseUntil.IsZero() || after.Version != j.Version+1 || after.Status.ExecutionCount != 1 ||
		!after.Schedule.DueAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("after Record: %+v; want lease released, version %d, executionCount 1, due %v", after, j.Version+1, t0.Add(time.Hour))
	}
	hist, _ := s.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{})
	if len(hist) != 1 || hist[0].Message != "ok" || !hist[0].EndTime.Equal(t0.Add(time.Second)) {
		t.Errorf("history after Record = %+v, want the one entry", hist)
	}
	wantErr(t, "Record(lease released)", s.Record(ctx, "me", after, nil), scheduler.ErrLeaseLost)
	got, _ = s.ClaimDue(ctx, t0.Add(time.Hour), "me", t0.Add(2*time.Hour), 1)
	if len(got) != 1 {
		t.Fatal("nothing claimed")
	}
	if err := s.DeleteJob(ctx, "c", "j", ""); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "Record(deleted job)", s.Record(ctx, "me", got[0], nil), scheduler.ErrNotFound)
}

// testRecordAfterRecreate records the outcome of a claim on a job that was
// deleted and created again since, under the same name, and claimed by the
// same owner at the same version as the first: the record is about a job
// that is gone, so it fails with ErrNotFound and leaves the new job alone.
func testRecordAfterRecreate(t *testing.T, s scheduler.Store, atOnce bool) {
	old, fresh := claimRecreated(t, s, atOnce)
	old.Status.ExecutionCount = 7
	old.Schedule.DueAt = t0.Add(time.Hour)
	h := scheduler.HistoryEntry{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted,
		ExpectedExecutionTime: t0, StartTime: t0, EndTime: t0.Add(time.Second), RepeatCount: 1, Message: "old"}
	err := s.Record(ctx, "me", old, []scheduler.HistoryEntry{h})
	wantErr(t, "Record(claim of the deleted job)", err, scheduler.ErrNotFound)
	if re := (*scheduler.RecreatedError)(nil); errors.As(err, &re) && (re.Job != "j" || re.Collection != "c" || !re.Claimed.Equal(old.Created) || !re.Created.Equal(fresh.Created)) {
		t.Errorf("Record(claim of the deleted job): %+v, want one naming c/j, created at %v, claimed at %v", re, fresh.Created, old.Created)
	}
	wantUntouched(t, s, fresh)
	if err := s.Record(ctx, "me", fresh, nil); err != nil {
		t.Errorf("Record(claim of the new job): %v", err)
	}
}

// testRecordAfterRecreateCancelled is testRecordAfterRecreate with the new
// job recorded first, which leaves it where the old claim's Record would
// have left the old job (one version higher, with no lease), and the old
// claim's Record given a context cancelled already: a store that cannot
// tell whether a write it started committed must not take the new job's
// state for the old claim's write.
func testRecordAfterRecreateCancelled(t *testing.T, s scheduler.Store, atOnce bool) {
	old, fresh := claimRecreated(t, s, atOnce)
	if err := s.Record(ctx, "me", fresh, nil); err != nil {
		t.Fatalf("Record(claim of the new job): %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	old.Status.ExecutionCount = 7
	if err := s.Record(cctx, "me", old, nil); err == nil {
		t.Errorf("Record(claim of the deleted job, cancelled context) = nil, want ErrNotFound or %v", context.Canceled)
	} else if !errors.Is(err, scheduler.ErrNotFound) && !errors.Is(err, context.Canceled) {
		t.Errorf("Record(claim of the deleted job, cancelled context): %v, want ErrNotFound or %v", err, context.Canceled)
	}
	got, err := s.GetJob(ctx, "c", "j")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.ExecutionCount != 0 || got.Version != fresh.Version+1 {
		t.Errorf("the new job after the old claim's write: executionCount %d, version %d; want 0, %d",
			got.Status.ExecutionCount, got.Version, fresh.Version+1)
	}
}

// claimedJob puts job c/j (and collection c) due at t0 in s and returns
// it claimed by "me" until a minute later.
func claimedJob(t *testing.T, s scheduler.Store) *scheduler.JobRecord {
	t.Helper()
	putCollection(t, s, "c", 0)
	putJob(t, s, "c", "j", t0)
	got, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 1)
	if err != nil || len(got) != 1 {
		t.Fatalf("ClaimDue = %d jobs, %v; want the job", len(got), err)
	}
	return got[0]
}

// claimRecreated claims job c/j as "me", deletes it, creates it again a
// second later, or with atOnce at the same instant (the same Created: a
// clock that has not moved, or a coarse one; only the Incarnation the
// store draws tells the two apart), and claims it again as "me". It
// returns both claims; they have the same version.
func claimRecreated(t *testing.T, s scheduler.Store, atOnce bool) (old, fresh *scheduler.JobRecord) {
	t.Helper()
	old = claimedJob(t, s)
	if err := s.DeleteJob(ctx, "c", "j", ""); err != nil {
		t.Fatal(err)
	}
	j := newJob("c", "j", t0)
	if !atOnce {
		j.Created, j.Updated = t0.Add(time.Second), t0.Add(time.Second)
	}
	j.Incarnation = old.Incarnation // what the store draws counts, not what it is given
	if err := s.PutJob(ctx, j); err != nil {
		t.Fatalf("PutJob(again): %v", err)
	}
	got, err := s.ClaimDue(ctx, t0.Add(time.Second), "me", t0.Add(time.Minute), 1)
	if err != nil || len(got) != 1 {
		t.Fatalf("ClaimDue(new job) = %d jobs, %v; want the job", len(got), err)
	}
	fresh = got[0]
	if fresh.Version != old.Version {
		t.Fatalf("the new job was claimed at version %d, the old one at %d; want the same", fresh.Version, old.Version)
	}
	return old, fresh
}

// recreatedLater and recreatedAtOnce are the tests of a job deleted and
// created again run with the new job created a second after the first
// and at the same instant (see claimRecreated).
func recreatedLater(fn func(*testing.T, scheduler.Store, bool)) func(*testing.T, scheduler.Store) {
	return func(t *testing.T, s scheduler.Store) { fn(t, s, false) }
}

func recreatedAtOnce(fn func(*testing.T, scheduler.Store, bool)) func(*testing.T, scheduler.Store) {
	return func(t *testing.T, s scheduler.Store) { fn(t, s, true) }
}

// testIncarnation checks that a store draws a job's Incarnation when it
// creates the job, whatever the record given holds: never zero, another
// for each job of a name created again, set in the record a create was
// given (PutJob, PutJobs, CreateJob), handed back by every read, and kept
// by a replace and a Record whatever their records hold.
func testIncarnation(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 0)
	seen := map[int64]string{}
	drawn := func(what string) int64 {
		t.Helper()
		n := incarnation(t, s, "c", "j")
		if n == 0 {
			t.Fatalf("Incarnation of c/j after %s = 0, want one the store drew", what)
		}
		if prev, ok := seen[n]; ok {
			t.Fatalf("Incarnation of c/j after %s = %d, as after %s", what, n, prev)
		}
		seen[n] = what
		return n
	}
	j := newJob("c", "j", t0)
	j.Incarnation = 42 // the store draws its own
	if err := s.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	first := drawn("the first create")
	if first == 42 {
		t.Errorf("Incarnation of c/j = 42, what PutJob was given; want one the store drew")
	}
	answered := func(what string, j *scheduler.JobRecord, stored int64) {
		t.Helper()
		if j.Incarnation != stored {
			t.Errorf("Incarnation of the record %s created = %d, want the one stored, %d", what, j.Incarnation, stored)
		}
	}
	answered("PutJob", j, first)
	for round := range 3 {
		if err := s.DeleteJob(ctx, "c", "j", ""); err != nil {
			t.Fatal(err)
		}
		j.Incarnation = first
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		answered("PutJob", j, drawn(fmt.Sprintf("create %d at the same instant", round+2)))
	}
	n := incarnation(t, s, "c", "j")
	r := mustGet(t, s, "c", "j")
	r.Incarnation, r.ETag = n+1, "replaced"
	if err := s.PutJob(ctx, r); err != nil {
		t.Fatal(err)
	}
	if got := incarnation(t, s, "c", "j"); got != n {
		t.Errorf("Incarnation after a replace given %d = %d, want the stored %d", n+1, got, n)
	}
	list, err := s.ListJobs(ctx, "c", scheduler.JobFilter{})
	if err != nil || len(list) != 1 || list[0].Incarnation != n {
		t.Errorf("ListJobs = %v, %v; want c/j of Incarnation %d", list, err, n)
	}
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 1)
	if err != nil || len(claimed) != 1 || claimed[0].Incarnation != n {
		t.Fatalf("ClaimDue = %v, %v; want c/j of Incarnation %d", claimed, err, n)
	}
	if err := s.Record(ctx, "me", claimed[0], nil); err != nil {
		t.Fatalf("Record: %v", err)
	}
	if got := incarnation(t, s, "c", "j"); got != n {
		t.Errorf("Incarnation after Record = %d, want %d", got, n)
	}
	if bp, ok := s.(scheduler.BulkPutter); ok {
		k := newJob("c", "k", t0)
		k.Incarnation = n
		if err := bp.PutJobs(ctx, "c", []*scheduler.JobRecord{k}); err != nil {
			t.Fatalf("PutJobs: %v", err)
		}
		got := incarnation(t, s, "c", "k")
		if got == 0 || got == n {
			t.Errorf("Incarnation of c/k created by PutJobs = %d, want one the store drew (not 0, not %d)", got, n)
		}
		answered("PutJobs", k, got)
	}
	if jc, ok := s.(scheduler.JobCreator); ok {
		col, err := s.GetCollection(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		l := newJob("c", "l", t0)
		if err := jc.CreateJob(ctx, col, l); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}
		answered("CreateJob", l, incarnation(t, s, "c", "l"))
	}
}

// PutJobFromBefore puts job c/j, due at t0, in a new collection c: what a
// migration test then turns into a job from before the store drew
// incarnations (its schema had none), for CheckJobFromBefore.
func PutJobFromBefore(t *testing.T, s scheduler.Store) {
	t.Helper()
	putCollection(t, s, "c", 0)
	putJob(t, s, "c", "j", t0)
}

// CheckJobFromBefore checks job c/j that PutJobFromBefore put, in a store
// migrated since from a schema without incarnations: its Incarnation is
// zero, a claim of it records (the job is told apart by Created alone),
// and once it is deleted and created again a second later, the new job
// has an Incarnation of its own and the old claim's Record fails with
// ErrNotFound.
func CheckJobFromBefore(t *testing.T, s scheduler.Store) {
	t.Helper()
	if n := incarnation(t, s, "c", "j"); n != 0 {
		t.Errorf("Incarnation of a job from before the migration = %d, want 0", n)
	}
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 1)
	if err != nil || len(claimed) != 1 || claimed[0].Incarnation != 0 {
		t.Fatalf("ClaimDue = %v, %v; want c/j of Incarnation 0", claimed, err)
	}
	old := claimed[0]
	if err := s.Record(ctx, "me", old.Clone(), nil); err != nil {
		t.Fatalf("Record of a job from before the migration: %v", err)
	}
	if claimed, err = s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 1); err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimDue again = %v, %v; want c/j", claimed, err)
	}
	old = claimed[0]
	if err := s.DeleteJob(ctx, "c", "j", ""); err != nil {
		t.Fatal(err)
	}
	j := newJob("c", "j", t0)
	j.Created, j.Updated = t0.Add(time.Second), t0.Add(time.Second)
	if err := s.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	if n := incarnation(t, s, "c", "j"); n == 0 {
		t.Errorf("Incarnation of a job created after the migration = 0, want one the store drew")
	}
	wantErr(t, "Record(claim from before the migration of a job deleted since)", s.Record(ctx, "me", old, nil), scheduler.ErrNotFound)
}

// incarnation returns the Incarnation of job coll/name as the store holds
// it.
func incarnation(t *testing.T, s scheduler.Store, coll, name string) int64 {
	t.Helper()
	return mustGet(t, s, coll, name).Incarnation
}

// wantUntouched checks that job c/j is still as claim left it, with no
// history.
func wantUntouched(t *testing.T, s scheduler.Store, claim *scheduler.JobRecord) {
	t.Helper()
	got, err := s.GetJob(ctx, "c", "j")
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != claim.Version || got.LeaseOwner != "me" || got.Status.ExecutionCount != 0 ||
		!got.Created.Equal(claim.Created) || !got.Schedule.DueAt.Equal(claim.Schedule.DueAt) {
		t.Errorf("the new job after the old claim's write: version %d, lease owner %q, executionCount %d, created %v, due %v; want version %d, owner %q, 0, %v, %v",
			got.Version, got.LeaseOwner, got.Status.ExecutionCount, got.Created, got.Schedule.DueAt,
			claim.Version, "me", claim.Created, claim.Schedule.DueAt)
	}
	if hist, _ := s.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{}); len(hist) != 0 {
		t.Errorf("history of the new job = %d entries, want none", len(hist))
	}
}

func testPutKeepsLease(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 0)
	putJob(t, s, "c", "j", t0)
	got, _ := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 1)
	if len(got) != 1 {
		t.Fatal("nothing claimed")
	}
	cur, _ := s.GetJob(ctx, "c", "j")
	cur.LeaseOwner, cur.LeaseUntil = "", time.Time{}
	cur.ETag = "user"
	cur.Schedule.DueAt = t0
	if err := s.PutJob(ctx, cur); err != nil {
		t.Fatalf("PutJob(leased job): %v", err)
	}
	after, _ := s.GetJob(ctx, "c", "j")
	if after.LeaseOwner != "me" || !after.LeaseUntil.Equal(t0.Add(time.Minute)) {
		t.Errorf("PutJob dropped the lease: owner %q until %v", after.LeaseOwner, after.LeaseUntil)
	}
	if again, _ := s.ClaimDue(ctx, t0.Add(time.Second), "other", t0.Add(time.Hour), 1); len(again) != 0 {
		t.Errorf("ClaimDue of a leased job after PutJob = %v, want nothing", names(again))
	}
	wantErr(t, "Record(after a concurrent PutJob)", s.Record(ctx, "me", got[0], nil), scheduler.ErrConflict)
	if err := s.Record(ctx, "me", after, nil); err != nil {
		t.Errorf("Record(re-read record): %v", err)
	}
}

func entry(n int, st scheduler.ExecutionStatus, end time.Time) scheduler.HistoryEntry {
	return scheduler.HistoryEntry{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: st,
		ExpectedExecutionTime: end, StartTime: end, EndTime: end, RepeatCount: n, Message: fmt.Sprint(n)}
}

func recordHistory(t *testing.T, s scheduler.Store, coll, name string, hist []scheduler.HistoryEntry) {
	t.Helper()
	j, err := s.GetJob(ctx, coll, name)
	if err != nil {
		t.Fatal(err)
	}
	now := j.Schedule.DueAt
	if now.IsZero() {
		j.Schedule.DueAt = t0
		j.Schedule.NextOccurrence = t0
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		now = t0
	}
	got, err := s.ClaimDue(ctx, now.Add(time.Hour*24*365*10), "h", now.Add(time.Hour*24*365*11), 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range got {
		var h []scheduler.HistoryEntry
		if g.Collection == coll && g.Name == name {
			h = hist
		}
		if err := s.Record(ctx, "h", g, h); err != nil {
			t.Fatal(err)
		}
	}
}

func messages(h []scheduler.HistoryEntry) []string {
	var out []string
	for _, e := range h {
		out = append(out, e.Message)
	}
	return out
}

func testHistory(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 0)
	putJob(t, s, "c", "j", t0)
	_, err := s.ListHistory(ctx, "c", "x", scheduler.HistoryFilter{})
	wantErr(t, "ListHistory(missing job)", err, scheduler.ErrNotFound)
	var hist []scheduler.HistoryEntry
	for i := 1; i <= 6; i++ {
		st := scheduler.StatusCompleted
		if i%2 == 0 {
			st = scheduler.StatusFailed
		}
		if i == 5 {
			st = scheduler.StatusPostponed
		}
		hist = append(hist, entry(i, st, t0.Add(time.Duration(i)*time.Minute)))
	}
	hist[1].Faulted, hist[5].Faulted = true, true // 2 and 6 faulted their occurrence; 4 failed without
	recordHistory(t, s, "c", "j", hist[:3])
	recordHistory(t, s, "c", "j", hist[3:])
	tests := []struct {
		name string
		f    scheduler.HistoryFilter
		want []string
	}{
		{"all newest first", scheduler.HistoryFilter{}, []string{"6", "5", "4", "3", "2", "1"}},
		{"top", scheduler.HistoryFilter{Top: 2}, []string{"6", "5"}},
		{"skip", scheduler.HistoryFilter{Skip: 4}, []string{"2", "1"}},
		{"page", scheduler.HistoryFilter{Skip: 1, Top: 2}, []string{"5", "4"}},
		{"failed", scheduler.HistoryFilter{Status: scheduler.StatusFailed}, []string{"6", "4", "2"}},
		{"completed, paged", scheduler.HistoryFilter{Status: scheduler.StatusCompleted, Skip: 1, Top: 5}, []string{"1"}},
		{"postponed", scheduler.HistoryFilter{Status: scheduler.StatusPostponed}, []string{"5"}},
		{"skip past end", scheduler.HistoryFilter{Skip: 10}, nil},
		{"faulted", scheduler.HistoryFilter{Faulted: true}, []string{"6", "2"}},
		{"not faulted", scheduler.HistoryFilter{NotFaulted: true}, []string{"5", "4", "3", "1"}},
		{"not faulted, paged", scheduler.HistoryFilter{NotFaulted: true, Skip: 1, Top: 2}, []string{"4", "3"}},
		{"failed, not faulted", scheduler.HistoryFilter{Status: scheduler.StatusFailed, NotFaulted: true}, []string{"4"}},
		{"completed, not faulted", scheduler.HistoryFilter{Status: scheduler.StatusCompleted, NotFaulted: true}, []string{"3", "1"}},
		{"faulted and not faulted", scheduler.HistoryFilter{Faulted: true, NotFaulted: true}, nil},
	}
	for _, tt := range tests {
		got, err := s.ListHistory(ctx, "c", "j", tt.f)
		if err != nil {
			t.Fatalf("ListHistory(%s): %v", tt.name, err)
		}
		if !equal(messages(got), tt.want) {
			t.Errorf("ListHistory(%s) = %v, want %v", tt.name, messages(got), tt.want)
		}
	}
}

func testPrune(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 0)
	putJob(t, s, "c", "j", t0)
	putJob(t, s, "c", "k", t0)
	var hist []scheduler.HistoryEntry
	for i := 1; i <= 10; i++ {
		hist = append(hist, entry(i, scheduler.StatusCompleted, t0.Add(time.Duration(i)*time.Hour)))
	}
	recordHistory(t, s, "c", "j", hist)
	done := newJob("c", "done", time.Time{})
	done.State, done.Updated = scheduler.JobCompleted, t0
	faulted := newJob("c", "faulted", time.Time{})
	faulted.State, faulted.Updated = scheduler.JobFaulted, t0.Add(48*time.Hour)
	for _, j := range []*scheduler.JobRecord{done, faulted} {
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.Prune(ctx, scheduler.PruneRequest{HistoryBefore: t0.Add(3 * time.Hour), PerJob: 5, FinalJobsBefore: t0.Add(24 * time.Hour)})
	if err != nil {
		t.Fatalf("Prune: %v", err)
	}
	got, _ := s.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{})
	if want := []string{"10", "9", "8", "7", "6"}; !equal(messages(got), want) {
		t.Errorf("history after Prune = %v, want %v", messages(got), want)
	}
	if _, err := s.GetJob(ctx, "c", "done"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("Completed job older than FinalJobsBefore still there (err %v)", err)
	}
	if _, err := s.GetJob(ctx, "c", "faulted"); err != nil {
		t.Errorf("Faulted job newer than FinalJobsBefore: %v", err)
	}
	if _, err := s.GetJob(ctx, "c", "k"); err != nil {
		t.Errorf("Enabled job pruned: %v", err)
	}
	if n != 6 {
		t.Errorf("Prune = %d, want 6 (5 entries and 1 job)", n)
	}
}

func testDeleteCascades(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 0)
	putCollection(t, s, "d", 0)
	putJob(t, s, "c", "j", t0)
	putJob(t, s, "d", "j", t0)
	recordHistory(t, s, "c", "j", []scheduler.HistoryEntry{entry(1, scheduler.StatusCompleted, t0)})
	if err := s.DeleteCollection(ctx, "c", ""); err != nil {
		t.Fatal(err)
	}
	_, err := s.GetJob(ctx, "c", "j")
	wantErr(t, "GetJob(in deleted collection)", err, scheduler.ErrNotFound)
	_, err = s.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{})
	wantErr(t, "ListHistory(in deleted collection)", err, scheduler.ErrNotFound)
	putCollection(t, s, "c", 0)
	putJob(t, s, "c", "j", t0)
	if h, _ := s.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{}); len(h) != 0 {
		t.Errorf("re-created job inherited history %v", messages(h))
	}
	got, _ := s.ClaimDue(ctx, t0.Add(time.Hour), "me", t0.Add(2*time.Hour), 10)
	if ns := names(got); !equal(ns, []string{"c/j", "d/j"}) && !equal(ns, []string{"d/j", "c/j"}) {
		t.Errorf("ClaimDue after delete and re-create = %v, want [c/j d/j]", names(got))
	}
	if err := s.DeleteJob(ctx, "d", "j", ""); err != nil {
		t.Fatal(err)
	}
	if next, _ := s.NextDue(ctx); !next.Equal(t0.Add(2 * time.Hour)) {
		t.Errorf("NextDue = %v, want the remaining lease end %v", next, t0.Add(2*time.Hour))
	}
}

func testTimesInUTC(t *testing.T, s scheduler.Store) {
	zone := time.FixedZone("X", 5*3600)
	putCollection(t, s, "c", 0)
	j := newJob("c", "j", t0.In(zone))
	j.Created = t0.In(zone)
	j.Schedule.NextOccurrence = t0.In(zone)
	if err := s.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetJob(ctx, "c", "j")
	for what, tm := range map[string]time.Time{"Created": got.Created, "DueAt": got.Schedule.DueAt, "NextOccurrence": got.Schedule.NextOccurrence} {
		if tm.Location() != time.UTC || !tm.Equal(t0) {
			t.Errorf("%s = %v, want %v in UTC", what, tm, t0)
		}
	}
}

// testPolicyResumed: the instant a job was enabled again
// (PolicyState.Resumed) comes back from a put, a claim and a record, in
// UTC, and a record that drops it drops it.
func testPolicyResumed(t *testing.T, s scheduler.Store) {
	zone := time.FixedZone("X", -7*3600)
	resumed := t0.Add(-time.Minute)
	putCollection(t, s, "c", 0)
	j := newJob("c", "j", t0)
	j.Schedule.LastSucceeded = t0.Add(-time.Hour).In(zone)
	j.Schedule.Policy = &scheduler.PolicyState{Resumed: resumed.In(zone)}
	if err := s.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	check := func(what string, r *scheduler.JobRecord) {
		t.Helper()
		if p := r.Schedule.Policy; p == nil || p.Resumed.Location() != time.UTC || !p.Resumed.Equal(resumed) {
			t.Errorf("%s: Policy %+v; want Resumed %v in UTC", what, p, resumed)
		}
	}
	got, err := s.GetJob(ctx, "c", "j")
	if err != nil {
		t.Fatal(err)
	}
	check("GetJob after PutJob", got)
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 1)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimDue = %d records, %v; want the job", len(claimed), err)
	}
	check("ClaimDue", claimed[0])
	r := claimed[0]
	r.Schedule.DueAt = t0.Add(time.Hour)
	if err := s.Record(ctx, "me", r, nil); err != nil {
		t.Fatalf("Record: %v", err)
	}
	if got, _ = s.GetJob(ctx, "c", "j"); got != nil {
		check("GetJob after Record", got)
	}
	claimed, err = s.ClaimDue(ctx, t0.Add(time.Hour), "me", t0.Add(2*time.Hour), 1)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimDue = %d records, %v; want the job", len(claimed), err)
	}
	r = claimed[0]
	r.Schedule.LastSucceeded, r.Schedule.Policy = t0.Add(time.Hour), nil
	if err := s.Record(ctx, "me", r, nil); err != nil {
		t.Fatalf("Record: %v", err)
	}
	if got, _ = s.GetJob(ctx, "c", "j"); got == nil || got.Schedule.Policy != nil || !got.Schedule.LastSucceeded.Equal(t0.Add(time.Hour)) {
		t.Errorf("after a Record without Policy: %+v; want no Policy, LastSucceeded %v", got, t0.Add(time.Hour))
	}
}
