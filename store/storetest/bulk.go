package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// RunBulkPutter checks [scheduler.BulkPutter] on stores made by newStore,
// which must implement it: GetJobs answers in order, and PutJobs writes a
// batch all or nothing, with PutJob's errors and the quota counted once
// for the batch.
func RunBulkPutter(t *testing.T, newStore func(t *testing.T) scheduler.Store) {
	t.Run("GetJobs", func(t *testing.T) { bulkGetJobs(t, newStore(t)) })
	t.Run("CreateAndReplace", func(t *testing.T) { bulkCreateAndReplace(t, newStore(t)) })
	t.Run("AllOrNothing", func(t *testing.T) { bulkAllOrNothing(t, newStore(t)) })
	t.Run("QuotaOncePerBatch", func(t *testing.T) { bulkQuota(t, newStore(t)) })
}

func bulkPutter(t *testing.T, s scheduler.Store) scheduler.BulkPutter {
	t.Helper()
	bp, ok := s.(scheduler.BulkPutter)
	if !ok {
		t.Fatalf("%T does not implement scheduler.BulkPutter", s)
	}
	return bp
}

// jobNames returns the names of the jobs of coll, in order.
func jobNames(t *testing.T, s scheduler.Store, coll string) []string {
	t.Helper()
	list, err := s.ListJobs(ctx, coll, scheduler.JobFilter{})
	if err != nil {
		t.Fatalf("ListJobs(%s): %v", coll, err)
	}
	var out []string
	for _, j := range list {
		out = append(out, j.Name)
	}
	return out
}

func bulkGetJobs(t *testing.T, s scheduler.Store) {
	bp := bulkPutter(t, s)
	got, err := bp.GetJobs(ctx, "none", []string{"a"})
	if err != nil || len(got) != 1 || got[0] != nil {
		t.Errorf("GetJobs(missing collection) = %v, %v; want [nil]", got, err)
	}
	putCollection(t, s, "c", 0)
	putJob(t, s, "c", "b", t0)
	putJob(t, s, "c", "a", t0.Add(time.Minute))
	got, err = bp.GetJobs(ctx, "c", []string{"a", "x", "b"})
	if err != nil || len(got) != 3 || got[0] == nil || got[0].Name != "a" || got[1] != nil || got[2] == nil || got[2].Name != "b" {
		t.Fatalf("GetJobs(a, x, b) = %v, %v; want a, nil, b", got, err)
	}
	if !got[0].Schedule.DueAt.Equal(t0.Add(time.Minute)) || got[0].Version != 1 || got[0].Job == nil {
		t.Errorf("GetJobs: a = %+v, want the record as put", got[0])
	}
	got[0].Job.Action.Type = "changed" // the caller's
	again, _ := s.GetJob(ctx, "c", "a")
	if again.Job.Action.Type == "changed" {
		t.Errorf("changing a record GetJobs returned changed the stored job")
	}
}

func bulkCreateAndReplace(t *testing.T, s scheduler.Store) {
	bp := bulkPutter(t, s)
	if err := bp.PutJobs(ctx, "c", nil); err != nil {
		t.Errorf("PutJobs(empty) = %v, want nil", err)
	}
	putCollection(t, s, "c", 0)
	old := putJob(t, s, "c", "old", t0)
	old.ETag = "j2"
	old.Schedule.DueAt = t0.Add(time.Hour)
	old.Tags = map[string]string{"team": "b"}
	n1 := newJob("c", "n1", t0)
	n1.Tags = map[string]string{"team": "a"}
	batch := []*scheduler.JobRecord{n1, old, newJob("c", "n2", t0.Add(time.Second))}
	if err := bp.PutJobs(ctx, "c", batch); err != nil {
		t.Fatalf("PutJobs(two creates, one replace): %v", err)
	}
	if got := jobNames(t, s, "c"); !equal(got, []string{"n1", "n2", "old"}) {
		t.Errorf("jobs after PutJobs = %v, want n1 n2 old", got)
	}
	for _, want := range []struct {
		name    string
		version int64
		etag    string
		due     time.Time
		team    string
	}{{"n1", 1, "j1", t0, "a"}, {"n2", 1, "j1", t0.Add(time.Second), ""}, {"old", 2, "j2", t0.Add(time.Hour), "b"}} {
		got, err := s.GetJob(ctx, "c", want.name)
		if err != nil || got.Version != want.version || got.ETag != want.etag || !got.Schedule.DueAt.Equal(want.due) || got.Tags["team"] != want.team {
			t.Errorf("GetJob(%s) = %+v, %v; want version %d, ETag %s, due %v, tag team %q", want.name, got, err, want.version, want.etag, want.due, want.team)
		}
	}
	// The new jobs are due like any other.
	claimed, err := s.ClaimDue(ctx, t0.Add(time.Second), "me", t0.Add(time.Minute), 10)
	if err != nil || !equal(names(claimed), []string{"c/n1", "c/n2"}) {
		t.Errorf("ClaimDue = %v, %v; want c/n1 c/n2", names(claimed), err)
	}
}

