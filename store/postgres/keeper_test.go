package postgres_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestKeeperLockedRowHoldsUpOnlyItsLease: while a host's transaction holds
// the row of one running job (a PutJobTx of it) for longer than a lease,
// the lease keeper, extending the leases of all ten running attempts with
// ExtendLeases, still extends the other nine: a second instance runs none
// of them again.
func TestKeeperLockedRowHoldsUpOnlyItsLease(t *testing.T) {
	const lease = 3 * time.Second
	ctx := context.Background()
	schema := newSchema(t)
	st := open(t, schema)
	pool, err := pgxpool.New(ctx, dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var mu sync.Mutex
	starts := map[string]int{}
	reg := &action.Registry{}
	reg.Register("Slow", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		mu.Lock()
		starts[req.JobID()]++
		mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(4 * lease):
		}
		return nil, nil
	}))
	var ss []*scheduler.Scheduler
	for _, id := range []string{"a", "b"} {
		s, err := scheduler.New(st, &scheduler.Config{InstanceID: id, Executors: reg, LeaseDuration: lease,
			ClaimAhead: scheduler.NoClaimAhead, ActionTimeout: time.Minute, PollInterval: 200 * time.Millisecond,
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}
	defer func() {
		stop, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		for _, s := range ss {
			s.Stop(stop)
		}
	}()
	if _, err := ss[0].PutCollection(ctx, "c", &scheduler.JobCollection{}, nil); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(time.Second)
	for i := range 10 {
		name := fmt.Sprintf("j%d", i)
		if i == 0 {
			name = "locked"
		}
		def := &scheduler.Job{StartTime: &at, Action: action.Action{Type: "Slow", Custom: []byte(`{}`)}}
		if _, err := ss[0].PutJob(ctx, "c", name, def, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := ss[0].Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "ten attempts started", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(starts) == 10
	})
	if err := ss[1].Start(ctx); err != nil {
		t.Fatal(err)
	}
	tx := hostTx(t, pool, schema, "locked")
	time.Sleep(2 * lease)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(lease)
	mu.Lock()
	defer mu.Unlock()
	for job, n := range starts {
		if n > 1 && job != "c/locked" {
			t.Errorf("job %s ran %d times, want once: its lease lapsed while another job's row was locked", job, n)
		}
	}
}
