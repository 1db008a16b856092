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

func TestOverlap(t *testing.T) {
	schema := newSchema(t)
	storetest.RunOverlap(t, []scheduler.Store{open(t, schema), open(t, schema), open(t, schema)})
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
