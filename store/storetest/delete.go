package storetest

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// testConditionalDelete checks deletes that name an ETag: a job or
// collection whose stored ETag differs stays, whole, and the delete fails
// with ErrPreconditionFailed; one whose ETag is the one named is deleted
// with what it holds, whatever its Version (a claim changes the Version,
// not the ETag); one that does not exist fails with ErrNotFound, whatever
// the ETag. ETags both as the Scheduler writes them (16 hex digits) and
// of any other form are compared exactly.
func testConditionalDelete(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 0)
	wantErr(t, "DeleteJob(missing, etag)", s.DeleteJob(ctx, "c", "j", "j1"), scheduler.ErrNotFound)
	wantErr(t, "DeleteJob(missing collection, etag)", s.DeleteJob(ctx, "none", "j", "j1"), scheduler.ErrNotFound)
	for _, etag := range []string{"j1", "0123456789abcdef"} {
		j := newJob("c", "j", t0)
		j.ETag = etag
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatalf("PutJob: %v", err)
		}
		recordHistory(t, s, "c", "j", []scheduler.HistoryEntry{entry(1, scheduler.StatusCompleted, t0)})
		before, err := s.GetJob(ctx, "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range []string{"j2", "0123456789abcdee", "0123456789ABCDEF", etag + " "} {
			err := s.DeleteJob(ctx, "c", "j", other)
			wantErr(t, fmt.Sprintf("DeleteJob(ETag %q, named %q)", etag, other), err, scheduler.ErrPreconditionFailed)
			if errors.Is(err, scheduler.ErrNotFound) {
				t.Errorf("DeleteJob(ETag %q, named %q) = %v, which matches ErrNotFound too", etag, other, err)
			}
		}
		after, err := s.GetJob(ctx, "c", "j")
		if err != nil {
			t.Fatalf("GetJob after the refused deletes: %v", err)
		}
		if after.Version != before.Version || after.ETag != etag {
			t.Errorf("after the refused deletes: version %d, ETag %q; want %d, %q as before", after.Version, after.ETag, before.Version, etag)
		}
		if h, err := s.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{}); err != nil || len(h) != 1 {
			t.Errorf("ListHistory after the refused deletes = %d entries, %v; want the 1 recorded", len(h), err)
		}
		// A claim changes the Version, not the ETag: the delete still
		// holds.
		if got, err := s.ClaimDue(ctx, t0.Add(time.Hour), "me", t0.Add(2*time.Hour), 10); err != nil || len(got) != 1 {
			t.Fatalf("ClaimDue = %v, %v; want the job", names(got), err)
		}
		if err := s.DeleteJob(ctx, "c", "j", etag); err != nil {
			t.Fatalf("DeleteJob(ETag %q, named so): %v", etag, err)
		}
		_, err = s.GetJob(ctx, "c", "j")
		wantErr(t, "GetJob(deleted with its ETag)", err, scheduler.ErrNotFound)
		_, err = s.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{})
		wantErr(t, "ListHistory(deleted with its ETag)", err, scheduler.ErrNotFound)
		wantErr(t, "DeleteJob(deleted, etag)", s.DeleteJob(ctx, "c", "j", etag), scheduler.ErrNotFound)
	}

	wantErr(t, "DeleteCollection(missing, etag)", s.DeleteCollection(ctx, "none", "e1"), scheduler.ErrNotFound)
	putJob(t, s, "c", "j", t0)
	for _, other := range []string{"e2", "E1", "0123456789abcdef"} {
		err := s.DeleteCollection(ctx, "c", other)
		wantErr(t, fmt.Sprintf("DeleteCollection(ETag e1, named %q)", other), err, scheduler.ErrPreconditionFailed)
		if errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("DeleteCollection(ETag e1, named %q) = %v, which matches ErrNotFound too", other, err)
		}
	}
	if c, err := s.GetCollection(ctx, "c"); err != nil || c.ETag != "e1" || c.Version != 1 {
		t.Errorf("GetCollection after the refused deletes = %+v, %v; want ETag e1 at version 1", c, err)
	}
	if _, err := s.GetJob(ctx, "c", "j"); err != nil {
		t.Errorf("GetJob after the refused deletes of its collection: %v", err)
	}
	if err := s.DeleteCollection(ctx, "c", "e1"); err != nil {
		t.Fatalf("DeleteCollection(ETag e1, named so): %v", err)
	}
	_, err := s.GetCollection(ctx, "c")
	wantErr(t, "GetCollection(deleted with its ETag)", err, scheduler.ErrNotFound)
	_, err = s.GetJob(ctx, "c", "j")
	wantErr(t, "GetJob(in a collection deleted with its ETag)", err, scheduler.ErrNotFound)
	wantErr(t, "DeleteCollection(deleted, etag)", s.DeleteCollection(ctx, "c", "e1"), scheduler.ErrNotFound)
}

// deleteRacers and deleteRounds are how many writers versionRace races
// over one job, and how many times.
const (
	deleteRacers = 8
	deleteRounds = 12
)