func bulkAllOrNothing(t *testing.T, s scheduler.Store) {
	bp := bulkPutter(t, s)
	wantErr(t, "PutJobs(missing collection)", bp.PutJobs(ctx, "none", []*scheduler.JobRecord{newJob("none", "a", t0)}), scheduler.ErrNotFound)
	putCollection(t, s, "c", 0)
	a := putJob(t, s, "c", "a", t0)
	stale := a.Clone()
	a.ETag = "j2"
	if err := s.PutJob(ctx, a); err != nil {
		t.Fatal(err)
	}
	gone := newJob("c", "gone", t0)
	gone.Version = 1
	for _, tt := range []struct {
		name  string
		batch []*scheduler.JobRecord
		want  error
	}{
		{"a stale replace last", []*scheduler.JobRecord{newJob("c", "x", t0), newJob("c", "y", t0), stale}, scheduler.ErrConflict},
		{"a stale replace first", []*scheduler.JobRecord{stale, newJob("c", "x", t0)}, scheduler.ErrConflict},
		{"a create of a job that exists", []*scheduler.JobRecord{newJob("c", "x", t0), newJob("c", "a", t0)}, scheduler.ErrConflict},
		{"a replace of a job that does not exist", []*scheduler.JobRecord{newJob("c", "x", t0), gone}, scheduler.ErrNotFound},
	} {
		wantErr(t, "PutJobs("+tt.name+")", bp.PutJobs(ctx, "c", tt.batch), tt.want)
		if got := jobNames(t, s, "c"); !equal(got, []string{"a"}) {
			t.Errorf("after PutJobs(%s): jobs %v, want only a", tt.name, got)
		}
		if got, _ := s.GetJob(ctx, "c", "a"); got.Version != 2 || got.ETag != "j2" {
			t.Errorf("after PutJobs(%s): a has version %d and ETag %s, want 2 and j2", tt.name, got.Version, got.ETag)
		}
	}
}

func bulkQuota(t *testing.T, s scheduler.Store) {
	bp := bulkPutter(t, s)
	putCollection(t, s, "c", 5)
	a := putJob(t, s, "c", "a", t0)
	putJob(t, s, "c", "b", t0)
	batch := func(replace *scheduler.JobRecord, creates ...string) []*scheduler.JobRecord {
		var out []*scheduler.JobRecord
		if replace != nil {
			out = append(out, replace)
		}
		for _, n := range creates {
			out = append(out, newJob("c", n, t0))
		}
		return out
	}
	for i := range 50 { // a store may look for room from a random place
		replace := a.Clone()
		replace.ETag = "j2"
		if i%2 == 1 {
			replace = nil
		}
		err := bp.PutJobs(ctx, "c", batch(replace, "c", "d", "e", "f"))
		var qe *scheduler.QuotaError
		if !errors.As(err, &qe) || qe.Quota != "maxJobCount" || qe.Collection != "c" || qe.Limit != "5" {
			t.Fatalf("PutJobs(4 creates into 2 of 5) error %v, want a *QuotaError for maxJobCount 5 of c", err)
		}
	}
	// Nothing of a refused batch is written, its replace neither.
	if got := jobNames(t, s, "c"); !equal(got, []string{"a", "b"}) {
		t.Errorf("after the refused batch: jobs %v, want a b", got)
	}
	if got, err := s.GetJob(ctx, "c", "a"); err != nil || got.Version != a.Version || got.ETag != a.ETag {
		t.Errorf("a after the refused batches: %+v, %v; want version %d, ETag %s", got, err, a.Version, a.ETag)
	}
	// A replace does not count; three creates fill the collection.
	if err := bp.PutJobs(ctx, "c", batch(a, "c", "d", "e")); err != nil {
		t.Fatalf("PutJobs(a replace and 3 creates into 2 of 5): %v", err)
	}
	a, _ = s.GetJob(ctx, "c", "a")
	if err := bp.PutJobs(ctx, "c", batch(a)); err != nil {
		t.Errorf("PutJobs(a replace in a full collection): %v", err)
	}
	wantErr(t, "PutJobs(1 create into a full collection)", bp.PutJobs(ctx, "c", batch(nil, "f")), scheduler.ErrQuotaExceeded)
	if got := jobNames(t, s, "c"); len(got) != 5 {
		t.Errorf("jobs %v, want 5", got)
	}
}

