package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/postgres"
	"github.com/jobclock/scheduler/store/storetest"
)

// dsn returns the test database's address, or skips (fails with CI=true)
// when there is none.
func dsn(t testing.TB) string {
	t.Helper()
	d := os.Getenv("JOBCLOCK_POSTGRES_DSN")
	if d == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("JOBCLOCK_POSTGRES_DSN is not set; start PostgreSQL with scripts/start-postgres.sh")
		}
		t.Skip("JOBCLOCK_POSTGRES_DSN is not set; run eval \"$(bash scripts/start-postgres.sh DIR)\" first")
	}
	return d
}

var schemaSeq atomic.Int64

// newSchema returns a schema name of its own for one test, dropped at the
// end of the test.
func newSchema(t testing.TB) string {
	t.Helper()
	name := testName()
	dropAtEnd(t, dsn(t), "drop schema "+name, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE")
	return name
}

// testName returns a name of its own for a schema or database of a test.
func testName() string {
	return fmt.Sprintf("test_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, schemaSeq.Add(1))
}

// dropAtEnd runs statement drop on a connection of its own to the database
// at address d at the end of the test, logging (as what) its failure.
func dropAtEnd(t testing.TB, d, what, drop string) {
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), d)
		if err != nil {
			t.Logf("%s: %v", what, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), drop); err != nil {
			t.Logf("%s: %v", what, err)
		}
	})
}

func open(t testing.TB, schema string) *postgres.Store {
	t.Helper()
	return openAt(t, dsn(t), schema)
}

// openAt opens a store in the given schema of the database at address d.
func openAt(t testing.TB, d, schema string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), d, &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// ownDatabase creates a database for one test, dropped at the end of the
// test, and returns its address. A test that wants VACUUM to remove the
// rows it deleted needs one: a transaction of another test (or package)
// in the same database can hold back what VACUUM may remove.
func ownDatabase(t *testing.T) string {
	t.Helper()
	d := dsn(t)
	name := testName()
	q := pgx.Identifier{name}.Sanitize()
	if _, err := connect(t).Exec(ctx, "CREATE DATABASE "+q); err != nil {
		t.Fatal(err)
	}
	dropAtEnd(t, d, "drop database "+name, "DROP DATABASE IF EXISTS "+q+" WITH (FORCE)")
	u, err := url.Parse(d)
	if err != nil || u.Scheme == "" { // keyword=value form: the last dbname counts
		return d + " dbname=" + name
	}
	u.Path = "/" + name
	return u.String()
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) scheduler.Store {
		return open(t, newSchema(t))
	})
}

func TestDurable(t *testing.T) {
	storetest.RunDurable(t, func(t *testing.T) func(t *testing.T) scheduler.Store {
		schema := newSchema(t)
		return func(t *testing.T) scheduler.Store { return open(t, schema) }
	})
}

func TestSchedulers(t *testing.T) {
	schema := newSchema(t)
	storetest.RunSchedulers(t, []scheduler.Store{open(t, schema), open(t, schema), open(t, schema)})
}

func TestClaimAhead(t *testing.T) {
	schema := newSchema(t)
	storetest.RunClaimAhead(t, []scheduler.Store{open(t, schema), open(t, schema), open(t, schema)})
}

func TestOverlap(t *testing.T) {
	schema := newSchema(t)
	storetest.RunOverlap(t, []scheduler.Store{open(t, schema), open(t, schema), open(t, schema)})
	storetest.RunAllowAllTakeover(t, []scheduler.Store{open(t, schema), open(t, schema)})
}

func TestRunPolicies(t *testing.T) {
	schema := newSchema(t)
	storetest.RunRunPolicies(t, []scheduler.Store{open(t, schema), open(t, schema), open(t, schema)})
}

func TestBatchRecorder(t *testing.T) {
	storetest.RunBatchRecorder(t, func(t *testing.T) scheduler.Store {
		return open(t, newSchema(t))
	})
}

