package scheduler_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/retry"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/store/sqlite"
)

// TestStopDeadlineRecordsCancelled checks that a Stop whose context ends
// while an attempt runs returns only once the cancelled attempt's outcome
// is stored, so that the host may close its store as soon as Stop
// returns, as jobclock serve does: the attempt leaves its Failed entry
// ("cancelled: the scheduler stopped") and its retry, instead of running
// again as a fresh attempt on the instance that takes the job over.
func TestStopDeadlineRecordsCancelled(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "jobs.db")
	st, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// An executor that takes a while to give up.
	s := startBlocked(t, st, 50*time.Millisecond, scheduler.Config{})
	sctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := s.Stop(sctx); err == nil {
		t.Errorf("Stop = nil, want the context's error")
	}
	st.Close() // as a host does once Stop returned

	st, err = sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s2, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.DiscardHandler), InstanceID: "b"})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := s2.ListHistory(ctx, "c", "slow", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 1 || hist[0].Status != scheduler.StatusFailed || !strings.Contains(hist[0].Message, "cancelled: the scheduler stopped") {
		t.Fatalf("history = %+v, want one Failed entry of the cancelled attempt", hist)
	}
	job, err := s2.GetJob(ctx, "c", "slow")
	if err != nil {
		t.Fatal(err)
	}
	if job.LeaseOwner != "" {
		t.Errorf("LeaseOwner = %q after Stop, want none", job.LeaseOwner)
	}
}

// failFirstRecord is a store whose first Record fails as the store's
// failure (a connection reset), and whose others record.
type failFirstRecord struct {
	scheduler.Store
	n atomic.Int32
}

func (f *failFirstRecord) Record(ctx context.Context, owner string, j *scheduler.JobRecord, h []scheduler.HistoryEntry) error {
	if f.n.Add(1) == 1 {
		return errors.New("connection reset by peer")
	}
	return f.Store.Record(ctx, owner, j, h)
}

// TestStopDeadlineRecordsAfterStoreFailure: once Stop's context ended, a
// cancelled attempt whose first write of its outcome fails for the store
// writes it again within the LeaseDuration Stop waits, rather than giving
// up at once, losing the entry and leaving the occurrence to run again.
func TestStopDeadlineRecordsAfterStoreFailure(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	st := &failFirstRecord{Store: mem}
	s := startBlocked(t, st, 0, scheduler.Config{LeaseDuration: 5 * time.Second})
	sctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	s.Stop(sctx)
	hist, err := mem.ListHistory(ctx, "c", "slow", scheduler.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 1 || hist[0].Status != scheduler.StatusFailed || !strings.Contains(hist[0].Message, "cancelled") || st.n.Load() < 2 {
		t.Errorf("history %+v after %d writes; want the cancelled attempt's Failed entry, written again after the store failed", hist, st.n.Load())
	}
}

// startBlocked starts a Scheduler (instance "a", with cfg's other
// settings) over st with a job c/slow (two retries a minute apart) whose
// action runs until its context ends, then giveUp longer; it returns once
// the attempt has started.
func startBlocked(t *testing.T, st scheduler.Store, giveUp time.Duration, cfg scheduler.Config) *scheduler.Scheduler {
	t.Helper()
	ctx := context.Background()
	started := make(chan struct{}, 1)
	reg := &action.Registry{}
	reg.Register("Block", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		started <- struct{}{}
		<-ctx.Done()
		time.Sleep(giveUp)
		return nil, ctx.Err()
	}))
	cfg.Executors, cfg.Logger, cfg.InstanceID = reg, slog.New(slog.DiscardHandler), "a"
	s, err := scheduler.New(st, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	retries := &retry.Policy{Type: retry.Fixed, Interval: retry.Duration(time.Minute), Count: new(2)}
	if _, err := s.PutJob(ctx, "c", "slow", &scheduler.Job{Action: action.Action{Type: "Block", RetryPolicy: retries}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-started
	return s
}
