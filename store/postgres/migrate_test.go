package postgres_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/postgres"
	"github.com/jobclock/scheduler/store/storetest"
)

// TestMigrateFromVersion1 opens a schema of version 1 that holds history
// (one made by this build, with what migrations 2 and 3 added taken away)
// and checks that Open migrates it and keeps the data.
func TestMigrateFromVersion1(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	putDueJob(t, s)
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 1)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimDue = %v, %v", claimed, err)
	}
	hist := []scheduler.HistoryEntry{
		{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusFailed, EndTime: t0, Message: "1 \x00 \"actionName\":\"x\""},
		{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, EndTime: t0, RetryCount: 12, Message: "2"},
		{Collection: "c", Job: "j", ActionName: scheduler.ErrorAction, Status: scheduler.StatusCompleted, EndTime: t0, Message: "3"},
	}
	if err := s.Record(ctx, "me", claimed[0], hist); err != nil {
		t.Fatal(err)
	}
	s.Close()

	c := connect(t)
	q := pgx.Identifier{schema}.Sanitize()
	writeWholeEntries(t, c, q, hist) // as version 1 wrote them
	if _, err := c.Exec(ctx, dropCounts(q)+"DROP INDEX "+q+".history_status; DROP INDEX "+q+".jobs_slot; ALTER TABLE "+q+".jobs DROP COLUMN slot; ALTER TABLE "+q+".history DROP COLUMN action_name, DROP COLUMN retry_count, DROP COLUMN faulted; ALTER TABLE "+q+".jobs DROP COLUMN incarnation; UPDATE "+q+".schema_version SET version = 1"); err != nil {
		t.Fatal(err)
	}

	s = open(t, schema)
	got, err := s.RecentHistory(ctx, scheduler.HistoryFilter{Status: scheduler.StatusFailed})
	if err != nil || len(got) != 1 || got[0].Message != hist[0].Message {
		t.Errorf("RecentHistory(Failed) after migration = %+v, %v; want entry 1", got, err)
	}
	// The new columns were filled from the entries, \x00 and all.
	counts, err := s.CountHistory(ctx, t0, t0.Add(time.Minute), time.Minute, nil)
	want := []scheduler.HistoryCount{
		{Start: t0, ActionName: scheduler.ErrorAction, Status: scheduler.StatusCompleted, Entries: 1},
		{Start: t0, ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, Entries: 1, Retries: 1},
		{Start: t0, ActionName: scheduler.MainAction, Status: scheduler.StatusFailed, Entries: 1},
	}
	if diff := cmp.Diff(want, counts); err != nil || diff != "" {
		t.Errorf("CountHistory after migration: %v (-want +got):\n%s", err, diff)
	}
	var version, indexes int
	if err := c.QueryRow(ctx, "SELECT version FROM "+q+".schema_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND indexname IN ('history_status', 'history_faulted')", schema).Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if version != postgres.SchemaVersion || indexes != 2 {
		t.Errorf("after migration: schema version %d, history_status and history_faulted indexes %d; want %d and 2", version, indexes, postgres.SchemaVersion)
	}
}