// RunConcurrentPuts checks that creates racing into one collection from
// several goroutines and stores (instances over one database, or the same
// store several times) never exceed its maxJobCount and fill it exactly:
// first single PutJob calls, PutJobs batches (on stores that are a
// [scheduler.BulkPutter]) and deletes freeing places meanwhile; then
// single creates alone, which must fill the places left.
func RunConcurrentPuts(t *testing.T, stores []scheduler.Store) {
	const (
		limit   = 60
		workers = 8
		each    = 20 // creates per worker and round: 160, for 60 places
	)
	putCollection(t, stores[0], "c", limit)
	var mu sync.Mutex
	ok, quota, deleted := 0, 0, 0
	count := func(n int, err error) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil:
			ok += n
		case errors.Is(err, scheduler.ErrQuotaExceeded):
			quota += n
		default:
			t.Errorf("put: %v", err)
		}
	}
	race := func(round int, mixed bool) {
		var wg sync.WaitGroup
		for w := range workers {
			st := stores[w%len(stores)]
			bp, bulk := st.(scheduler.BulkPutter)
			name := func(i int) string { return fmt.Sprintf("r%d-w%d-%02d", round, w, i) }
			wg.Go(func() {
				for i := 0; i < each; {
					if mixed && bulk && w%2 == 1 {
						var batch []*scheduler.JobRecord
						for k := range 4 {
							batch = append(batch, newJob("c", name(i+k), t0))
						}
						count(4, bp.PutJobs(ctx, "c", batch))
						i += 4
						continue
					}
					err := st.PutJob(ctx, newJob("c", name(i), t0))
					count(1, err)
					if mixed && w == 0 && i%4 == 0 && err == nil {
						if err := st.DeleteJob(ctx, "c", name(i), ""); err != nil {
							t.Errorf("DeleteJob: %v", err)
						}
						mu.Lock()
						deleted++
						mu.Unlock()
					}
					i++
				}
			})
		}
		wg.Wait()
	}
	race(0, true)
	got := jobNames(t, stores[0], "c")
	if len(got) > limit || len(got) != ok-deleted || ok+quota != workers*each {
		t.Errorf("%d creates (%d of them deleted again) racing for %d places: %d succeeded, %d refused for the quota, %d jobs stored; want at most %d stored, one per success not deleted",
			workers*each, deleted, limit, ok, quota, len(got), limit)
	}
	before := len(got)
	ok, quota = 0, 0
	race(1, false)
	if got := jobNames(t, stores[0], "c"); len(got) != limit || ok != limit-before || quota != workers*each-ok {
		t.Errorf("%d single creates racing for the %d places left of %d: %d succeeded, %d refused for the quota, %d jobs stored; want the collection full",
			workers*each, limit-before, limit, ok, quota, len(got))
	}
	// Once full, one more create is refused, whichever store makes it.
	for i, st := range stores {
		wantErr(t, fmt.Sprintf("PutJob(one more, store %d)", i), st.PutJob(ctx, newJob("c", "more", t0)), scheduler.ErrQuotaExceeded)
	}
	quotaChangedElsewhere(t, stores[0], stores[len(stores)-1])
}

// quotaChangedElsewhere checks that creates through a obey the quota of a
// collection that b changes, deletes and creates again after a created
// jobs in it.
func quotaChangedElsewhere(t *testing.T, a, b scheduler.Store) {
	n := 0
	create := func(what string, want error) {
		t.Helper()
		n++
		err := a.PutJob(ctx, newJob("q", fmt.Sprintf("j%02d", n), t0))
		if want == nil && err != nil || want != nil && !errors.Is(err, want) {
			t.Errorf("%s: PutJob = %v, want %v", what, err, want)
		}
	}
	quota := func(limit int) {
		t.Helper()
		c, err := b.GetCollection(ctx, "q")
		if err != nil {
			t.Fatal(err)
		}
		c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: limit}
		if err := b.PutCollection(ctx, c); err != nil {
			t.Fatalf("PutCollection(quota %d): %v", limit, err)
		}
	}
	putCollection(t, b, "q", 10)
	create("the first of 10", nil)
	create("the second of 10", nil)
	quota(2)
	create("a third after the quota went down to 2 elsewhere", scheduler.ErrQuotaExceeded)
	quota(4)
	create("a third after the quota went up to 4 elsewhere", nil)
	create("a fourth of 4", nil)
	create("a fifth of 4", scheduler.ErrQuotaExceeded)
	if err := b.DeleteCollection(ctx, "q", ""); err != nil {
		t.Fatal(err)
	}
	create("into a collection deleted elsewhere", scheduler.ErrNotFound)
	putCollection(t, b, "q", 1)
	create("the first of 1 in the collection made again elsewhere", nil)
	create("a second of 1", scheduler.ErrQuotaExceeded)
}
