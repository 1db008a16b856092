package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/postgres"
)

// A bulk put whose last new job does not encode, after a replace and
// 3,000 creates, fails with the encoding error, its chain kept (not the
// server's answer to the COPY's end), and writes nothing: the replaced job
// is unchanged, none is created, and the store keeps working.
func TestPutJobsEncodeErrorMidCopy(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	job := func(name string, anchor time.Time) *scheduler.JobRecord {
		return &scheduler.JobRecord{Collection: "c", Name: name, State: scheduler.JobEnabled, ETag: "j1", Created: t0, Updated: t0,
			Job:      &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://127.0.0.1/", Method: "GET"}}},
			Schedule: scheduler.JobSchedule{DueAt: t0, Anchor: anchor, NextOccurrence: t0}}
	}
	for _, tt := range []struct {
		name string
		bad  func() *scheduler.JobRecord
		want func(error) bool // what errors.As finds in the error
	}{
		{name: "a time past 9999", bad: func() *scheduler.JobRecord { return job("bad", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)) }},
		{name: "a custom action that is no JSON", bad: func() *scheduler.JobRecord {
			j := job("bad", t0)
			j.Job.Action = action.Action{Type: "Thing", Custom: json.RawMessage(`{"n": `)}
			return j
		}, want: func(err error) bool { var se *json.SyntaxError; return errors.As(err, &se) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, newSchema(t))
			if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c", ETag: "e1", Created: t0, Updated: t0,
				Definition: scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 5000}}}}); err != nil {
				t.Fatal(err)
			}
			if err := s.PutJob(ctx, job("a", t0)); err != nil {
				t.Fatal(err)
			}
			a, err := s.GetJob(ctx, "c", "a")
			if err != nil {
				t.Fatal(err)
			}
			a.ETag = "j2"
			batch := []*scheduler.JobRecord{a}
			for i := range 3000 {
				batch = append(batch, job(fmt.Sprintf("n%04d", i), t0))
			}
			batch = append(batch, tt.bad())
			err = s.PutJobs(ctx, "c", batch)
			if err == nil {
				t.Fatal("PutJobs with a job that does not encode: nil error")
			}
			if !strings.HasPrefix(err.Error(), `store/postgres: put job "c/bad": encode `) {
				t.Errorf("PutJobs with a job that does not encode: %v, want the encoding error of c/bad", err)
			}
			if tt.want != nil && !tt.want(err) {
				t.Errorf("PutJobs with a job that does not encode: %v, errors.As does not find the encoder's error", err)
			}
			if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) {
				t.Errorf("PutJobs with a job that does not encode: %v, the server's error (SQLSTATE %s), want the encoding error", err, pe.Code)
			}
			if got, err := s.GetJob(ctx, "c", "a"); err != nil || got.ETag != "j1" {
				t.Errorf("a after the failed batch: %v, %v; want ETag j1", got, err)
			}
			if _, err := s.GetJob(ctx, "c", "n0000"); !errors.Is(err, scheduler.ErrNotFound) {
				t.Errorf("n0000 after the failed batch: %v; want ErrNotFound", err)
			}
			if err := s.PutJobs(ctx, "c", batch[1:3]); err != nil {
				t.Errorf("PutJobs after the failed batch: %v", err)
			}
		})
	}
}

// keepReads is a pgx tracer that, while on, keeps the text and the
// arguments of every statement that only reads (SELECT, or WITH, with no
// write, lock or notification in it).
type keepReads struct {
	mu    sync.Mutex
	on    bool
	reads []keptQuery
}

type keptQuery struct {
	sql  string
	args []any
}

func (k *keepReads) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	k.mu.Lock()
	defer k.mu.Unlock()
	q := strings.ToUpper(strings.TrimSpace(data.SQL))
	if k.on && (strings.HasPrefix(q, "SELECT") || strings.HasPrefix(q, "WITH")) &&
		!strings.Contains(q, "INSERT") && !strings.Contains(q, "UPDATE") && !strings.Contains(q, "DELETE") && !strings.Contains(q, "FOR ") && !strings.Contains(q, "PG_NOTIFY") {
		k.reads = append(k.reads, keptQuery{data.SQL, data.Args})
	}
	return ctx
}

func (k *keepReads) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (k *keepReads) keep(on bool) []keptQuery {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.on = on
	reads := k.reads
	k.reads = nil
	return reads
}

