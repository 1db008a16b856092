package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	msqlite "modernc.org/sqlite"

	scheduler "github.com/jobclock/scheduler"
)

// TestCreateIntoFullReadsFew: a create into a collection of 20,000 jobs at
// its quota, in a host's transaction, is refused after reading a few
// hundred pages (the places near its next one, and the collection's job
// count), not after looking at each of its places (a few pages each,
// 40,000 together). The pages are those the connection's page
// cache counts, read or found. A bulk put past the quota is refused with
// the number of jobs the collection holds, as when it looked at every
// place.
func TestCreateIntoFullReadsFew(t *testing.T) {
	ctx := context.Background()
	db := hostDB(t, filepath.Join(t.TempDir(), "app.db"))
	st := hostStore(t, db)
	const limit = 20_000
	c := &scheduler.CollectionRecord{Name: "c"}
	c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: limit}
	if err := st.PutCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	job := func(name string) *scheduler.JobRecord {
		return &scheduler.JobRecord{Collection: "c", Name: name, Job: &scheduler.Job{}, State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}
	}
	batch := func(from, to int) []*scheduler.JobRecord {
		var out []*scheduler.JobRecord
		for k := from; k < to; k++ {
			out = append(out, job(fmt.Sprintf("j%05d", k)))
		}
		return out
	}
	for i := 0; i < limit-2; i += 1000 {
		if err := st.PutJobs(ctx, "c", batch(i, min(i+1000, limit-2))); err != nil {
			t.Fatal(err)
		}
	}
	// A bulk put past the quota says how many jobs the collection holds.
	err := st.PutJobs(ctx, "c", batch(limit, limit+5))
	if qe := (*scheduler.QuotaError)(nil); !errors.As(err, &qe) || qe.Reason != fmt.Sprintf("the collection already holds %d jobs, and the batch creates 5", limit-2) {
		t.Errorf("PutJobs(5 creates into a collection with room for 2): %v, want a quota error: the collection holds %d jobs", err, limit-2)
	}
	if err := st.PutJobs(ctx, "c", batch(limit-2, limit)); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// pages returns the pages the connection read or found in its cache
	// since the last call.
	pages := func() int {
		t.Helper()
		n := 0
		err := conn.Raw(func(dc any) error {
			for _, op := range []msqlite.DBStatusOp{msqlite.DBStatusCacheHit, msqlite.DBStatusCacheMiss} {
				cur, _, err := dc.(msqlite.DBStatus).Status(op, true)
				if err != nil {
					return err
				}
				n += cur
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	v, err := st.InTx(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	pages()
	err = v.PutJob(ctx, job("one-more"))
	read := pages()
	if qe := (*scheduler.QuotaError)(nil); !errors.As(err, &qe) || qe.Limit != fmt.Sprint(limit) {
		t.Fatalf("PutJob into a full collection: %v, want a quota error of %d jobs", err, limit)
	}
	if read > 400 {
		t.Errorf("PutJob into a full collection of %d jobs read %d pages, want at most 400", limit, read)
	}
}
