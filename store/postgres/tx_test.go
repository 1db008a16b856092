package postgres_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/postgres"
	"github.com/jobclock/scheduler/store/storetest"
)

// hostPool is the host's own connection pool.
func hostPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// inHostTx runs f with s's view of a transaction of pool's, then commits
// the transaction, or rolls it back.
func inHostTx(t testing.TB, pool *pgxpool.Pool, s *postgres.Store, commit bool, f func(v scheduler.TxStore)) {
	t.Helper()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.InTx(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	f(v)
	if commit {
		err = tx.Commit(ctx)
	} else {
		err = tx.Rollback(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func txBackend(t testing.TB) *storetest.TxBackend {
	pool := hostPool(t)
	st, err := postgres.New(context.Background(), pool, &postgres.Options{Schema: newSchema(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &storetest.TxBackend{Store: st, Begin: func(ctx context.Context) (*storetest.HostTx, error) {
		tx, err := pool.Begin(ctx)
		if err != nil {
			return nil, err
		}
		return &storetest.HostTx{Tx: tx, Commit: tx.Commit, Rollback: tx.Rollback}, nil
	}}
}

func TestTransactions(t *testing.T) {
	storetest.RunTx(t, txBackend)
}

// TestTransactionWakesOtherInstances: a job committed in a host's
// transaction through one instance is run at once by another instance on
// the same schema, which would otherwise poll only every hour.
func TestTransactionWakesOtherInstances(t *testing.T) {
	ctx := context.Background()
	schema := newSchema(t)
	pool := hostPool(t)
	writer, err := postgres.New(ctx, pool, &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	runner := open(t, schema)

	ran := make(chan string, 1)
	reg := new(action.Registry)
	reg.Register("Tx", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		ran <- req.JobID()
		return nil, nil
	}))
	quiet := slog.New(slog.DiscardHandler)
	w, err := scheduler.New(writer, &scheduler.Config{Executors: reg, Logger: quiet, InstanceID: "writer"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := scheduler.New(runner, &scheduler.Config{Executors: reg, Logger: quiet, InstanceID: "runner", PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer r.Stop(ctx)
	time.Sleep(100 * time.Millisecond) // the runner listens and sleeps

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := w.PutJobTx(ctx, tx, "c", "j", &scheduler.Job{Action: action.Action{Type: "Tx"}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatalf("the host's transaction after PutJobTx: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-ran:
		if id != "c/j" {
			t.Errorf("ran %s", id)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the other instance did not run the job committed in the host's transaction")
	}
}

// TestRepeatableReadTxAfterConcurrentCreate pins what InTx documents for a
// host's transaction at REPEATABLE READ: creating a job after another
// create in the same collection committed since the transaction's
// snapshot succeeds (creates share no row), but taking the place that
// such a create took, the last below the quota, fails with a
// serialization failure (SQLSTATE 40001); the retried transaction finds
// the collection full.
func TestRepeatableReadTxAfterConcurrentCreate(t *testing.T) {
	ctx := context.Background()
	pool := hostPool(t)
	st, err := postgres.New(ctx, pool, &postgres.Options{Schema: newSchema(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	reg := new(action.Registry)
	reg.Register("Tx", action.ExecutorFunc(func(context.Context, *action.Request) (*action.Result, error) { return nil, nil }))
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	def := &scheduler.Job{StartTime: &later, Action: action.Action{Type: "Tx"}}
	createAfterOther := func(iso pgx.TxIsoLevel, other, mine string) error {
		tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: iso})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, "SELECT 1"); err != nil { // takes the snapshot
			t.Fatal(err)
		}
		if _, err := s.PutJob(ctx, "c", other, def, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutJobTx(ctx, tx, "c", mine, def, nil); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}

	if err := createAfterOther(pgx.RepeatableRead, "a1", "mine"); err != nil {
		t.Fatalf("REPEATABLE READ create after a concurrent create = %v, want success", err)
	}
	// a1 and mine hold 2 places of 3: the other create takes the last.
	quota := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 3}}}
	if _, err := s.PutCollection(ctx, "c", quota, nil); err != nil {
		t.Fatal(err)
	}
	err = createAfterOther(pgx.RepeatableRead, "a2", "late")
	if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "40001" {
		t.Fatalf("REPEATABLE READ create into the place a concurrent create took = %v, want SQLSTATE 40001", err)
	}
	// The retry (here at READ COMMITTED) finds the collection full.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := s.PutJobTx(ctx, tx, "c", "late", def, nil); !errors.Is(err, scheduler.ErrQuotaExceeded) {
		t.Errorf("the retried create in a full collection = %v, want ErrQuotaExceeded", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteJob(ctx, "c", "a1", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "c", "fourth", def, nil); err != nil {
		t.Errorf("a third job after a delete = %v", err)
	}
}
