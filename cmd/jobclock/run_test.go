package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/postgres"
	"github.com/jobclock/scheduler/store/sqlite"
)

func writeRunFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunCommand(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/fail") {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	one := writeRunFile(t, dir, "one.json", `{"action": {"type": "Http", "request": {"uri": "`+srv.URL+`/one", "method": "GET"}}}`)
	coll := writeRunFile(t, dir, "coll.json", `{
		// a collection file
		"name": "demo",
		"jobs": {
			"bad": {"action": {"type": "Http", "request": {"uri": "`+srv.URL+`/fail", "method": "GET"},
				"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT0.1S", "retryCount": 1},
				"errorAction": {"type": "Http", "request": {"uri": "`+srv.URL+`/alert", "method": "POST"}}}},
		},
	}`)
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code := runScheduler(ctx, nil, []string{"-min-retry-interval", "100ms", one, coll}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("run = %d, stderr:\n%s", code, stderr.String())
	}
	var entries []scheduler.HistoryEntry
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var h scheduler.HistoryEntry
		if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
			t.Fatalf("stdout line %q is not a history entry: %v", sc.Text(), err)
		}
		entries = append(entries, h)
	}
	count := map[string]int{}
	for _, h := range entries {
		count[h.Collection+"/"+h.Job+"/"+string(h.ActionName)+"/"+string(h.Status)]++
	}
	want := map[string]int{
		"default/one/MainAction/Completed": 1,
		"demo/bad/MainAction/Failed":       2,
		"demo/bad/ErrorAction/Completed":   1,
	}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%s: %d entries, want %d (all: %v)", k, count[k], n, count)
		}
	}
	for _, s := range []string{"default/one: Completed", "demo/bad: Faulted (executions 2, failures 2, faulted occurrences 1)"} {
		if !strings.Contains(stderr.String(), s) {
			t.Errorf("stderr lacks %q:\n%s", s, stderr.String())
		}
	}
}

func TestRunCommandErrors(t *testing.T) {
	dir := t.TempDir()
	bad := writeRunFile(t, dir, "bad.json", `{"action": {"type": "Http", "request": {"uri": "not a url", "method": "GET"}}}`)
	badColl := writeRunFile(t, dir, "badcoll.json", `{"jobs": {"x": {"action": {"type": "Nope"}}}, "extra": 1}`)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "no job files"},
		{[]string{"-nope"}, 2, "flag provided but not defined"},
		{[]string{bad}, 1, "action.request.uri"},
		{[]string{badColl}, 1, "extra"},
		{[]string{filepath.Join(dir, "missing.json")}, 1, "missing.json"},
		{[]string{"-misfire", "sometimes", bad}, 2, "Misfire"},
		{[]string{"-lease", "500ms", bad}, 2, "-lease 500ms is shorter than 1s"},
		{[]string{"-lease", "ten", bad}, 2, `invalid value "ten" for flag -lease`},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := runScheduler(context.Background(), nil, tt.args, &stdout, &stderr)
		if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("run(%q) = %d, stderr %q; want %d and a message with %q", tt.args, code, stderr.String(), tt.code, tt.want)
		}
	}
}

