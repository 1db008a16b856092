package storetest

import (
	"errors"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	scheduler "github.com/jobclock/scheduler"
)

// testReadForPut: a store that is a [scheduler.PutReader] answers
// ReadForPut as GetCollection and GetJob answer, and what it returns is
// the caller's.
func testReadForPut(t *testing.T, s scheduler.Store) {
	pr, ok := s.(scheduler.PutReader)
	if !ok {
		t.Skipf("%T is no scheduler.PutReader", s)
	}
	check := func(step, coll, job string) {
		t.Helper()
		col, got, err := pr.ReadForPut(ctx, coll, job)
		wantCol, errCol := s.GetCollection(ctx, coll)
		if errCol != nil {
			var nf *scheduler.NotFoundError
			if !errors.As(err, &nf) || *nf != (scheduler.NotFoundError{Collection: coll}) || col != nil || got != nil {
				t.Errorf("%s: ReadForPut(%q, %q) = %v, %v, %v; want ErrNotFound naming the collection (GetCollection: %v)", step, coll, job, col, got, err, errCol)
			}
			return
		}
		want, errJob := s.GetJob(ctx, coll, job)
		if errJob != nil {
			want = nil
		}
		if err != nil {
			t.Fatalf("%s: ReadForPut(%q, %q): %v", step, coll, job, err)
		}
		if diff := gocmp.Diff(wantCol, col); diff != "" {
			t.Errorf("%s: ReadForPut(%q, %q)'s collection differs from GetCollection's (-want +got):\n%s", step, coll, job, diff)
		}
		if diff := gocmp.Diff(want, got); diff != "" {
			t.Errorf("%s: ReadForPut(%q, %q)'s job differs from GetJob's (-want +got):\n%s", step, coll, job, diff)
		}
	}
	check("no collection", "c", "j")
	c := richCollection("c")
	if err := s.PutCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	check("empty collection", "c", "j")
	if err := s.PutJob(ctx, richRecord("c", "j", 1)); err != nil {
		t.Fatal(err)
	}
	check("the job", "c", "j")
	check("another job", "c", "k")
	col, j, err := pr.ReadForPut(ctx, "c", "j")
	if err != nil {
		t.Fatal(err)
	}
	read := func() (any, error) {
		col, j, err := pr.ReadForPut(ctx, "c", "j")
		return []any{col, j}, err
	}
	checkOwned(t, "ReadForPut", &[]any{col, j}, read)
}

// testCreateJob: a store that is a [scheduler.JobCreator] creates a job
// over its collection's record while that record is the stored one, and
// otherwise writes nothing and fails with ErrConflict: when the job exists,
// the collection is full, was written (or deleted and created again) since,
// or is gone.
func testCreateJob(t *testing.T, s scheduler.Store) {
	jc, ok := s.(scheduler.JobCreator)
	if !ok {
		t.Skipf("%T is no scheduler.JobCreator", s)
	}
	absent := func(step, name string) {
		t.Helper()
		if j, err := s.GetJob(ctx, "c", name); !errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("%s: GetJob(c/%s) = %v, %v; want ErrNotFound", step, name, j, err)
		}
	}
	col := putCollection(t, s, "c", 2)
	if err := jc.CreateJob(ctx, col, newJob("c", "a", t0)); err != nil {
		t.Fatalf("CreateJob(c/a): %v", err)
	}
	if j, err := s.GetJob(ctx, "c", "a"); err != nil || j.Version != 1 || !j.Schedule.DueAt.Equal(t0) {
		t.Fatalf("GetJob(c/a) after CreateJob = %+v, %v; want version 1 due at %v", j, err, t0)
	}
	again := newJob("c", "a", t0.Add(time.Hour))
	wantErr(t, "CreateJob(c/a again)", jc.CreateJob(ctx, col, again), scheduler.ErrConflict)
	if j, err := s.GetJob(ctx, "c", "a"); err != nil || j.Version != 1 || !j.Schedule.DueAt.Equal(t0) {
		t.Errorf("GetJob(c/a) after a second CreateJob = %+v, %v; want it unchanged", j, err)
	}
	if err := jc.CreateJob(ctx, col, newJob("c", "b", t0)); err != nil {
		t.Fatalf("CreateJob(c/b): %v", err)
	}
	wantErr(t, "CreateJob(third job, maxJobCount 2)", jc.CreateJob(ctx, col, newJob("c", "x", t0)), scheduler.ErrConflict)
	absent("full", "x")

	// A write of the collection makes the record read before it stale,
	// even one that raises the quota.
	next := *col
	next.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: 5}
	if err := s.PutCollection(ctx, &next); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "CreateJob(over the record before a write)", jc.CreateJob(ctx, col, newJob("c", "x", t0)), scheduler.ErrConflict)
	absent("stale record", "x")
	cur, err := s.GetCollection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if err := jc.CreateJob(ctx, cur, newJob("c", "x", t0)); err != nil {
		t.Errorf("CreateJob(c/x over the record read again): %v", err)
	}

	// Deleted and created again: the same version, another ETag.
	if err := s.DeleteCollection(ctx, "c", ""); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "CreateJob(in a deleted collection)", jc.CreateJob(ctx, cur, newJob("c", "y", t0)), scheduler.ErrConflict)
	if _, err := s.GetCollection(ctx, "c"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("GetCollection(c) after CreateJob in the deleted collection: %v, want ErrNotFound", err)
	}
	again2 := &scheduler.CollectionRecord{Name: "c", ETag: "e2", Created: t0, Updated: t0}
	if err := s.PutCollection(ctx, again2); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "CreateJob(over the record of the collection deleted)", jc.CreateJob(ctx, col, newJob("c", "y", t0)), scheduler.ErrConflict)
	absent("collection created again", "y")
}
