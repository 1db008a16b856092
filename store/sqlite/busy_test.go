package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/sqlite"
)

// busyStore opens the file at path with a short busy timeout and puts
// collection "c" in it.
func busyStore(t *testing.T, path string, timeout time.Duration) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path, &sqlite.Options{BusyTimeout: timeout, Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.PutCollection(context.Background(), &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	return s
}

// busyJob is a job record of collection "c" to create.
func busyJob(name string) *scheduler.JobRecord {
	return &scheduler.JobRecord{Collection: "c", Name: name, Job: &scheduler.Job{}, State: scheduler.JobEnabled}
}

// otherWriter is another process's connection to the file at path.
func otherWriter(t *testing.T, path string) *sql.Conn {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.ExecContext(context.Background(), "CREATE TABLE IF NOT EXISTS other (n INTEGER)"); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPutsWaitForBusyWriters: puts do not fail while another process
// writes without pause for longer than the busy timeout, taking the lock
// again as soon as it committed, so that SQLite's busy wait, which looks
// for the lock now and then, finds it taken each time: each of the other
// process's transactions is short, and the puts wait for their turn.
func TestPutsWaitForBusyWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jobclock.db")
	const timeout = 200 * time.Millisecond
	s := busyStore(t, path, timeout)
	other := otherWriter(t, path)

	stop, started := make(chan struct{}), make(chan struct{})
	hammered := make(chan error, 1)
	go func() {
		var once sync.Once
		defer once.Do(func() { close(started) })
		n := 0
		for {
			if n == 10 {
				once.Do(func() { close(started) })
			}
			select {
			case <-stop:
				hammered <- nil
				return
			default:
			}
			for _, q := range []string{"BEGIN IMMEDIATE", fmt.Sprintf("INSERT INTO other VALUES (%d)", n), "COMMIT"} {
				if _, err := other.ExecContext(ctx, q); err != nil {
					hammered <- fmt.Errorf("%s: %w", q, err)
					return
				}
			}
			n++
		}
	}()
	<-started
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = s.PutJob(ctx, busyJob(fmt.Sprintf("j%d", i))) })
	}
	// The other process writes for many busy timeouts; the puts wait.
	time.Sleep(10 * timeout)
	close(stop)
	wg.Wait()
	if err := <-hammered; err != nil {
		t.Fatalf("the other process's writes: %v", err)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("PutJob(j%d) while another process wrote without pause = %v, want nil", i, err)
		}
	}
}

// TestPutFailsPastBusyTimeout: a put fails once another process held
// one transaction for the busy timeout.
func TestPutFailsPastBusyTimeout(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jobclock.db")
	s := busyStore(t, path, 50*time.Millisecond)
	other := otherWriter(t, path)
	if _, err := other.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer other.ExecContext(ctx, "ROLLBACK")
	if _, err := other.ExecContext(ctx, "INSERT INTO other VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	err := s.PutJob(ctx, busyJob("j"))
	if err == nil || !strings.Contains(err.Error(), "locked") {
		t.Errorf("PutJob while another process holds one transaction past the busy timeout = %v, want database is locked", err)
	}
}

// TestPutFailsPastBusyTimeoutWhileOtherSpills: another process holds the
// write lock in one transaction that writes so much that its pages spill
// into the write-ahead log, which grows meanwhile although nobody
// commits: a put fails for the lock as when the transaction wrote
// nothing, instead of waiting for its end.
func TestPutFailsPastBusyTimeoutWhileOtherSpills(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jobclock.db")
	s := busyStore(t, path, 50*time.Millisecond)
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=cache_size(10)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, q := range []string{"CREATE TABLE spill (n INTEGER, b BLOB)", "BEGIN IMMEDIATE"} {
		if _, err := other.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// The other transaction writes until the put returns (or, should the
	// put wait for its end, for 10 s, then commits).
	putDone := make(chan struct{})
	wrote := make(chan error, 1)
	ended := false // the other transaction ended before the put returned
	go func() {
		blob := strings.Repeat("x", 8000)
		end := time.Now().Add(10 * time.Second)
		for n := 0; time.Now().Before(end); n++ {
			select {
			case <-putDone:
				_, err := other.ExecContext(ctx, "ROLLBACK")
				wrote <- err
				return
			default:
			}
			if _, err := other.ExecContext(ctx, "INSERT INTO spill VALUES (?, ?)", n, blob); err != nil {
				wrote <- err
				return
			}
			time.Sleep(time.Millisecond)
		}
		ended = true
		_, err := other.ExecContext(ctx, "COMMIT")
		wrote <- err
	}()
	start := time.Now()
	err = s.PutJob(ctx, busyJob("j"))
	t.Logf("PutJob: %v after %v", err, time.Since(start))
	close(putDone)
	if werr := <-wrote; werr != nil {
		t.Fatal(werr)
	}
	if ended || err == nil || !strings.Contains(err.Error(), "locked") {
		t.Errorf("PutJob while another process holds one transaction that spills into the WAL = %v (returned after that transaction's end: %v), want database is locked before its end", err, ended)
	}
}

// TestPutsWaitForRefusedWriters: puts do not fail while another Store of
// this process on the file takes the write lock without pause for writes
// it refuses (deletes of jobs that do not exist), which roll back and so
// change nothing in the file: each of its transactions is short, and the
// puts wait for their turn, as behind writes that commit.
func TestPutsWaitForRefusedWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jobclock.db")
	const timeout = 20 * time.Millisecond
	s := busyStore(t, path, timeout)
	stop := make(chan struct{})
	var refusing sync.WaitGroup
	for range 3 {
		other, err := sqlite.Open(ctx, path, &sqlite.Options{BusyTimeout: time.Minute, Synchronous: "NORMAL"})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		for range 16 {
			refusing.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if err := other.DeleteJob(ctx, "c", "missing", ""); !errors.Is(err, scheduler.ErrNotFound) {
						t.Errorf("another Store's DeleteJob(missing) = %v, want ErrNotFound", err)
						return
					}
				}
			})
		}
	}
	// The other Stores take the lock for many busy timeouts; the puts and
	// deletes, one after another, wait.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			name := fmt.Sprintf("j%d", i)
			for k := 0; k < 25 && errs[i] == nil; k++ {
				if errs[i] = s.PutJob(ctx, busyJob(name)); errs[i] == nil {
					errs[i] = s.DeleteJob(ctx, "c", name, "")
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	refusing.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("PutJob or DeleteJob(j%d) while other Stores took the lock without pause for refused writes = %v, want nil", i, err)
		}
	}
}