// TestMigrateFromVersion3 builds a schema with migrations 1 to 3 (this
// package's files), copies into it the jobs and history a store wrote, and
// checks that Open migrates it, keeps them, and finds them due and claims
// them in order of the instant they became ready, expired leases included.
func TestMigrateFromVersion3(t *testing.T) {
	srcSchema := newSchema(t)
	src := open(t, srcSchema)
	for _, c := range []string{"c", "d"} {
		if err := src.PutCollection(ctx, &scheduler.CollectionRecord{Name: c}); err != nil {
			t.Fatal(err)
		}
	}
	put := func(coll, name string, due time.Time) {
		t.Helper()
		j := &scheduler.JobRecord{Collection: coll, Name: name, Job: &scheduler.Job{}, State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: due}}
		if err := src.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(now time.Time, owner string, until time.Time) *scheduler.JobRecord {
		t.Helper()
		got, err := src.ClaimDue(ctx, now, owner, until, 1)
		if err != nil || len(got) != 1 {
			t.Fatalf("ClaimDue(%v) = %v, %v; want one job", now, got, err)
		}
		return got[0]
	}
	// h ran once and is due again at t0+20s; b's lease ended at t0+30s;
	// x's lease ends at t0+2m; a and c never ran; d/j's collection is
	// Disabled.
	put("c", "h", t0.Add(-2*time.Minute))
	put("c", "b", t0.Add(-time.Minute))
	put("c", "x", t0.Add(-30*time.Second))
	h := claim(t0.Add(-2*time.Minute), "me", t0)
	h.Schedule.DueAt = t0.Add(20 * time.Second)
	hist := []scheduler.HistoryEntry{
		{Collection: "c", Job: "h", ActionName: scheduler.MainAction, Status: scheduler.StatusFailed, EndTime: t0.Add(-2 * time.Minute), Message: "1"},
		{Collection: "c", Job: "h", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, EndTime: t0.Add(-2 * time.Minute), RetryCount: 1, Message: "2"},
	}
	if err := src.Record(ctx, "me", h, hist); err != nil {
		t.Fatal(err)
	}
	if b := claim(t0.Add(-time.Minute), "gone", t0.Add(30*time.Second)); b.Name != "b" {
		t.Fatalf("claimed %s, want b", b.Name)
	}
	if x := claim(t0.Add(-30*time.Second), "busy", t0.Add(2*time.Minute)); x.Name != "x" {
		t.Fatalf("claimed %s, want x", x.Name)
	}
	put("c", "a", t0)
	put("c", "c", t0.Add(10*time.Second))
	put("d", "j", t0)
	d, err := src.GetCollection(ctx, "d")
	if err != nil {
		t.Fatal(err)
	}
	d.Definition.Properties.State = scheduler.CollectionDisabled
	if err := src.PutCollection(ctx, d); err != nil {
		t.Fatal(err)
	}

	// The schema of version 3, with the rows copied as they are.
	conn := connect(t)
	schema := newSchema(t)
	q := pgx.Identifier{schema}.Sanitize()
	sq := pgx.Identifier{srcSchema}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+q+"; CREATE TABLE "+q+".schema_version (version integer NOT NULL); INSERT INTO "+q+".schema_version VALUES (3)"); err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT set_config('search_path', $1, true)", q); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"001_init.sql", "002_history_status.sql", "003_history_faulted.sql"} {
		b, err := os.ReadFile(filepath.Join("migrations", f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, string(b)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	const jobCols = "collection, name, definition, state, status, schedule, etag, version, created_at, updated_at, due_at, lease_owner, lease_until, coll_enabled"
	const histCols = "collection, job, status, end_time, entry, action_name, retry_count, faulted"
	const collCols = "name, definition, enabled, etag, version, created_at, updated_at"
	for _, stmt := range []string{
		"INSERT INTO collections SELECT " + collCols + " FROM " + sq + ".collections",
		"INSERT INTO jobs (" + jobCols + ") SELECT " + jobCols + " FROM " + sq + ".jobs",
		"INSERT INTO history (" + histCols + ") SELECT " + histCols + " FROM " + sq + ".history ORDER BY id",
	} {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	s := open(t, schema)
	var version int
	if err := conn.QueryRow(ctx, "SELECT version FROM "+q+".schema_version").Scan(&version); err != nil || version != postgres.SchemaVersion {
		t.Fatalf("schema version after migration = %d, %v; want %d", version, err, postgres.SchemaVersion)
	}
	for _, id := range [][2]string{{"c", "a"}, {"c", "b"}, {"c", "c"}, {"c", "h"}, {"c", "x"}, {"d", "j"}} {
		want, err := src.GetJob(ctx, id[0], id[1])
		if err != nil {
			t.Fatal(err)
		}
		want.Incarnation = 0 // a job from before migration 17 has none
		got, err := s.GetJob(ctx, id[0], id[1])
		if diff := cmp.Diff(want, got); err != nil || diff != "" {
			t.Errorf("GetJob(%s/%s) after migration: %v (-before +after):\n%s", id[0], id[1], err, diff)
		}
	}
	if got, err := s.ListHistory(ctx, "c", "h", scheduler.HistoryFilter{}); err != nil || len(got) != 2 || got[0].Message != "2" || got[1].Message != "1" {
		t.Errorf("ListHistory(c/h) after migration = %+v, %v; want entries 2 and 1", got, err)
	}
	for _, st := range []scheduler.ExecutionStatus{scheduler.StatusFailed, scheduler.StatusCompleted} {
		if got, err := s.RecentHistory(ctx, scheduler.HistoryFilter{Status: st}); err != nil || len(got) != 1 || got[0].Status != st {
			t.Errorf("RecentHistory(%s) after migration = %+v, %v; want one entry", st, got, err)
		}
	}
	if next, err := s.NextDue(ctx); err != nil || !next.Equal(t0) {
		t.Errorf("NextDue after migration = %v, %v; want %v", next, err, t0)
	}
	now := t0.Add(time.Minute)
	if n, err := s.CountDue(ctx, now); err != nil || n != 4 {
		t.Errorf("CountDue(t0+1m) after migration = %d, %v; want 4 (a, c, h, b)", n, err)
	}
	got, err := s.ClaimDue(ctx, now, "new", now.Add(time.Minute), 10)
	if err != nil {
		t.Fatal(err)
	}
	var names, prev []string
	for _, j := range got {
		names, prev = append(names, j.Name), append(prev, j.PreviousLeaseOwner)
	}
	if want := []string{"a", "c", "h", "b"}; !slices.Equal(names, want) || !slices.Equal(prev, []string{"", "", "", "gone"}) {
		t.Errorf("ClaimDue(t0+1m) after migration = %v, previous owners %q; want %v, previous owners of b only \"gone\"", names, prev, want)
	}
	got[2].Schedule.DueAt = time.Time{}
	if err := s.Record(ctx, "new", got[2], []scheduler.HistoryEntry{{Collection: "c", Job: "h", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, EndTime: now, Message: "3"}}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ListHistory(ctx, "c", "h", scheduler.HistoryFilter{}); err != nil || len(got) != 3 || got[0].Message != "3" {
		t.Errorf("ListHistory(c/h) after a Record = %+v, %v; want entries 3, 2 and 1", got, err)
	}

	// The jobs copied in hold the places of their collections from 0 up,
	// in name order (migration 8): c holds 5, so a quota of 6 takes one
	// more job, and a quota of 5 none.
	rows, err := conn.Query(ctx, "SELECT collection || '/' || name || '=' || slot FROM "+q+".jobs ORDER BY collection, name")
	if err != nil {
		t.Fatal(err)
	}
	if slots, err := pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || !slices.Equal(slots, []string{"c/a=0", "c/b=1", "c/c=2", "c/h=3", "c/x=4", "d/j=0"}) {
		t.Errorf("places after migration = %q, %v; want c/a=0 c/b=1 c/c=2 c/h=3 c/x=4 d/j=0", slots, err)
	}
	c, err := s.GetCollection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: 6}
	if err := s.PutCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		j := &scheduler.JobRecord{Collection: "c", Name: fmt.Sprintf("n%d", i), Job: &scheduler.Job{}, State: scheduler.JobEnabled}
		var qe *scheduler.QuotaError
		if err := s.PutJob(ctx, j); (err == nil) != want || !want && !errors.As(err, &qe) {
			t.Errorf("PutJob(c/n%d) with a quota of 6 = %v; want success %v, else a quota error", i, err, want)
		}
	}
}

// TestClaimIsHOT checks that claiming a job writes no index entry: each
// claim is a heap-only update, counted in n_tup_hot_upd (the jobs fill a
// fraction of one page, so there is room for their new versions). The
// store runs on a pool of one connection, whose statistics are flushed on
// request, without a pool of its own for claims.
func TestClaimIsHOT(t *testing.T) {
	schema := newSchema(t)
	pool, err := pgxpool.New(ctx, dsn(t)+"&pool_max_conns=1")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := postgres.New(ctx, pool, &postgres.Options{Schema: schema, EngineConns: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 10
	putDueJobs(t, s, n)
	updates := func() (upd, hot int64) {
		t.Helper()
		// Flush this connection's counts at the end of this statement, and
		// read them in the next transaction.
		if _, err := pool.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
			t.Fatal(err)
		}
		if err := pool.QueryRow(ctx, "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'jobs'", schema).Scan(&upd, &hot); err != nil {
			t.Fatal(err)
		}
		return upd, hot
	}
	upd0, hot0 := updates()
	for range n {
		if got, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 1); err != nil || len(got) != 1 {
			t.Fatalf("ClaimDue = %d jobs, %v; want 1", len(got), err)
		}
	}
	// An expired lease claimed again.
	if got, err := s.ClaimDue(ctx, t0.Add(time.Minute), "you", t0.Add(2*time.Minute), 1); err != nil || len(got) != 1 || got[0].PreviousLeaseOwner != "me" {
		t.Fatalf("ClaimDue(expired) = %v, %v; want one job leased by me before", got, err)
	}
	upd, hot := updates()
	if upd-upd0 != n+1 || hot-hot0 != n+1 {
		t.Errorf("claims of %d jobs: %d updates, %d of them HOT; want every one HOT", n+1, upd-upd0, hot-hot0)
	}
}

// TestMigrateJobTags opens a schema of version 8, from before jobs had
// tags, that holds a job, and checks that Open adds the column in place:
// the job reads back without tags, and may be given some and found by
// them.
func TestMigrateJobTags(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	putDueJob(t, s)
	s.Close()
	c := connect(t)
	q := pgx.Identifier{schema}.Sanitize()
	if _, err := c.Exec(ctx, dropCounts(q)+"ALTER TABLE "+q+".jobs DROP COLUMN tags, DROP COLUMN incarnation; UPDATE "+q+".schema_version SET version = 8"); err != nil {
		t.Fatal(err)
	}

	s = open(t, schema)
	storetest.CheckMigratedJob(t, s, "c", "j")
	var version int
	if err := c.QueryRow(ctx, "SELECT version FROM "+q+".schema_version").Scan(&version); err != nil || version != postgres.SchemaVersion {
		t.Errorf("schema version after migration = %d, %v; want %d", version, err, postgres.SchemaVersion)
	}
}

// dropCounts returns the statements that take away what migrations 11
// and 12 added to schema q (quoted), with a trailing "; ".
func dropCounts(q string) string {
	return "DROP TABLE " + q + ".limit_permits, " + q + ".limit_rates; DROP TABLE " + q + ".job_counts, " + q + ".job_count_deltas; DROP FUNCTION IF EXISTS " + q + ".job_counts_created, " +
		q + ".job_counts_deleted, " + q + ".job_counts_moved CASCADE; "
}

// schemaForCounts returns a schema (its name, a connection, its quoted
// name) that holds the jobs of storetest.PutJobsForCounts, its store
// closed.
func schemaForCounts(t *testing.T) (string, *pgx.Conn, string) {
	t.Helper()
	schema := newSchema(t)
	s := open(t, schema)
	storetest.PutJobsForCounts(t, s)
	s.Close()
	return schema, connect(t), pgx.Identifier{schema}.Sanitize()
}

// TestMigrateFromVersion13 opens a schema of version 13, whose creates
// are counted by a trigger of migration 11, that holds jobs, and checks
// that Open migrates it, keeps the counts, and counts each create after
// it once.
func TestMigrateFromVersion13(t *testing.T) {
	schema, c, q := schemaForCounts(t)
	// What migration 14 took away, as migration 11 made it.
	if _, err := c.Exec(ctx, `CREATE FUNCTION `+q+`.job_counts_created() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO `+q+`.job_count_deltas (collection, state, n) SELECT collection, state, count(*) FROM created GROUP BY 1, 2;
			RETURN NULL;
		END $$;
		CREATE TRIGGER jobs_count_created AFTER INSERT ON `+q+`.jobs REFERENCING NEW TABLE AS created
			FOR EACH STATEMENT EXECUTE FUNCTION `+q+`.job_counts_created();
		ALTER TABLE `+q+`.jobs DROP COLUMN incarnation;
		UPDATE `+q+`.schema_version SET version = 13`); err != nil {
		t.Fatal(err)
	}
	storetest.CheckCountsAfterMigration(t, open(t, schema))
	var triggers int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_trigger WHERE tgname = 'jobs_count_created' AND tgrelid = $1::regclass", q+".jobs").Scan(&triggers); err != nil || triggers != 0 {
		t.Errorf("after migration: %d triggers jobs_count_created, %v; want none", triggers, err)
	}
}