func TestStats(t *testing.T) {
	storetest.RunStats(t, func(t *testing.T) scheduler.Store {
		return open(t, newSchema(t))
	})
}

func TestBulkPutter(t *testing.T) {
	storetest.RunBulkPutter(t, func(t *testing.T) scheduler.Store {
		return open(t, newSchema(t))
	})
}

func TestConcurrentPuts(t *testing.T) {
	schema := newSchema(t)
	storetest.RunConcurrentPuts(t, []scheduler.Store{open(t, schema), open(t, schema), open(t, schema)})
}

func TestCounts(t *testing.T) {
	schema := newSchema(t)
	storetest.RunCounts(t, []scheduler.Store{open(t, schema), open(t, schema), open(t, schema)})
}

// TestCountsFolded checks where the job counts live: the triggers' changes
// pile up in job_count_deltas until CountJobs folds them into job_counts,
// and Prune drops the counts that reached 0.
func TestCountsFolded(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	c := connect(t)
	q := pgx.Identifier{schema}.Sanitize()
	rows := func(table string) (n, sum int) {
		t.Helper()
		if err := c.QueryRow(ctx, "SELECT count(*), coalesce(sum(n), 0) FROM "+q+"."+table).Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		return n, sum
	}
	putDueJob(t, s)
	if err := s.DeleteJob(ctx, "c", "j", ""); err != nil {
		t.Fatal(err)
	}
	other := &scheduler.JobRecord{Collection: "c", Name: "k", Job: &scheduler.Job{}, State: scheduler.JobEnabled}
	if err := s.PutJob(ctx, other); err != nil {
		t.Fatal(err)
	}
	if n, sum := rows("job_count_deltas"); n != 3 || sum != 1 {
		t.Errorf("job_count_deltas before a count: %d rows, sum %d; want 3 rows (create, delete, create), sum 1", n, sum)
	}
	got, err := s.CountJobs(ctx)
	if err != nil || len(got) != 1 || got[0].Jobs != 1 {
		t.Fatalf("CountJobs = %+v, %v; want c/Enabled 1", got, err)
	}
	if n, _ := rows("job_count_deltas"); n != 0 {
		t.Errorf("job_count_deltas after a count: %d rows, want 0 (folded)", n)
	}
	if n, sum := rows("job_counts"); n != 1 || sum != 1 {
		t.Errorf("job_counts after a count: %d rows, sum %d; want 1 row of 1", n, sum)
	}
	if err := s.DeleteJob(ctx, "c", "k", ""); err != nil {
		t.Fatal(err)
	}
	if got, err := s.CountJobs(ctx); err != nil || len(got) != 0 {
		t.Fatalf("CountJobs = %+v, %v; want none", got, err)
	}
	if n, sum := rows("job_counts"); n != 1 || sum != 0 {
		t.Errorf("job_counts after the last job went: %d rows, sum %d; want 1 row of 0", n, sum)
	}
	if _, err := s.Prune(ctx, scheduler.PruneRequest{}); err != nil {
		t.Fatal(err)
	}
	if n, _ := rows("job_counts"); n != 0 {
		t.Errorf("job_counts after Prune: %d rows, want 0", n)
	}
}

// deltasDatabase opens a store over a database of its own that holds one
// due job, and a connection to that database; q names the store's
// job_count_deltas, which autovacuum leaves alone (the tests see what the
// store's own vacuums do).
func deltasDatabase(t *testing.T) (s *postgres.Store, d string, c *pgx.Conn, q string) {
	t.Helper()
	d = ownDatabase(t)
	const schema = "jobclock"
	s = openAt(t, d, schema)
	c = connectTo(t, d)
	q = pgx.Identifier{schema}.Sanitize() + ".job_count_deltas"
	putDueJob(t, s)
	if _, err := c.Exec(ctx, "ALTER TABLE "+q+" SET (autovacuum_enabled = false)"); err != nil {
		t.Fatal(err)
	}
	return s, d, c, q
}

