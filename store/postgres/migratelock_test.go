package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jobclock/scheduler/store/postgres"
)

// TestMigrateBehindLongTransaction: an upgrade (migration 15 again, which
// drops and creates a trigger on the job table) that finds a long
// transaction reading the job table does not hold up the claims of a
// process already running until that transaction ends: its wait for the
// table's lock times out, it gives up its place in the lock queue and
// tries again, and it upgrades once the transaction has ended.
func TestMigrateBehindLongTransaction(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	c := connect(t)
	q := pgx.Identifier{schema}.Sanitize()
	putDueJob(t, s)
	if _, err := c.Exec(ctx, "UPDATE "+q+".schema_version SET version = 14"); err != nil {
		t.Fatal(err)
	}

	long, err := connect(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer long.Rollback(ctx)
	if _, err := long.Exec(ctx, "SELECT count(*) FROM "+q+".jobs"); err != nil {
		t.Fatal(err)
	}
	opened := make(chan error, 1)
	d := dsn(t)
	go func() {
		s2, err := postgres.Open(ctx, d, &postgres.Options{Schema: schema})
		if err == nil {
			s2.Close()
		}
		opened <- err
	}()
	// Wait until the upgrade waits for the job table's lock.
	for waiting := 0; waiting == 0; {
		err := c.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE relation = $1::regclass AND mode = 'AccessExclusiveLock' AND NOT granted",
			q+".jobs").Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-opened:
			t.Fatalf("Open returned %v while a transaction read the job table, want it to wait", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	// The claim may queue behind one wait of the upgrade, which times
	// out; without the time-out it would queue until the transaction
	// ends, here until the deadline (many times the upgrade's wait).
	claimCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	claimed, err := s.ClaimDue(claimCtx, t0, "me", t0.Add(time.Minute), 10)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimDue while the upgrade waits behind a transaction = %d jobs, %v; want c/j", len(claimed), err)
	}
	select {
	case err := <-opened:
		t.Fatalf("Open returned %v while a transaction read the job table, want it to wait", err)
	default:
	}

	if err := long.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("Open after the transaction ended: %v", err)
	}
	var version, triggers int
	if err := c.QueryRow(ctx, "SELECT version FROM "+q+".schema_version").Scan(&version); err != nil || version != postgres.SchemaVersion {
		t.Errorf("schema version after the upgrade = %d, %v; want %d", version, err, postgres.SchemaVersion)
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_trigger WHERE tgname = 'jobs_count_moved' AND tgrelid = $1::regclass", q+".jobs").Scan(&triggers); err != nil || triggers != 1 {
		t.Errorf("after the upgrade: %d triggers jobs_count_moved, %v; want 1", triggers, err)
	}
}