func TestRunCommandStopsOnCancel(t *testing.T) {
	dir := t.TempDir()
	never := writeRunFile(t, dir, "never.json", `{"recurrence": {"frequency": "Day", "count": 5}, "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}}`)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr bytes.Buffer
	done := make(chan int)
	go func() { done <- runScheduler(ctx, nil, []string{never}, &stdout, &stderr) }()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(stderr.String(), "default/never: Enabled") {
			t.Errorf("run after cancel = %d, stderr %q", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after its context was cancelled")
	}
}

// TestRunCommandTags runs a collection file whose jobs carry tags in their
// ARM envelopes (jobs that end at once: their endTime has passed), keeping
// them in a SQLite file, and reads the tags back from it; tags past ARM's
// limits are reported at their paths in the file.
// runIntoSQLite runs file with -db, a new SQLite database in dir, and
// returns that database's store, closed when the test ends.
func runIntoSQLite(t *testing.T, dir, file string) *sqlite.Store {
	t.Helper()
	db := filepath.Join(dir, "jobs.db")
	var stdout, stderr bytes.Buffer
	if code := runScheduler(context.Background(), nil, []string{"-db", db, file}, &stdout, &stderr); code != 0 {
		t.Fatalf("run = %d, stderr:\n%s", code, stderr.String())
	}
	st, err := sqlite.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestRunCommandTags(t *testing.T) {
	dir := t.TempDir()
	file := writeRunFile(t, dir, "tagged.json", `{
		"name": "tagged",
		"jobs": {
			"a": {"tags": {"team": "ops"}, "properties": {"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
				"recurrence": {"frequency": "Day", "endTime": "2000-01-01T00:00:00Z"}}},
			"b": {"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
				"recurrence": {"frequency": "Day", "endTime": "2000-01-01T00:00:00Z"}},
		},
	}`)
	st := runIntoSQLite(t, dir, file)
	var stdout, stderr bytes.Buffer
	for name, want := range map[string]map[string]string{"a": {"team": "ops"}, "b": nil} {
		j, err := st.GetJob(context.Background(), "tagged", name)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(j.Tags, want) || (want == nil) != (j.Tags == nil) {
			t.Errorf("job %s: tags %v, want %v", name, j.Tags, want)
		}
	}

	bad := writeRunFile(t, dir, "badtags.json", `{"jobs": {"x": {"tags": {"team": 1, "": "v"}, "properties": {"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}}}}}`)
	stderr.Reset()
	if code := runScheduler(context.Background(), nil, []string{bad}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), `jobs.x.tags.team: 1 is not a string`) || !strings.Contains(stderr.String(), `jobs.x.tags[""]: has an empty name`) {
		t.Errorf("run with bad tags = %d, stderr:\n%s", code, stderr.String())
	}
}

// TestRunCommandCalendars: the calendars of a collection file are put
// before its jobs, which may name them; a bad one is named at its path.
func TestRunCommandCalendars(t *testing.T) {
	dir := t.TempDir()
	file := writeRunFile(t, dir, "cal.json", `{
		"name": "cal",
		"calendars": {"holidays": {"properties": {"dates": ["2026-12-25"]}}},
		"jobs": {
			"a": {"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
				"recurrence": {"frequency": "Day", "endTime": "2000-01-01T00:00:00Z", "calendar": "holidays"}},
		},
	}`)
	st := runIntoSQLite(t, dir, file)
	var stdout, stderr bytes.Buffer
	c, err := st.GetCollection(context.Background(), "cal")
	if err != nil {
		t.Fatal(err)
	}
	if e := c.Definition.Calendars["holidays"]; e == nil || len(e.Calendar.Properties.Dates) != 1 {
		t.Errorf("calendars of the collection: %+v, want holidays with one date", c.Definition.Calendars)
	}

	bad := writeRunFile(t, dir, "badcal.json", `{"jobs": {}, "calendars": {"h": {"properties": {"dates": ["25.12.2026"]}}}}`)
	stderr.Reset()
	if code := runScheduler(context.Background(), nil, []string{bad}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), `calendars.h.properties.dates[0]: "25.12.2026" is not a date`) {
		t.Errorf("run with a bad calendar = %d, stderr:\n%s", code, stderr.String())
	}
}

// TestRunRefusedFileWritesNothing: run -db with a file whose collection
// holds a valid job and one that the storage queue executor refuses (and
// another, valid file) exits 1 naming the problem, and leaves the
// database without any of their collections or jobs.
func TestRunRefusedFileWritesNothing(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "jobs.db")
	ok := writeRunFile(t, dir, "ok.json", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:1/", "method": "GET"}},
		"recurrence": {"frequency": "Hour"}}`)
	coll := writeRunFile(t, dir, "coll.json", `{"name": "demo", "jobs": {
		"good": {"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:1/", "method": "GET"}}, "recurrence": {"frequency": "Hour"}},
		"badq": {"action": {"type": "StorageQueue", "queueMessage": {"storageAccount": "account", "queueName": "UPPER_case",
			"sasToken": "sv=2020-01-01&sig=abc", "message": "hi"}}}}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if code := runScheduler(ctx, nil, []string{"-db", db, ok, coll}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "jobs.badq.action.queueMessage.queueName") {
		t.Fatalf("run = %d, stderr:\n%s\nwant 1 naming jobs.badq.action.queueMessage.queueName", code, stderr.String())
	}
	st, err := sqlite.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cols, err := st.ListCollections(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cols {
		jobs, err := st.ListJobs(context.Background(), c.Name, scheduler.JobFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			t.Errorf("the refused run left job %s/%s in the database (%s)", j.Collection, j.Name, j.State)
		}
		t.Errorf("the refused run left collection %s in the database", c.Name)
	}
}

// TestRunDatabaseRefusalWritesNothing: run -db with files that the check
// in memory lets through but the database refuses, for the jobs a
// collection holds already (from an earlier run), exits 1 naming the
// quota and leaves the database as it was: two files, the second of whose
// collection is refused (its maxJobCount is below the jobs it holds),
// leave no trace of the first; a file whose collection is accepted but
// whose second new job finds no place leaves neither the collection's new
// definition nor its first job.
func TestRunDatabaseRefusalWritesNothing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jobs.db")
	testRunRefusal(t, []string{"-db", db}, func() (scheduler.Store, error) { return sqlite.Open(context.Background(), db, nil) },
		func() error {
			d, err := sql.Open("sqlite", db)
			if err != nil {
				return err
			}
			defer d.Close()
			_, err = d.Exec("CREATE TRIGGER refuse_boom BEFORE INSERT ON jobs WHEN NEW.name = 'boom' BEGIN SELECT RAISE(ABORT, 'boom refused'); END")
			return err
		})
}