// addChanges inserts n changes of the counts of collection c's Enabled
// jobs, +1 and -1 in turn (they sum to nothing when n is even), into q.
func addChanges(t *testing.T, c *pgx.Conn, q string, n int) {
	t.Helper()
	if _, err := c.Exec(ctx, "INSERT INTO "+q+" (collection, state, n) SELECT 'c', 'Enabled', 1 - 2 * (i % 2) FROM generate_series(1, $1) i", n); err != nil {
		t.Fatal(err)
	}
}

// TestCountsFoldVacuums checks that a fold of many changes (by CountJobs,
// or by Prune) vacuums job_count_deltas, so that the counts after it do
// not scan the changes it deleted, also when it leaves every count at 0,
// and that a fold of fewer does not.
func TestCountsFoldVacuums(t *testing.T) {
	for _, tt := range []struct {
		name     string
		changes  int
		prune    bool
		none     bool // the job is deleted: every count is 0
		vacuumed bool
	}{
		{name: "count", changes: postgres.VacuumAfter, vacuumed: true},
		{name: "count of fewer", changes: postgres.VacuumAfter - 2},
		{name: "prune", changes: postgres.VacuumAfter, prune: true, vacuumed: true},
		{name: "count at 0", changes: postgres.VacuumAfter, none: true, vacuumed: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _, c, q := deltasDatabase(t)
			if _, err := s.CountJobs(ctx); err != nil { // folds the put's change
				t.Fatal(err)
			}
			addChanges(t, c, q, tt.changes) // left for the next fold
			want := []scheduler.JobCount{{Collection: "c", State: scheduler.JobEnabled, Jobs: 1}}
			if tt.none {
				if err := s.DeleteJob(ctx, "c", "j", ""); err != nil {
					t.Fatal(err)
				}
				want = nil
			}
			if tt.prune {
				if _, err := s.Prune(ctx, scheduler.PruneRequest{}); err != nil {
					t.Fatal(err)
				}
			} else if got, err := s.CountJobs(ctx); err != nil || !slices.Equal(got, want) {
				t.Fatalf("CountJobs = %+v, %v; want %+v", got, err, want)
			}
			s.WaitVacuum()
			var size int64
			if err := c.QueryRow(ctx, "SELECT pg_relation_size($1::regclass)", q).Scan(&size); err != nil {
				t.Fatal(err)
			}
			if vacuumed := size == 0; vacuumed != tt.vacuumed {
				t.Errorf("job_count_deltas takes %d bytes after a fold of %d changes; vacuumed %v, want %v", size, tt.changes, vacuumed, tt.vacuumed)
			}
		})
	}
}

