package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/postgres"
	"github.com/jobclock/scheduler/store/sqlite"
)

// TestRunKeepsStoredCollections: run -db creates the collection of a
// file that gives no collection properties (DefaultCollection for a
// file of one job) only when the database holds none, and leaves the
// stored one, which an operator gave another plan and quota, as it is;
// two runs at once both succeed and create it once.
func TestRunKeepsStoredCollections(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jobs.db")
	testRunKeepsStoredCollections(t, []string{"-db", db}, func() (scheduler.Store, error) {
		return sqlite.Open(context.Background(), db, nil)
	})
}

// TestRunKeepsStoredCollectionsPostgres is TestRunKeepsStoredCollections
// with -postgres.
func TestRunKeepsStoredCollectionsPostgres(t *testing.T) {
	dsn := os.Getenv("JOBCLOCK_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("JOBCLOCK_POSTGRES_DSN is not set")
		}
		t.Skip("JOBCLOCK_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	schema := fmt.Sprintf("rundefault_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	})
	testRunKeepsStoredCollections(t, []string{"-postgres", dsn, "-schema", schema}, func() (scheduler.Store, error) {
		return postgres.Open(ctx, dsn, &postgres.Options{Schema: schema})
	})
}

func testRunKeepsStoredCollections(t *testing.T, dbFlags []string, open func() (scheduler.Store, error)) {
	dir := t.TempDir()
	// Jobs that end at once: their endTime has passed.
	const job = `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}, "recurrence": {"frequency": "Day", "endTime": "2000-01-01T00:00:00Z"}}`
	run := func(files ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := runScheduler(context.Background(), append(slices.Clip(dbFlags), files...), &stdout, &stderr); code != 0 {
			t.Errorf("run %q = %d, stderr:\n%s", files, code, stderr.String())
		}
	}
	collection := func(name string) *scheduler.CollectionRecord {
		t.Helper()
		st, err := open()
		if err != nil {
			t.Fatal(err)
		}
		defer st.(interface{ Close() error }).Close()
		c, err := st.GetCollection(context.Background(), name)
		if err != nil {
			t.Fatalf("collection %s: %v", name, err)
		}
		return c
	}

	// Two runs at once into a database without "default": both succeed,
	// and the collection is written once.
	var wg sync.WaitGroup
	for _, name := range []string{"first.json", "second.json"} {
		f := writeRunFile(t, dir, name, job)
		wg.Go(func() { run(f) })
	}
	wg.Wait()
	if c := collection(scheduler.DefaultCollection); c.Version != 1 || c.Definition.MaxJobCount() != scheduler.DefaultCollectionDefinition().MaxJobCount() {
		t.Errorf("default after two runs at once: version %d, maxJobCount %d; want version 1, maxJobCount %d",
			c.Version, c.Definition.MaxJobCount(), scheduler.DefaultCollectionDefinition().MaxJobCount())
	}

	// An operator gives "default" and "team" plans of their own; files
	// without collection properties leave them as they are.
	run(writeRunFile(t, dir, "setup.json", `{"name": "default", "collection": {"properties": {"quota": {"maxJobCount": 7, "maxRecurrence": {"frequency": "Second", "interval": 1}}}}, "jobs": {"c": `+job+`}}`),
		writeRunFile(t, dir, "team.json", `{"name": "team", "collection": {"properties": {"quota": {"maxJobCount": 9, "maxRecurrence": {"frequency": "Minute", "interval": 1}}}}, "jobs": {"a": `+job+`}}`))
	before := map[string]*scheduler.CollectionRecord{"default": collection("default"), "team": collection("team")}
	run(writeRunFile(t, dir, "third.json", job), writeRunFile(t, dir, "team2.json", `{"name": "team", "jobs": {"b": `+job+`}}`))
	for name, want := range before {
		got := collection(name)
		if got.ETag != want.ETag || got.Definition.MaxJobCount() != want.Definition.MaxJobCount() {
			t.Errorf("collection %s after a run of a file without its properties: maxJobCount %d, ETag %s; want it left as it was (maxJobCount %d, ETag %s)",
				name, got.Definition.MaxJobCount(), got.ETag, want.Definition.MaxJobCount(), want.ETag)
		}
	}
}