// TestMigrateJobCounts opens a schema of version 10, from before the job
// counts were kept, that holds jobs of two collections in two states, and
// checks that Open counts them, and that the counts follow the writes
// after it.
func TestMigrateJobCounts(t *testing.T) {
	schema, c, q := schemaForCounts(t)
	if _, err := c.Exec(ctx, dropCounts(q)+"ALTER TABLE "+q+".jobs DROP COLUMN incarnation; UPDATE "+q+".schema_version SET version = 10"); err != nil {
		t.Fatal(err)
	}
	storetest.CheckCountsAfterMigration(t, open(t, schema))
}

// TestMigrateIncarnation opens a schema of version 16, from before the
// store drew job incarnations, and checks that its job has none and is
// told apart by its Created, and that jobs created since have one.
func TestMigrateIncarnation(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	storetest.PutJobFromBefore(t, s)
	s.Close()
	c := connect(t)
	q := pgx.Identifier{schema}.Sanitize()
	if _, err := c.Exec(ctx, "ALTER TABLE "+q+".jobs DROP COLUMN incarnation; UPDATE "+q+".schema_version SET version = 16"); err != nil {
		t.Fatal(err)
	}
	storetest.CheckJobFromBefore(t, open(t, schema))
}

// putDueJob puts collection "c" and its job "j", due at t0.
func putDueJob(t *testing.T, s scheduler.Store) {
	t.Helper()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	j := &scheduler.JobRecord{Collection: "c", Name: "j", Job: &scheduler.Job{}, State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}
	if err := s.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
}