// TestRunDatabaseRefusalWritesNothingPostgres is
// TestRunDatabaseRefusalWritesNothing with -postgres.
func TestRunDatabaseRefusalWritesNothingPostgres(t *testing.T) {
	dsn := os.Getenv("JOBCLOCK_POSTGRES_DSN")
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("JOBCLOCK_POSTGRES_DSN is not set")
		}
		t.Skip("JOBCLOCK_POSTGRES_DSN is not set")
	}
	ctx := context.Background()
	schema := fmt.Sprintf("runtx_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	})
	testRunRefusal(t, []string{"-postgres", dsn, "-schema", schema}, func() (scheduler.Store, error) {
		return postgres.Open(ctx, dsn, &postgres.Options{Schema: schema})
	}, func() error {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		s := pgx.Identifier{schema}.Sanitize()
		_, err = conn.Exec(ctx, `CREATE FUNCTION `+s+`.refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN IF NEW.name = 'boom' THEN RAISE EXCEPTION 'boom refused'; END IF; RETURN NEW; END $$;
			CREATE TRIGGER refuse_boom BEFORE INSERT ON `+s+`.jobs FOR EACH ROW EXECUTE FUNCTION `+s+`.refuse_boom()`)
		return err
	})
}

// testRunRefusal is TestRunDatabaseRefusalWritesNothing with the flags of
// a database, a func that opens its store, and one that makes the
// database fail the insert of a job called boom, as a failure of the
// database midway: two files, the second of which holds boom, leave no
// trace of the first either.
func testRunRefusal(t *testing.T, dbFlags []string, open func() (scheduler.Store, error), failBoom func() error) {
	dir := t.TempDir()
	const job = `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}, "recurrence": {"frequency": "Day", "endTime": "2000-01-01T00:00:00Z"}}`
	before := writeRunFile(t, dir, "b1.json", `{"name": "b", "collection": {"properties": {"quota": {"maxJobCount": 5}}}, "jobs": {"x": `+job+`, "y": `+job+`}}`)
	var stdout, stderr bytes.Buffer
	if code := runScheduler(context.Background(), nil, append(slices.Clip(dbFlags), before), &stdout, &stderr); code != 0 {
		t.Fatalf("first run = %d, stderr:\n%s", code, stderr.String())
	}
	first := writeRunFile(t, dir, "a.json", `{"name": "a", "jobs": {"p": `+job+`, "q": `+job+`}}`)
	second := writeRunFile(t, dir, "b2.json", `{"name": "b", "collection": {"properties": {"quota": {"maxJobCount": 1}}}, "jobs": {"z": `+job+`}}`)
	third := writeRunFile(t, dir, "b3.json", `{"name": "b", "collection": {"properties": {"quota": {"maxJobCount": 3}}}, "jobs": {"v": `+job+`, "w": `+job+`}}`)
	boom := writeRunFile(t, dir, "boom.json", `{"name": "c", "jobs": {"a": `+job+`, "boom": `+job+`}}`)
	if err := failBoom(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		files []string
		want  string
	}{{[]string{first, second}, "maxJobCount"}, {[]string{third}, "maxJobCount"}, {[]string{first, boom}, "boom refused"}} {
		files := tt.files
		stderr.Reset()
		if code := runScheduler(context.Background(), nil, append(slices.Clip(dbFlags), files...), &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), tt.want) {
			t.Fatalf("run %q = %d, stderr:\n%s\nwant 1 naming %s", files, code, stderr.String(), tt.want)
		}
		st, err := open()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []string{"a", "c"} {
			if _, err := st.GetCollection(context.Background(), c); !errors.Is(err, scheduler.ErrNotFound) {
				t.Errorf("run %q: collection %s afterwards: %v, want ErrNotFound", files, c, err)
			}
		}
		b, err := st.GetCollection(context.Background(), "b")
		if err != nil || b.Definition.MaxJobCount() != 5 {
			t.Errorf("run %q: collection b afterwards = %+v, %v; want maxJobCount 5, as the first run left it", files, b, err)
		}
		jobs, err := st.ListJobs(context.Background(), "b", scheduler.JobFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, j := range jobs {
			names = append(names, j.Name)
		}
		if strings.Join(names, ",") != "x,y" {
			t.Errorf("run %q: jobs of b afterwards: %v, want x and y", files, names)
		}
		st.(interface{ Close() error }).Close()
	}
}

// TestRunReportsParseAndPutProblems: run reports, in one go, the problems
// of a file that parsing finds and those that only a put finds (an
// action's rules that its executor knows), as validate does.
func TestRunReportsParseAndPutProblems(t *testing.T) {
	dir := t.TempDir()
	file := writeRunFile(t, dir, "both.json", `{"name": "both", "jobs": {
		"badparse": {"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}}, "recurrence": {"frequency": "Fortnight"}},
		"badq": {"action": {"type": "StorageQueue", "queueMessage": {"storageAccount": "account", "queueName": "UPPER_case",
			"sasToken": "sv=2020-01-01&sig=abc", "message": "hi"}}}}}`)
	var stdout, stderr bytes.Buffer
	code := runScheduler(context.Background(), nil, []string{file}, &stdout, &stderr)
	for _, want := range []string{"jobs.badparse.recurrence.frequency", "jobs.badq.action.queueMessage.queueName"} {
		if code != 1 || !strings.Contains(stderr.String(), want) {
			t.Errorf("run = %d, stderr:\n%s\nwant 1 naming %s", code, stderr.String(), want)
		}
	}
}
