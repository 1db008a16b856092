package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/sqlite"
	"github.com/jobclock/scheduler/store/storetest"
)

func open(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	return openOpts(t, path, "NORMAL")
}

func openOpts(t testing.TB, path, synchronous string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path, &sqlite.Options{Synchronous: synchronous})
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) scheduler.Store {
		return open(t, filepath.Join(t.TempDir(), "jobclock.db"))
	})
}

func TestDurable(t *testing.T) {
	storetest.RunDurable(t, func(t *testing.T) func(t *testing.T) scheduler.Store {
		path := filepath.Join(t.TempDir(), "jobclock.db")
		return func(t *testing.T) scheduler.Store { return open(t, path) }
	})
}

func putAndGet(t *testing.T, s scheduler.Store) {
	t.Helper()
	if err := s.PutCollection(context.Background(), &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatalf("PutCollection: %v", err)
	}
	if _, err := s.GetCollection(context.Background(), "c"); err != nil {
		t.Fatalf("GetCollection: %v", err)
	}
}

func TestSchedulers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobclock.db")
	t.Run("one", func(t *testing.T) {
		storetest.RunSchedulers(t, []scheduler.Store{open(t, filepath.Join(t.TempDir(), "one.db"))})
	})
	t.Run("three sharing a file", func(t *testing.T) {
		storetest.RunSchedulers(t, []scheduler.Store{open(t, path), open(t, path), open(t, path)})
	})
}

func TestClaimAhead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobclock.db")
	storetest.RunClaimAhead(t, []scheduler.Store{open(t, path), open(t, path), open(t, path)})
}

func TestOverlap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobclock.db")
	storetest.RunOverlap(t, []scheduler.Store{open(t, path), open(t, path), open(t, path)})
	storetest.RunAllowAllTakeover(t, []scheduler.Store{open(t, path), open(t, path)})
}

func TestRunPolicies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobclock.db")
	storetest.RunRunPolicies(t, []scheduler.Store{open(t, path), open(t, path), open(t, path)})
}

func TestBatchRecorder(t *testing.T) {
	storetest.RunBatchRecorder(t, func(t *testing.T) scheduler.Store {
		return open(t, filepath.Join(t.TempDir(), "jobclock.db"))
	})
}

func TestStats(t *testing.T) {
	storetest.RunStats(t, func(t *testing.T) scheduler.Store {
		return open(t, filepath.Join(t.TempDir(), "jobclock.db"))
	})
}

func TestBulkPutter(t *testing.T) {
	storetest.RunBulkPutter(t, func(t *testing.T) scheduler.Store {
		return open(t, filepath.Join(t.TempDir(), "jobclock.db"))
	})
}

func TestConcurrentPuts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobclock.db")
	storetest.RunConcurrentPuts(t, []scheduler.Store{open(t, path), open(t, path), open(t, path)})
}

func TestCounts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobclock.db")
	storetest.RunCounts(t, []scheduler.Store{open(t, path), open(t, path), open(t, path)})
}

func TestLimiter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobclock.db")
	storetest.RunLimiter(t, []scheduler.Store{open(t, path), open(t, path), open(t, path)})
}

func TestLimits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobclock.db")
	storetest.RunLimits(t, []scheduler.Store{open(t, path), open(t, path), open(t, path)})
}
