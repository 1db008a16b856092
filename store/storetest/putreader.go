package storetest

import (
	"errors"
	"testing"

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
