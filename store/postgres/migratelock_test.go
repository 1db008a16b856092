package postgres_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/store/postgres"
)

// TestMigrateBehindLongTransaction: an upgrade (migration 15 again, which
// drops and creates a trigger on the job table) that finds a long
// transaction reading the job table does not hold up the claims of a
// process already running until that transaction ends: its wait for the
// table's lock times out, it gives up its place in the lock queue and
// tries again, and it upgrades once the transaction has ended.
func TestMigrateBehindLongTransaction(t *testing.T) {
	schema, s, c := schemaToUpgrade(t)
	q := pgx.Identifier{schema}.Sanitize()

	long, err := connect(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer long.Rollback(ctx)
	if _, err := long.Exec(ctx, "SELECT count(*) FROM "+q+".jobs"); err != nil {
		t.Fatal(err)
	}
	opened := openAside(t, &postgres.Options{Schema: schema})
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

// TestOwnTablesAreTheMigrations: the tables an upgrade locks are those the
// migrations create, so that a new migration's table is locked too.
func TestOwnTablesAreTheMigrations(t *testing.T) {
	schema := newSchema(t)
	open(t, schema)
	rows, err := connect(t).Query(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = $1", schema)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(postgres.OwnTables, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("tables an upgrade locks differ from the tables of a new schema (-locked +created):\n%s", diff)
	}
}

// upgradeAgain makes schema's version 14, so that the next Open upgrades
// it again (migration 15 drops and creates a trigger on the job table).
func upgradeAgain(t *testing.T, c *pgx.Conn, schema string) {
	t.Helper()
	if _, err := c.Exec(ctx, "UPDATE "+pgx.Identifier{schema}.Sanitize()+".schema_version SET version = 14"); err != nil {
		t.Fatal(err)
	}
}

// schemaToUpgrade returns a new schema, a store over it holding a due
// job and a connection, the schema made to be upgraded again at the next
// Open (see upgradeAgain).
func schemaToUpgrade(t *testing.T) (string, *postgres.Store, *pgx.Conn) {
	t.Helper()
	schema := newSchema(t)
	s := open(t, schema)
	c := connect(t)
	putDueJob(t, s)
	upgradeAgain(t, c, schema)
	return schema, s, c
}

// TestUpgradeLeavesOtherApplicationsTables: an upgrade does not lock the
// table of another application that shares the schema, which a role of
// jobclock's may have no right to lock, and whose long transaction must
// not keep jobclock from upgrading.
func TestUpgradeLeavesOtherApplicationsTables(t *testing.T) {
	schema := newSchema(t)
	open(t, schema)
	c := connect(t)
	other := pgx.Identifier{schema, "other_app"}.Sanitize()
	if _, err := c.Exec(ctx, "CREATE TABLE "+other+" (x int)"); err != nil {
		t.Fatal(err)
	}
	upgradeAgain(t, c, schema)
	long, err := connect(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer long.Rollback(ctx)
	if _, err := long.Exec(ctx, "SELECT count(*) FROM "+other); err != nil {
		t.Fatal(err)
	}
	openCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := postgres.Open(openCtx, dsn(t), &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatalf("Open while another application's transaction reads its table in the schema: %v", err)
	}
	s.Close()
	var version int
	if err := c.QueryRow(ctx, "SELECT version FROM "+pgx.Identifier{schema}.Sanitize()+".schema_version").Scan(&version); err != nil || version != postgres.SchemaVersion {
		t.Errorf("schema version after Open = %d, %v; want %d", version, err, postgres.SchemaVersion)
	}
}

// TestUpgradeLockWaitBounded: an upgrade's wait for the locks of its
// tables is bounded as a whole by the statement_timeout it sets on its
// LOCK TABLE (half a second), not each table's wait alone. Behind a
// transaction on the job table and one on job_counts (which the upgrade
// locks after the job table), the upgrade queues for the job table's lock;
// the first transaction ends about 300 ms later, the second about 300 ms
// after that: no wait for one table lasts half a second, both together
// do, so the upgrade gives up once (errLocksBusy, logged as a warning) and
// upgrades at a later try. A bound on each table's wait (lock_timeout)
// would not give up. A loaded machine can only make the waits longer,
// which makes the upgrade give up all the more: the test reads no clock.
func TestUpgradeLockWaitBounded(t *testing.T) {
	schema, _, c := schemaToUpgrade(t)
	q := pgx.Identifier{schema}.Sanitize()
	var txs []pgx.Tx
	for _, table := range []string{"jobs", "job_counts"} {
		tx, err := connect(t).Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := tx.Exec(ctx, "SELECT count(*) FROM "+q+"."+table); err != nil {
			t.Fatal(err)
		}
		txs = append(txs, tx)
	}
	deadline, cancel := context.WithCancel(ctx)
	if d, ok := t.Deadline(); ok {
		deadline, cancel = context.WithDeadline(ctx, d.Add(-5*time.Second))
	}
	defer cancel()
	// waitLock waits until the server shows a lock of mode on table that
	// is not granted.
	waitLock := func(table, mode string) {
		t.Helper()
		for waiting := 0; waiting == 0; {
			if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE relation = $1::regclass AND mode = $2 AND NOT granted",
				q+"."+table, mode).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
			select {
			case <-deadline.Done():
				t.Fatalf("no transaction waits for a %s on %s", mode, table)
			case <-time.After(2 * time.Millisecond):
			}
		}
	}
	var log syncbuf.Buffer
	opened := openAside(t, &postgres.Options{Schema: schema, Logger: slog.New(slog.NewJSONHandler(&log, nil))})
	waitLock("jobs", "AccessExclusiveLock")
	time.Sleep(300 * time.Millisecond)
	if err := txs[0].Commit(ctx); err != nil { // jobs
		t.Fatal(err)
	}
	waitLock("job_counts", "AccessExclusiveLock")
	time.Sleep(300 * time.Millisecond)
	if err := txs[1].Commit(ctx); err != nil { // job_counts
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("Open after the transactions ended: %v", err)
	}
	// Open returned: the upgrade's log is all written.
	const waiting = "upgrade the schema: other transactions hold the locks of its tables; it lets them go on and tries again"
	if tries := logged(t, &log, waiting); len(tries) == 0 {
		t.Errorf("the upgrade waited about 300 ms for each of two tables without giving up at its bound of half a second for the two (log:\n%s)", log.String())
	}
}

// openAside opens a store with opts and closes it in a goroutine of its
// own; the channel returned receives Open's error.
func openAside(t *testing.T, opts *postgres.Options) <-chan error {
	opened := make(chan error, 1)
	d := dsn(t)
	go func() {
		s, err := postgres.Open(ctx, d, opts)
		if err == nil {
			s.Close()
		}
		opened <- err
	}()
	return opened
}

// TestUpgradeWaitLogged: an upgrade that gives up waiting for its tables'
// locks behind a long transaction logs each try as a warning, with how
// long it has waited so far and when it tries again, and logs the upgrade
// done at a later try as info.
func TestUpgradeWaitLogged(t *testing.T) {
	schema, _, _ := schemaToUpgrade(t)
	long, err := connect(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer long.Rollback(ctx)
	if _, err := long.Exec(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".jobs"); err != nil {
		t.Fatal(err)
	}
	var log syncbuf.Buffer
	opened := openAside(t, &postgres.Options{Schema: schema, Logger: slog.New(slog.NewJSONHandler(&log, nil))})
	const waiting = "upgrade the schema: other transactions hold the locks of its tables; it lets them go on and tries again"
	waitLogged(t, &log, waiting, 2)
	if err := long.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("Open after the transaction ended: %v", err)
	}
	tries := logged(t, &log, waiting)
	for i, r := range tries {
		// One wait of half a second per try, and a pause of half a
		// second (doubled after each try) between tries.
		least := time.Duration(i+1)*500*time.Millisecond + time.Duration(1<<i-1)*500*time.Millisecond
		waited, ok := r["waited"].(float64)
		if r["level"] != "WARN" || r["schema"] != schema || r["store"] != "postgres" || r["tries"] != float64(i+1) || !ok || time.Duration(waited) < least ||
			r["next_try_in"] != float64(time.Duration(500<<i)*time.Millisecond) {
			t.Errorf("try %d logged as %v, want level WARN, schema %s, store postgres, tries %d, waited at least %v, next_try_in %v",
				i+1, r, schema, i+1, least, time.Duration(500<<i)*time.Millisecond)
		}
	}
	done := logged(t, &log, "upgraded the schema after waiting for the locks of its tables")
	if len(done) != 1 || done[0]["level"] != "INFO" || done[0]["tries"] != float64(len(tries)+1) || done[0]["waited"] == nil {
		t.Errorf("the upgrade done logged as %v, want one record at level INFO with tries %d and waited", done, len(tries)+1)
	}
}
