package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
		if code := runScheduler(context.Background(), nil, append(slices.Clip(dbFlags), files...), &stdout, &stderr); code != 0 {
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

// TestRunSummaryNamesTheDatabasesJobs: run -db runs every job of the
// database, those of an earlier file that this one no longer holds too,
// and its summary lists each that ran, after the files' own, saying that
// it is not in the files.
func TestRunSummaryNamesTheDatabasesJobs(t *testing.T) {
	ticks := make(chan struct{}, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/tick" {
			ticks <- struct{}{}
			return
		}
		// The file's job ends only once the database's job ran, so that
		// run cannot exit before it.
		select {
		case <-ticks:
		case <-time.After(10 * time.Second):
		}
	}))
	defer receiver.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "jobs.db")
	// A job that an earlier file put, and that this one does not hold,
	// due now.
	st, err := sqlite.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheduler.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	def, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "`+receiver.URL+`/tick", "method": "GET"}},
		"recurrence": {"frequency": "Hour", "interval": 1}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(context.Background(), scheduler.DefaultCollection, scheduler.DefaultCollectionDefinition(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(context.Background(), scheduler.DefaultCollection, "tick", def, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()

	var stdout, stderr bytes.Buffer
	edited := writeRunFile(t, dir, "other.json", `{"action": {"type": "Http", "request": {"uri": "`+receiver.URL+`/other", "method": "GET"}}}`)
	if code := runScheduler(context.Background(), nil, []string{"-history=false", "-db", db, edited}, &stdout, &stderr); code != 0 {
		t.Fatalf("run = %d, stderr:\n%s", code, stderr.String())
	}
	var lines []string // of the summary, after the log's
	for l := range strings.Lines(stderr.String()) {
		if strings.HasPrefix(l, "default/") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "default/other: Completed") ||
		!strings.HasPrefix(lines[1], "default/tick: Enabled") || !strings.HasSuffix(lines[1], "not in the files: a job of the database") {
		t.Errorf("summary of run:\n%s\nwant default/other Completed, then default/tick Enabled, not in the files", stderr.String())
	}
}

// TestRunSpeaksOfTheCommand: what run -db cannot write in its
// transaction (a stricter maxRecurrence than the stored collection's, a
// changed calendar) is refused with what the user can do with the
// command, not with the name of a Go API.
func TestRunSpeaksOfTheCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "jobs.db")
	const job = `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}, "recurrence": {"frequency": "Day", "endTime": "2000-01-01T00:00:00Z"}}`
	run := func(content string) (int, string) {
		var stdout, stderr bytes.Buffer
		code := runScheduler(context.Background(), nil, []string{"-db", db, writeRunFile(t, dir, "c.json", content)}, &stdout, &stderr)
		return code, stderr.String()
	}
	if code, stderr := run(`{"name": "c", "collection": {"properties": {"quota": {"maxRecurrence": {"frequency": "Second", "interval": 1}}}},
		"calendars": {"holidays": {"properties": {"dates": ["2026-12-25"]}}}, "jobs": {"a": ` + job + `}}`); code != 0 {
		t.Fatalf("first run = %d, stderr:\n%s", code, stderr)
	}
	for _, tt := range []struct {
		name, file string
		want       []string
	}{
		{"stricter maxRecurrence", `{"name": "c", "collection": {"properties": {"sku": {"name": "Standard"}}}, "jobs": {"a": ` + job + `}}`,
			[]string{`collection "c": its maxRecurrence 1 Minute is stricter than the stored 1 Second`, "jobclock serve's API", "without -db"}},
		{"changed calendar", `{"name": "c", "collection": {"properties": {"quota": {"maxRecurrence": {"frequency": "Second", "interval": 1}}}},
			"calendars": {"holidays": {"properties": {"dates": ["2026-12-26"]}}}, "jobs": {"a": ` + job + `}}`,
			[]string{"calendar c/holidays: it differs from the stored calendar", "jobclock serve's API", "without -db"}},
	} {
		code, stderr := run(tt.file)
		if code != 1 {
			t.Errorf("%s: run = %d, want 1; stderr:\n%s", tt.name, code, stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr does not say %q:\n%s", tt.name, w, stderr)
			}
		}
		for _, api := range []string{"PutCollection", "PutCalendar", "unsupported operation"} {
			if strings.Contains(stderr, api) {
				t.Errorf("%s: stderr names %q, which means nothing to a user of the command:\n%s", tt.name, api, stderr)
			}
		}
	}
}
