package storetest

import (
	"errors"
	"fmt"
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

// deleteRacers and deleteRounds are how many writers
// testConditionalDeleteRace races over one job, and how many times.
const (
	deleteRacers = 8
	deleteRounds = 12
)

// testConditionalDeleteRace races puts and deletes of one job: each
// writer reads the job and then either replaces it (a put over the
// Version read, with an ETag of its own) or deletes it naming the ETag
// read, until it finds the job gone. No delete may delete a version of
// the job other than the one it named: every version put (the first
// included) ends exactly once, replaced by a put over it or deleted by a
// delete that named its ETag. A delete that names a replaced version
// fails with ErrPreconditionFailed, or ErrNotFound once the job is gone.
// Each round creates the job anew once the last one is gone.
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
		var mu sync.Mutex
		put := map[string]bool{first.ETag: true}
		ended := map[string]int{} // by a replacement or a delete
		deletes, refused := 0, 0
		end := func(e string) {
			mu.Lock()
			defer mu.Unlock()
			ended[e]++
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range deleteRacers {
			wg.Go(func() {
				<-start
				for i := 0; ; i++ {
					cur, err := s.GetJob(ctx, "c", "j")
					if errors.Is(err, scheduler.ErrNotFound) {
						return
					}
					if err != nil {
						t.Errorf("round %d, writer %d: GetJob: %v", round, w, err)
						return
					}
					runtime.Gosched() // let the others write between the read and the write
					mu.Lock()
					many := len(put) >= 2*deleteRacers // deletes wait for a few versions
					mu.Unlock()
					if many && (w+i)%3 == 0 {
						err := s.DeleteJob(ctx, "c", "j", cur.ETag)
						switch {
						case err == nil:
							end(cur.ETag)
							mu.Lock()
							deletes++
							mu.Unlock()
						case errors.Is(err, scheduler.ErrPreconditionFailed):
							mu.Lock()
							refused++
							mu.Unlock()
						case !errors.Is(err, scheduler.ErrNotFound):
							t.Errorf("round %d, writer %d: DeleteJob(%q): %v, want nil or ErrPreconditionFailed or ErrNotFound", round, w, cur.ETag, err)
							return
						}
						continue
					}
					r := cur.Clone()
					r.ETag = etag()
					mu.Lock()
					put[r.ETag] = false // not yet stored
					mu.Unlock()
					err = s.PutJob(ctx, r)
					switch {
					case err == nil:
						end(cur.ETag) // the put replaced the version read: the stored Version was the one read
						mu.Lock()
						put[r.ETag] = true
						mu.Unlock()
					case errors.Is(err, scheduler.ErrConflict), errors.Is(err, scheduler.ErrNotFound):
						mu.Lock()
						delete(put, r.ETag)
						mu.Unlock()
					default:
						t.Errorf("round %d, writer %d: PutJob: %v", round, w, err)
						return
					}
				}
			})
		}
		close(start)
		wg.Wait()
		if t.Failed() {
			return
		}
		if deletes != 1 {
			t.Errorf("round %d: %d deletes succeeded, want 1: the job was deleted once", round, deletes)
		}
		for e, stored := range put {
			if !stored {
				t.Errorf("round %d: the put of %q neither succeeded nor failed", round, e)
			}
			if n := ended[e]; n != 1 {
				t.Errorf("round %d: the version with ETag %q was replaced or deleted %d times, want exactly once (a delete removed a version it did not name)", round, e, n)
			}
		}
		for e := range ended {
			if !put[e] {
				t.Errorf("round %d: ETag %q was replaced or deleted but never put", round, e)
			}
		}
		t.Logf("round %d: %d versions, %d deletes refused", round, len(put), refused)
	}
}