// testConditionalDeleteRace races puts and deletes of one job in the
// store (see versionRace): a put replaces the job over the Version it
// read, with an ETag of its own; a delete names the ETag it read. Each
// round creates the job anew once the last one is gone.
func testConditionalDeleteRace(t *testing.T, s scheduler.Store) {
	putCollection(t, s, "c", 0)
	var next atomic.Uint64
	etag := func() string { return fmt.Sprintf("%016x", next.Add(1)) } // as the Scheduler writes them
	for round := range deleteRounds {
		first := newJob("c", "j", time.Time{})
		first.ETag = etag()
		if err := s.PutJob(ctx, first); err != nil {
			t.Fatalf("round %d: PutJob(create): %v", round, err)
		}
		versionRace(t, round, first.ETag,
			func() (*scheduler.JobRecord, error) { return s.GetJob(ctx, "c", "j") },
			func(cur *scheduler.JobRecord) (string, error) {
				r := cur.Clone()
				r.ETag = etag()
				return r.ETag, s.PutJob(ctx, r) // replaces the version read: the stored Version is the one read
			},
			func(cur *scheduler.JobRecord) error { return s.DeleteJob(ctx, "c", "j", cur.ETag) })
	}
}

// testSchedulerConditionalDeleteRace races puts and deletes of one job
// through a Scheduler over the store (see versionRace): a put changes
// the job's tags with IfMatch the ETag it read, a delete is DeleteJob
// with IfMatch the ETag it read. Each round creates the job anew once
// the last one is gone.
func testSchedulerConditionalDeleteRace(t *testing.T, st scheduler.Store) {
	s, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	var next atomic.Uint64
	for round := range deleteRounds {
		first, err := s.PutJob(ctx, "c", "j", def(), &scheduler.PutJobOptions{IfNoneMatch: "*"})
		if err != nil {
			t.Fatalf("round %d: PutJob(create): %v", round, err)
		}
		versionRace(t, round, first.ETag,
			func() (*scheduler.JobRecord, error) { return s.GetJob(ctx, "c", "j") },
			func(cur *scheduler.JobRecord) (string, error) {
				tags := map[string]string{"n": fmt.Sprint(next.Add(1))} // a change: a new ETag
				r, err := s.PutJob(ctx, "c", "j", def(), &scheduler.PutJobOptions{IfMatch: cur.ETag, Tags: tags})
				if err != nil {
					return "", err
				}
				return r.ETag, nil
			},
			func(cur *scheduler.JobRecord) error {
				return s.DeleteJob(ctx, "c", "j", &scheduler.DeleteJobOptions{IfMatch: cur.ETag})
			})
	}
}

// versionRace races deleteRacers writers over one job, created with the
// ETag first, until it is gone: each reads the job (read) and then either
// replaces the version it read by a new one (put, which returns the new
// version's ETag) or deletes the job naming the version it read (del),
// and starts again, until it finds the job gone. No delete may delete a
// version other than the one it named: every version put (the first
// included) ends exactly once, replaced by a put over it or deleted by a
// delete that named it, and exactly one delete succeeds. A put or a
// delete that finds another version stored fails with an error matching
// ErrConflict (ErrPreconditionFailed does) or, once the job is gone,
// ErrNotFound.
func versionRace(t *testing.T, round int, first string, read func() (*scheduler.JobRecord, error),
	put func(cur *scheduler.JobRecord) (string, error), del func(cur *scheduler.JobRecord) error) {
	t.Helper()
	var mu sync.Mutex
	stored := map[string]bool{first: true} // the ETags of the versions put
	ended := map[string]int{}              // how many times each was replaced or deleted
	deletes, refused := 0, 0
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range deleteRacers {
		wg.Go(func() {
			<-start
			for i := 0; ; i++ {
				cur, err := read()
				if errors.Is(err, scheduler.ErrNotFound) {
					return
				}
				if err != nil {
					t.Errorf("round %d, writer %d: read: %v", round, w, err)
					return
				}
				runtime.Gosched() // let the others write between the read and the write
				mu.Lock()
				many := len(stored) >= 2*deleteRacers // deletes wait for a few versions
				mu.Unlock()
				if many && (w+i)%3 == 0 {
					err := del(cur)
					mu.Lock()
					switch {
					case err == nil:
						ended[cur.ETag]++
						deletes++
					case errors.Is(err, scheduler.ErrConflict):
						refused++
					case !errors.Is(err, scheduler.ErrNotFound):
						t.Errorf("round %d, writer %d: delete of %q: %v, want nil or an error matching ErrConflict or ErrNotFound", round, w, cur.ETag, err)
					}
					mu.Unlock()
					continue
				}
				etag, err := put(cur)
				mu.Lock()
				switch {
				case err == nil:
					ended[cur.ETag]++
					stored[etag] = true
				case !errors.Is(err, scheduler.ErrConflict) && !errors.Is(err, scheduler.ErrNotFound):
					t.Errorf("round %d, writer %d: put over %q: %v, want nil or an error matching ErrConflict or ErrNotFound", round, w, cur.ETag, err)
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if deletes != 1 {
		t.Errorf("round %d: %d deletes succeeded, want 1: the job was deleted once", round, deletes)
	}
	for e := range stored {
		if n := ended[e]; n != 1 {
			t.Errorf("round %d: the version with ETag %q was replaced or deleted %d times, want exactly once (a delete removed a version it did not name)", round, e, n)
		}
	}
	for e := range ended {
		if !stored[e] {
			t.Errorf("round %d: ETag %q was replaced or deleted but never put", round, e)
		}
	}
	t.Logf("round %d: %d versions, %d deletes refused", round, len(stored), refused)
}
