package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)

// TestRecordAtomic makes the insert of a history entry fail in the middle
// of Record, while other writes commit in the same group, and checks that
// the failed Record changed nothing: not the job, not its lease, not its
// history.
func TestRecordAtomic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s := open(t, path)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TRIGGER fail_history BEFORE INSERT ON history WHEN NEW.status = 'Boom'
		BEGIN SELECT RAISE(ABORT, 'boom'); END`); err != nil {
		t.Fatal(err)
	}
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	const jobs = 20
	for i := range jobs {
		j := &scheduler.JobRecord{Collection: "c", Name: fmt.Sprintf("j%02d", i), Job: &scheduler.Job{}, State: scheduler.JobEnabled,
			Schedule: scheduler.JobSchedule{DueAt: t0}}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), jobs)
	if err != nil || len(claimed) != jobs {
		t.Fatalf("ClaimDue = %d jobs, %v", len(claimed), err)
	}
	var wg sync.WaitGroup
	errs := make([]error, jobs)
	for i, j := range claimed {
		wg.Go(func() {
			j.Status.ExecutionCount = 1
			j.Schedule.DueAt = t0.Add(time.Hour)
			h := []scheduler.HistoryEntry{{Collection: "c", Job: j.Name, Status: scheduler.StatusCompleted, EndTime: t0, Message: "first"}}
			if i%2 == 1 {
				h = append(h, scheduler.HistoryEntry{Collection: "c", Job: j.Name, Status: "Boom", EndTime: t0})
			}
			errs[i] = s.Record(context.Background(), "me", j, h)
		})
	}
	wg.Wait()
	for i, j := range claimed {
		got, err := s.GetJob(ctx, "c", j.Name)
		if err != nil {
			t.Fatal(err)
		}
		hist, _ := s.ListHistory(ctx, "c", j.Name, scheduler.HistoryFilter{})
		if i%2 == 0 {
			if errs[i] != nil || got.Version != j.Version+1 || got.LeaseOwner != "" || got.Status.ExecutionCount != 1 || len(hist) != 1 {
				t.Errorf("%s: Record = %v; version %d owner %q count %d history %d; want success, %d, none, 1, 1",
					j.Name, errs[i], got.Version, got.LeaseOwner, got.Status.ExecutionCount, len(hist), j.Version+1)
			}
			continue
		}
		if errs[i] == nil || got.Version != j.Version || got.LeaseOwner != "me" || got.Status.ExecutionCount != 0 ||
			!got.Schedule.DueAt.Equal(t0) || len(hist) != 0 {
			t.Errorf("%s: Record = %v; version %d owner %q count %d due %v history %d; want an error and nothing changed",
				j.Name, errs[i], got.Version, got.LeaseOwner, got.Status.ExecutionCount, got.Schedule.DueAt, len(hist))
		}
	}
}

// TestCancelledWrite checks that a write whose context ended before it
// started changes nothing.
func TestCancelledWrite(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "db"))
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.PutCollection(cctx, &scheduler.CollectionRecord{Name: "c"}); err == nil {
		t.Fatal("PutCollection with a cancelled context succeeded")
	}
	if list, _ := s.ListCollections(ctx); len(list) != 0 {
		t.Errorf("collections after a cancelled write: %v", list)
	}
}

// TestClosed checks that a closed Store fails cleanly.
func TestClosed(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "db"))
	s.Close()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err == nil {
		t.Error("PutCollection after Close succeeded")
	}
	if _, err := s.GetCollection(ctx, "c"); err == nil {
		t.Error("GetCollection after Close succeeded")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
