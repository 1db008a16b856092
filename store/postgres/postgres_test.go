package postgres_test

import (
	"context"
	"fmt"
	"os"
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
	name := fmt.Sprintf("test_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, schemaSeq.Add(1))
	d := dsn(t)
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), d)
		if err != nil {
			t.Logf("drop schema %s: %v", name, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", name, err)
		}
	})
	return name
}

func open(t testing.TB, schema string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn(t), &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
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
	if err := s.DeleteJob(ctx, "c", "j"); err != nil {
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
	if err := s.DeleteJob(ctx, "c", "k"); err != nil {
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

// TestCountsFoldVacuums checks that a fold of many changes (by CountJobs,
// or by Prune) vacuums job_count_deltas, so that the counts after it do
// not scan the changes it deleted, and that a fold of fewer does not.
func TestCountsFoldVacuums(t *testing.T) {
	for _, tt := range []struct {
		name     string
		changes  int
		prune    bool
		vacuumed bool
	}{
		{name: "count", changes: postgres.VacuumAfter, vacuumed: true},
		{name: "count of fewer", changes: postgres.VacuumAfter - 2},
		{name: "prune", changes: postgres.VacuumAfter, prune: true, vacuumed: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			schema := newSchema(t)
			s := open(t, schema)
			c := connect(t)
			q := pgx.Identifier{schema}.Sanitize() + ".job_count_deltas"
			putDueJob(t, s)
			if _, err := s.CountJobs(ctx); err != nil { // folds the put's change
				t.Fatal(err)
			}
			// Changes that sum to nothing, left for the next fold;
			// autovacuum must not clean up after it meanwhile.
			if _, err := c.Exec(ctx, "ALTER TABLE "+q+" SET (autovacuum_enabled = false)"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Exec(ctx, "INSERT INTO "+q+" (collection, state, n) SELECT 'c', 'Enabled', 1 - 2 * (i % 2) FROM generate_series(1, $1) i", tt.changes); err != nil {
				t.Fatal(err)
			}
			if tt.prune {
				if _, err := s.Prune(ctx, scheduler.PruneRequest{}); err != nil {
					t.Fatal(err)
				}
			} else if got, err := s.CountJobs(ctx); err != nil || len(got) != 1 || got[0].Jobs != 1 {
				t.Fatalf("CountJobs = %+v, %v; want c/Enabled 1", got, err)
			}
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

func TestLimiter(t *testing.T) {
	schema := newSchema(t)
	storetest.RunLimiter(t, []scheduler.Store{open(t, schema), open(t, schema), open(t, schema)})
}

func TestLimits(t *testing.T) {
	schema := newSchema(t)
	storetest.RunLimits(t, []scheduler.Store{open(t, schema), open(t, schema), open(t, schema)})
}