// TestCountsVacuumOnNextFold: folds of fewer than VacuumAfter changes
// leave them dead in job_count_deltas, and once those folds together
// deleted VacuumSoon, the next fold vacuums them away, however few it
// folds itself.
func TestCountsVacuumOnNextFold(t *testing.T) {
	s, _, c, q := deltasDatabase(t)
	size := func() int64 {
		t.Helper()
		s.WaitVacuum()
		var n int64
		if err := c.QueryRow(ctx, "SELECT pg_relation_size($1::regclass)", q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	want := []scheduler.JobCount{{Collection: "c", State: scheduler.JobEnabled, Jobs: 1}}
	count := func() {
		t.Helper()
		if got, err := s.CountJobs(ctx); err != nil || !slices.Equal(got, want) {
			t.Fatalf("CountJobs = %+v, %v; want %+v", got, err, want)
		}
	}
	count() // folds the put's change
	addChanges(t, c, q, postgres.VacuumSoon-2)
	count()
	addChanges(t, c, q, 2)
	count()
	if n := size(); n == 0 {
		t.Fatalf("job_count_deltas is empty after folds of %d changes, want them left dead until the next fold", postgres.VacuumSoon)
	}
	count() // folds nothing
	if n := size(); n != 0 {
		t.Errorf("job_count_deltas takes %d bytes after the fold that came after folds of %d changes, want it vacuumed empty", n, postgres.VacuumSoon)
	}
}

// TestCountsVacuumOnNextFoldRetried: the vacuum that the fold after folds
// of VacuumSoon changes or more runs removes none of them while a
// transaction older than them is open; it is owed then, and once the
// transaction has ended the retry removes them.
func TestCountsVacuumOnNextFoldRetried(t *testing.T) {
	s, d, c, q := deltasDatabase(t)
	count := func() {
		t.Helper()
		if _, err := s.CountJobs(ctx); err != nil {
			t.Fatal(err)
		}
		s.WaitVacuum()
	}
	dead := func() int64 {
		t.Helper()
		var n int64
		if err := c.QueryRow(ctx, "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relid = $1::regclass", q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	count() // folds the put's change
	old, err := connectTo(t, d).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Rollback(ctx)
	if _, err := old.Exec(ctx, "SELECT txid_current()"); err != nil {
		t.Fatal(err)
	}
	const changes = 2 * postgres.VacuumSoon
	addChanges(t, c, q, changes)
	count() // folds them
	count() // vacuums, and removes none of them
	if n := dead(); n < changes {
		t.Fatalf("after the vacuum with a transaction older than the changes open: %d dead changes, want %d", n, changes)
	}
	if err := old.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if due := s.VacuumDue(); !due.IsZero() {
			time.Sleep(time.Until(due))
		}
		count()
	}
	if n := dead(); n != 0 {
		t.Errorf("after the transaction ended and 5 more folds: %d dead changes, want them vacuumed", n)
	}
}

// TestCountsVacuumInBackground: the vacuum of job_count_deltas that a
// fold of many changes asks for runs on after CountJobs answered. A vacuum
// that can shorten the table waits up to 5 s for a moment when no other
// session holds a lock on it (here one idle in a transaction after reading
// it, as a host's transaction after a PutJobTx is), and the count must not
// wait with it; the vacuum ends when that session's transaction does.
func TestCountsVacuumInBackground(t *testing.T) {
	s, d, c, q := deltasDatabase(t)
	addChanges(t, c, q, postgres.VacuumAfter)
	holder := connectTo(t, d)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT count(*) FROM "+q); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CountJobs(ctx); err != nil { // folds the changes, every one: the table can be emptied
		t.Fatal(err)
	}
	vacuuming := func() bool {
		t.Helper()
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'active' AND query LIKE 'VACUUM%job_count_deltas%'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
	seen := false
	for range 100 {
		if seen = vacuuming(); seen {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !seen {
		t.Fatal("no vacuum of job_count_deltas ran once CountJobs had answered, while another session held a lock on the table: the count waited for it")
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	s.WaitVacuum()
	var dead, vacuums int64
	if err := c.QueryRow(ctx, "SELECT n_dead_tup, vacuum_count FROM pg_stat_user_tables WHERE relid = $1::regclass", q).Scan(&dead, &vacuums); err != nil {
		t.Fatal(err)
	}
	if vacuums != 1 || dead != 0 {
		t.Errorf("after the vacuum: %d vacuums, %d dead changes; want 1, and none left", vacuums, dead)
	}
}

// TestCountsVacuumAfterWriters: a fold of VacuumAfter changes while
// transactions that write jobs are open (as in any busy system) vacuums
// job_count_deltas, but the vacuum cannot remove the changes the fold
// deleted, which those transactions may still see. It is owed: a later
// fold, of fewer changes, vacuums again once those have ended, and then
// the dead changes are gone. Neither call waits on the vacuum.
//
// One of the writers' transactions begins before the fold and ends after
// its vacuum, so that the vacuum cannot remove the changes however late
// it runs on a loaded machine; the others write one after another around
// it, each open for 300 ms, two overlapping.
func TestCountsVacuumAfterWriters(t *testing.T) {
	for _, prune := range []bool{false, true} {
		t.Run(fmt.Sprintf("prune %v", prune), func(t *testing.T) {
			s, d, c, q := deltasDatabase(t)
			fold := func() {
				t.Helper()
				start := time.Now()
				var err error
				if prune {
					_, err = s.Prune(ctx, scheduler.PruneRequest{})
				} else {
					_, err = s.CountJobs(ctx)
				}
				// The vacuum's wait for its lock is up to 5 s: a fold
				// that waited for it would take that long.
				if d := time.Since(start); err != nil || d > 3*time.Second {
					t.Fatalf("fold (prune %v): %v after %v, want nil within 3 s", prune, err, d)
				}
				s.WaitVacuum()
			}
			fold()
			addChanges(t, c, q, postgres.VacuumAfter)
			first, err := connectTo(t, d).Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer first.Rollback(ctx)
			if _, err := first.Exec(ctx, "INSERT INTO "+q+" (collection, state, n) VALUES ('c', 'Enabled', 0)"); err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for k := range 2 {
				h := connectTo(t, d)
				wg.Go(func() {
					time.Sleep(time.Duration(k) * 150 * time.Millisecond)
					for {
						select {
						case <-stop:
							return
						default:
						}
						tx, err := h.Begin(ctx)
						if err != nil {
							t.Error(err)
							return
						}
						if _, err := tx.Exec(ctx, "INSERT INTO "+q+" (collection, state, n) VALUES ('c', 'Enabled', 0)"); err != nil {
							t.Error(err)
						}
						time.Sleep(300 * time.Millisecond)
						if err := tx.Commit(ctx); err != nil {
							t.Error(err)
						}
					}
				})
			}
			time.Sleep(50 * time.Millisecond)
			fold() // vacuums, and removes nothing
			if err := first.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			close(stop)
			wg.Wait()
			stats := func() (dead, vacuums int64) {
				t.Helper()
				if err := c.QueryRow(ctx, "SELECT n_dead_tup, vacuum_count FROM pg_stat_user_tables WHERE relid = $1::regclass", q).Scan(&dead, &vacuums); err != nil {
					t.Fatal(err)
				}
				return dead, vacuums
			}
			due := s.VacuumDue()
			if dead, vacuums := stats(); vacuums != 1 || dead < postgres.VacuumAfter || due.IsZero() {
				t.Fatalf("after the fold with writers: %d vacuums, %d dead changes, next due %v; want 1 that could not remove the %d, and one owed", vacuums, dead, due, postgres.VacuumAfter)
			}
			time.Sleep(time.Until(due))
			fold() // of a few changes: the vacuum owed
			if dead, vacuums := stats(); vacuums != 2 || dead >= postgres.VacuumAfter || !s.VacuumDue().IsZero() {
				t.Errorf("after the next fold: %d vacuums, %d dead changes, next due %v; want a second that removed them, and none owed", vacuums, dead, s.VacuumDue())
			}
		})
	}
}

// TestCountsVacuumBacksOff: while a transaction that holds back the
// removal of dead rows stays open, the vacuum of job_count_deltas stays
// owed; its retries wait VacuumRetry, then twice as long after each, not
// VacuumRetry every time. A fold before the retry is due does not vacuum;
// one after it does. The waits are checked against when each vacuum
// ended, so that a slow vacuum on a loaded machine does not move them.
func TestCountsVacuumBacksOff(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	c := connect(t)
	q := pgx.Identifier{schema}.Sanitize() + ".job_count_deltas"
	putDueJob(t, s)
	if _, err := s.CountJobs(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "ALTER TABLE "+q+" SET (autovacuum_enabled = false)"); err != nil {
		t.Fatal(err)
	}
	addChanges(t, c, q, postgres.VacuumAfter)
	holder, err := connect(t).Begin(ctx) // holds an xid: no vacuum removes what the fold deletes
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback(ctx)
	if _, err := holder.Exec(ctx, "SELECT txid_current()"); err != nil {
		t.Fatal(err)
	}
	// fold counts, waits for the vacuum it started, if any, and returns
	// the vacuums so far, the next retry, and when the fold's vacuum
	// ended at the latest.
	fold := func() (vacuums int64, due, ended time.Time) {
		t.Helper()
		if _, err := s.CountJobs(ctx); err != nil {
			t.Fatal(err)
		}
		s.WaitVacuum()
		ended = time.Now()
		if err := c.QueryRow(ctx, "SELECT vacuum_count FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'job_count_deltas'", schema).Scan(&vacuums); err != nil {
			t.Fatal(err)
		}
		return vacuums, s.VacuumDue(), ended
	}
	before := time.Now()
	n, due, ended := fold()
	if n != 1 || due.IsZero() {
		t.Fatalf("the first fold: %d vacuums, next due %v; want 1, and one owed", n, due)
	}
	wait := postgres.VacuumRetry
	for i := 2; i <= 3; i++ {
		if got := due.Sub(before); got < wait || due.After(ended.Add(wait)) {
			t.Fatalf("vacuum %d: the next retry due %v after its fold began, %v after its vacuum ended; want %v", i-1, got, due.Sub(ended), wait)
		}
		if n, again, _ := fold(); time.Now().Before(due) && (n != int64(i-1) || !again.Equal(due)) {
			t.Fatalf("a fold before the retry is due: %d vacuums, next due %v; want %d, due %v", n, again, i-1, due)
		}
		time.Sleep(time.Until(due))
		before = time.Now()
		n, due, ended = fold()
		if n != int64(i) || due.IsZero() {
			t.Fatalf("the fold after retry %d was due: %d vacuums in all, next due %v; want %d, and one owed", i-1, n, due, i)
		}
		wait *= 2
	}
}

// TestMayVacuum: the store vacuums job_count_deltas only when its role may
// (VACUUM by another only warns): a superuser, or the table's owner, but
// not a role that may only read and write the table.
func TestMayVacuum(t *testing.T) {
	c := connect(t)
	role := fmt.Sprintf("jobclock_vacuum_%d_%d", os.Getpid(), schemaSeq.Add(1))
	r := pgx.Identifier{role}.Sanitize()
	if _, err := c.Exec(ctx, "CREATE ROLE "+r+" LOGIN"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c := connect(t)
		for _, q := range []string{"DROP OWNED BY " + r, "DROP ROLE " + r} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Logf("%s: %v", q, err)
			}
		}
	})
	schema := newSchema(t)
	if !open(t, schema).MayVacuum(ctx) {
		t.Errorf("MayVacuum as a superuser = false, want true")
	}
	sq := pgx.Identifier{schema}.Sanitize()
	for _, q := range []string{
		"GRANT CREATE ON DATABASE " + pgx.Identifier{c.Config().Database}.Sanitize() + " TO " + r,
		"GRANT ALL ON SCHEMA " + sq + " TO " + r,
		"GRANT ALL ON ALL TABLES IN SCHEMA " + sq + " TO " + r,
		"GRANT ALL ON ALL SEQUENCES IN SCHEMA " + sq + " TO " + r,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	u, err := url.Parse(dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	as := func() *postgres.Store {
		t.Helper()
		s, err := postgres.Open(ctx, u.String(), &postgres.Options{Schema: schema})
		if err != nil {
			t.Fatalf("Open as %s: %v", role, err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	if as().MayVacuum(ctx) {
		t.Errorf("MayVacuum as a role that does not own job_count_deltas = true, want false")
	}
	if _, err := c.Exec(ctx, "ALTER TABLE "+sq+".job_count_deltas OWNER TO "+r); err != nil {
		t.Fatal(err)
	}
	if !as().MayVacuum(ctx) {
		t.Errorf("MayVacuum as the owner of job_count_deltas = false, want true")
	}
}

func TestLimiter(t *testing.T) {
	schema := newSchema(t)
	storetest.RunLimiter(t, []scheduler.Store{open(t, schema), open(t, schema), open(t, schema)})
}

func TestLimits(t *testing.T) {
	schema := newSchema(t)
	storetest.RunLimits(t, []scheduler.Store{open(t, schema), open(t, schema), open(t, schema)})
}