// readsTraced returns a new schema, a store in it whose reads trace
// keeps while on, and a connection of its own to run them again on
// (pagesRead); the store and the connection close when t ends.
func readsTraced(t *testing.T) (string, *keepReads, *postgres.Store, *pgx.Conn) {
	t.Helper()
	schema := newSchema(t)
	trace := &keepReads{}
	s, err := postgres.New(ctx, tracedPool(t, trace), &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c, err := pgx.Connect(ctx, dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	return schema, trace, s, c
}

// TestPutJobsReadsBounded: the reads of a bulk put of 100 jobs into a
// collection of 3,000 read a few pages per job, whatever the statistics
// say. Here they were taken while the collection had no job (as
// autovacuum's ANALYZE may leave them while a new collection fills), so
// that the planner takes the collection for a rare one: a search for free
// places that looked each place up by the collection and the place could
// then be planned through the primary key, reading all the collection's
// jobs for each place (a 1M bulk put stuck for minutes in that plan). The
// collection analyzed is full, so that its places, and the statistics,
// are the same from run to run.
func TestPutJobsReadsBounded(t *testing.T) {
	schema, trace, s, c := readsTraced(t)
	// No autovacuum: the statistics stay those of the ANALYZE below.
	if _, err := c.Exec(ctx, "ALTER TABLE "+schema+".jobs SET (autovacuum_enabled = off)"); err != nil {
		t.Fatal(err)
	}
	putQuotaCollection(t, s, "a", 2000)
	putQuotaCollection(t, s, "b", 10_000)
	put := func(coll string, from, to int) {
		t.Helper()
		for i := from; i < to; i += 500 {
			var batch []*scheduler.JobRecord
			for k := i; k < min(i+500, to); k++ {
				batch = append(batch, newJobRecord(coll, fmt.Sprintf("j%05d", k)))
			}
			if err := s.PutJobs(ctx, coll, batch); err != nil {
				t.Fatal(err)
			}
		}
	}
	put("a", 0, 2000)
	if _, err := c.Exec(ctx, "ANALYZE "+schema+".jobs"); err != nil {
		t.Fatal(err)
	}
	put("b", 0, 3000)
	// Another transaction inserting the jobs of a third collection, in
	// the same places, stays open during the put: what it inserted is
	// in the index, and invisible to the put.
	other, err := pgx.Connect(ctx, dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	otx, err := other.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer otx.Rollback(ctx)
	if _, err := otx.Exec(ctx, "INSERT INTO "+schema+`.jobs (collection, name, definition, state, status, schedule, etag, version, coll_enabled, slot)
		SELECT 'c', 'j' || i, '{}', 'Enabled', '{}', '{}', 'e', 1, true, i FROM generate_series(0, 9999) i`); err != nil {
		t.Fatal(err)
	}

	trace.keep(true)
	const n = 100
	put("b", 3000, 3000+n)
	reads := trace.keep(false)
	searches(t, "PutJobs", reads)
	// An index lookup per place reads three or four pages.
	if total, limit := pagesRead(t, c, reads), 10*n; total > limit {
		t.Errorf("the reads of a PutJobs of %d jobs into a collection of 3,000 read %d pages, want at most %d", n, total, limit)
	}
}

// searches fails t unless reads hold the search for free places.
func searches(t *testing.T, what string, reads []keptQuery) {
	t.Helper()
	if !slices.ContainsFunc(reads, func(r keptQuery) bool {
		return strings.Contains(r.sql, "WITH RECURSIVE") && strings.Contains(r.sql, "g(s) AS")
	}) {
		t.Fatalf("%s: the search for free places is not among the reads traced: %d reads", what, len(reads))
	}
}

// pagesRead runs each of reads again on c, for what it reads, and returns
// the pages they read together: each read's plan for its arguments (a
// custom plan, as the first runs of a statement on a connection get).
func pagesRead(t *testing.T, c *pgx.Conn, reads []keptQuery) int {
	t.Helper()
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = force_custom_plan"); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, r := range reads {
		var out []struct {
			Plan struct {
				Hit  int `json:"Shared Hit Blocks"`
				Read int `json:"Shared Read Blocks"`
			}
		}
		if err := tx.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+r.sql, r.args...).Scan(&out); err != nil {
			t.Fatalf("EXPLAIN %s: %v", r.sql, err)
		}
		total += out[0].Plan.Hit + out[0].Plan.Read
	}
	return total
}

// TestPutIntoFullReadsFew: a create into a collection of 20,000 jobs at its
// quota, or a bulk put whose creates would take it past its quota, is
// refused after reading a few hundred pages (the places near where the put
// looks first, and the collection's job count), not after looking at each
// of its places (three or four pages each, 60,000 together): a bulk
// put of one create, a single create, and a bulk put of five creates into
// a collection with room for two, which writes nothing and says how many
// jobs the collection holds.
func TestPutIntoFullReadsFew(t *testing.T) {
	schema, trace, s, c := readsTraced(t)
	const limit = 20_000
	putQuotaCollection(t, s, "c", limit)
	batch := func(from, to int) []*scheduler.JobRecord {
		var out []*scheduler.JobRecord
		for k := from; k < to; k++ {
			out = append(out, newJobRecord("c", fmt.Sprintf("j%05d", k)))
		}
		return out
	}
	for i := 0; i < limit-2; i += 1000 {
		if err := s.PutJobs(ctx, "c", batch(i, min(i+1000, limit-2))); err != nil {
			t.Fatal(err)
		}
	}
	a, err := s.GetJob(ctx, "c", "j00000")
	if err != nil {
		t.Fatal(err)
	}
	refused := func(what string, put func() error, reason string) {
		t.Helper()
		trace.keep(true)
		err := put()
		reads := trace.keep(false)
		var qe *scheduler.QuotaError
		if !errors.As(err, &qe) || qe.Limit != fmt.Sprint(limit) || (reason != "" && qe.Reason != reason) {
			t.Fatalf("%s: %v, want a quota error of %d jobs, %q", what, err, limit, reason)
		}
		searches(t, what, reads)
		if total := pagesRead(t, c, reads); total > 400 {
			t.Errorf("%s: its reads read %d pages, want at most 400", what, total)
		}
	}
	replace := a.Clone()
	replace.ETag = "j2"
	refused("PutJobs(a replace and 5 creates into a collection with room for 2)",
		func() error {
			return s.PutJobs(ctx, "c", append([]*scheduler.JobRecord{replace}, batch(limit, limit+5)...))
		},
		fmt.Sprintf("the collection already holds %d jobs, and the batch creates 5", limit-2))
	if got, err := s.GetJob(ctx, "c", "j00000"); err != nil || got.ETag != a.ETag || got.Version != a.Version {
		t.Errorf("j00000 after the refused batch: %+v, %v; want it unchanged", got, err)
	}
	if got := places(t, schema)["c"]; got[0] != limit-2 {
		t.Errorf("after the refused batch: %d jobs, want %d", got[0], limit-2)
	}
	if err := s.PutJobs(ctx, "c", batch(limit-2, limit)); err != nil {
		t.Fatal(err)
	}
	refused("PutJobs(1 create into a full collection)", func() error { return s.PutJobs(ctx, "c", batch(limit, limit+1)) },
		fmt.Sprintf("the collection already holds %d jobs, and the batch creates 1", limit))
	refused("PutJob(a create into a full collection)", func() error { return s.PutJob(ctx, newJobRecord("c", "one-more")) }, "")
}

// TestPutJobsBesideUnfoldedChanges: a bulk put into a collection with
// room reads the pages of its places, not the changes of the job counts
// not folded yet, which no index orders: here 200,000 of another
// collection's.
func TestPutJobsBesideUnfoldedChanges(t *testing.T) {
	schema, trace, s, c := readsTraced(t)
	putQuotaCollection(t, s, "c", 2000)
	var jobs []*scheduler.JobRecord
	for k := range 1010 {
		jobs = append(jobs, newJobRecord("c", fmt.Sprintf("j%05d", k)))
	}
	if err := s.PutJobs(ctx, "c", jobs[:1000]); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "INSERT INTO "+pgx.Identifier{schema}.Sanitize()+".job_count_deltas (collection, state, n) SELECT 'other', 'Enabled', 1 FROM generate_series(1, 200000)"); err != nil {
		t.Fatal(err)
	}
	trace.keep(true)
	err := s.PutJobs(ctx, "c", jobs[1000:])
	reads := trace.keep(false)
	if err != nil {
		t.Fatal(err)
	}
	searches(t, "PutJobs", reads)
	total := pagesRead(t, c, reads)
	t.Logf("PutJobs of 10 jobs beside 200,000 changes not folded: %d pages", total)
	if total > 200 {
		t.Errorf("PutJobs of 10 jobs into a collection of 1,000 beside 200,000 changes of the counts not folded: its reads read %d pages, want at most 200", total)
	}
}

// TestPutJobsQuotaBeforeReplaces: a bulk put that the quota refuses is
// refused before it writes anything: the replaces of the batch are not
// run only to be rolled back.
func TestPutJobsQuotaBeforeReplaces(t *testing.T) {
	s, _, _, jobs, cs := extendSetup(t, 2) // quota: 12 jobs
	old, err := s.GetJob(ctx, "c", jobs[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	old.ETag = "replaced"
	batch := []*scheduler.JobRecord{old}
	for i := range 11 {
		batch = append(batch, &scheduler.JobRecord{Collection: "c", Name: fmt.Sprintf("new%02d", i), Job: &scheduler.Job{},
			State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}})
	}
	var putErr error
	seen := cs.statements(func() { putErr = s.PutJobs(ctx, "c", batch) })
	if !errors.Is(putErr, scheduler.ErrQuotaExceeded) {
		t.Fatalf("PutJobs of a replace and 11 creates into a collection of 2 jobs of 12 = %v, want ErrQuotaExceeded", putErr)
	}
	for _, q := range seen {
		if strings.Contains(q, "SET definition =") || strings.Contains(q, "INSERT INTO") {
			t.Errorf("PutJobs refused for the quota wrote first:\n%s", q)
		}
	}
}
