package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/postgres"
)

// TestClaimExpiredLeaseOrder: a job whose lease expired is ready at its
// lease end, after jobs due later than it but before that end, so a claim
// that meets it first in due order must still return those jobs first.
func TestClaimExpiredLeaseOrder(t *testing.T) {
	s := open(t, newSchema(t))
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	for i, n := range []string{"a", "b", "c", "d", "e"} {
		j := &scheduler.JobRecord{Collection: "c", Name: n, Job: &scheduler.Job{}, State: scheduler.JobEnabled,
			Schedule: scheduler.JobSchedule{DueAt: t0.Add(time.Duration(i) * 10 * time.Second)}}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(now time.Time, owner string, limit int) (names, prev []string) {
		t.Helper()
		got, err := s.ClaimDue(ctx, now, owner, now.Add(time.Hour), limit)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range got {
			names, prev = append(names, j.Name), append(prev, j.PreviousLeaseOwner)
		}
		return names, prev
	}
	// a's lease ends at t0+50s.
	if got, err := s.ClaimDue(ctx, t0, "old", t0.Add(50*time.Second), 1); err != nil || len(got) != 1 || got[0].Name != "a" {
		t.Fatalf("first claim = %v, %v; want a", got, err)
	}
	now := t0.Add(time.Minute)
	if names, _ := claim(now, "new", 2); !slices.Equal(names, []string{"b", "c"}) {
		t.Errorf("claim of 2 at t0+1m = %v, want b and c (ready at +10s, +20s), not a (ready at +50s)", names)
	}
	names, prev := claim(now, "new", 3)
	if !slices.Equal(names, []string{"d", "e", "a"}) || !slices.Equal(prev, []string{"", "", "old"}) {
		t.Errorf("claim of 3 at t0+1m = %v, previous owners %q; want d, e, a, previous owner of a only \"old\"", names, prev)
	}
	if names, _ := claim(now, "new", 3); len(names) != 0 {
		t.Errorf("claim with every job leased = %v, want none", names)
	}
}

// TestClaimDefinitions: the jobs of one claim get their own definitions,
// decoded once per text: equal definitions are equal, different ones
// stay apart, whatever the order they come in.
func TestClaimDefinitions(t *testing.T) {
	s := open(t, newSchema(t))
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	defs := map[string]*scheduler.Job{}
	for i := range 9 {
		name := fmt.Sprintf("j%d", i)
		uri := fmt.Sprintf("http://127.0.0.1/%d", i%3) // three definitions, interleaved
		defs[name] = &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: uri, Method: "GET",
			Headers: map[string]string{"x-job": uri}}}}
		if i == 8 {
			defs[name] = nil // no definition
		}
		j := &scheduler.JobRecord{Collection: "c", Name: name, Job: defs[name], State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 10)
	if err != nil || len(got) != 9 {
		t.Fatalf("ClaimDue = %d jobs, %v; want 9", len(got), err)
	}
	for _, j := range got {
		if diff := cmp.Diff(defs[j.Name], j.Job); diff != "" {
			t.Errorf("definition of claimed %s (-put +claimed):\n%s", j.Name, diff)
		}
	}
}

// TestClaimPlan: ClaimDue runs the claim's generic plan (planned once per
// connection, not for each claim's values), and that plan reads the due
// jobs in jobs_due order and finds each claimed job by its key, whatever
// the table's size, as the plan for given values does.
func TestClaimPlan(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	conn, q := bigCollection(t, s, schema, 20_000, base, time.Nanosecond)
	if _, err := conn.Exec(ctx, "ANALYZE "+q+".jobs"); err != nil {
		t.Fatal(err)
	}
	plan, err := s.ExplainClaim(ctx, base.Add(time.Hour).UnixNano(), base.Add(2*time.Hour).UnixNano(), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Index Scan using jobs_due on jobs",
		"Index Cond: (due_at <= $5)", // a parameter (the due horizon): the generic plan
		"Nested Loop",
		"Index Scan using jobs_pkey on jobs j",
		`Index Cond: ((collection = "*SELECT* 1".collection) AND (name = "*SELECT* 1".name))`,
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("the claim's plan has no %q:\n%s", want, plan)
		}
	}
	for _, bad := range []string{"Seq Scan", "Merge Join", "Hash Join", "Bitmap"} {
		if strings.Contains(plan, bad) {
			t.Errorf("the claim's plan has a %s:\n%s", bad, plan)
		}
	}
	// The claim itself, through that plan.
	got, err := s.ClaimDue(ctx, base.Add(time.Minute), "o", base.Add(time.Hour), 100)
	if err != nil || len(got) != 100 || got[0].Name != "j0000000" || got[99].Name != "j0000099" {
		t.Fatalf("ClaimDue = %d jobs, %v; want j0000000 to j0000099", len(got), err)
	}
}

// bigCollection puts collection big into s, whose schema is schema, and
// writes n jobs into it straight into the table, job j0000000 due at
// first and each next one step later; it returns a connection to the
// database and the schema's quoted name.
func bigCollection(t *testing.T, s scheduler.Store, schema string, n int, first time.Time, step time.Duration) (*pgx.Conn, string) {
	t.Helper()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "big"}); err != nil {
		t.Fatal(err)
	}
	conn := connect(t)
	q := pgx.Identifier{schema}.Sanitize()
	if _, err := conn.Exec(ctx, `INSERT INTO `+q+`.jobs (collection, name, definition, state, status, schedule, etag, version, due_at, lease_owner, coll_enabled, slot)
		SELECT 'big', 'j' || lpad(i::text, 7, '0'), 'null', 'Enabled', '{}', '{}', 'e', 1, $2::bigint + i * $3::bigint, '', true, i
		FROM generate_series(0, $1 - 1) AS i`, n, first.UnixNano(), int64(step)); err != nil {
		t.Fatal(err)
	}
	return conn, q
}

// TestNextDueManyAtOneInstant: NextDue reads the leased jobs due before
// the first job without a lease, not the 20,000 due at the same instant
// as it (a million of them made every NextDue read the whole table), and
// still returns the lease end of a leased job due earlier when that comes
// first.
func TestNextDueManyAtOneInstant(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	conn, q := bigCollection(t, s, schema, 20_000, at, 0)
	// Two of them leased: one due at the instant, its lease ending after
	// it; one due an hour earlier, its lease ending half an hour before.
	lease := func(name string, due, until time.Time) {
		t.Helper()
		if _, err := conn.Exec(ctx, `UPDATE `+q+`.jobs SET due_at = $2, lease_owner = 'o', lease_until = $3 WHERE collection = 'big' AND name = $1`,
			name, due.UnixNano(), until.UnixNano()); err != nil {
			t.Fatal(err)
		}
	}
	lease("j0000001", at, at.Add(time.Hour))
	if _, err := conn.Exec(ctx, "ANALYZE "+q+".jobs"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.NextDue(ctx); err != nil || !got.Equal(at) {
		t.Errorf("NextDue = %v, %v; want %v", got, err, at)
	}
	plan, err := s.ExplainNextDue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(plan) {
		var n int
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "Rows Removed by Filter: %d", &n); err == nil && n > 10 {
			t.Errorf("NextDue's plan reads %d jobs it does not need:\n%s", n, plan)
		}
	}
	lease("j0000002", at.Add(-time.Hour), at.Add(-30*time.Minute))
	if got, err := s.NextDue(ctx); err != nil || !got.Equal(at.Add(-30*time.Minute)) {
		t.Errorf("NextDue with a lease ending at %v = %v, %v; want that lease end", at.Add(-30*time.Minute), got, err)
	}
}

// TestGiveBackRowLocked: GiveBack does not wait for the lock on a job's
// row that another transaction holds for longer than a short lock
// timeout: the scheduler starts nothing while it gives claims back. None
// of the claims is given back then, and the lease stays the claim's. A
// caller whose context has no deadline is bounded too.
func TestGiveBackRowLocked(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	claims := claimedJobs(t, s, "a", "b")
	// Another transaction holds b's row, as a write to b would.
	tx, err := hostPool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	lockRow(t, tx, schema, "b")
	// Locked for longer than the caller waits: the give-back ends with
	// the caller's context, not with PostgreSQL's wait for the row.
	wait, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	began := time.Now()
	errs := s.GiveBack(wait, "x", claims)
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("GiveBack with b's row locked took %v, want it to end with its 500ms context", took)
	}
	if len(errs) != 2 {
		t.Fatalf("GiveBack of 2 = %d errors, want 2", len(errs))
	}
	for i, err := range errs {
		if err == nil {
			t.Errorf("GiveBack(%s) with b's row locked throughout = nil, want an error", claims[i].Name)
		}
	}
	noneGivenBack(t, s, claims, errs)
	// A caller without a deadline: GiveBack bounds itself all the same
	// (see Store.GiveBack), and fails as above.
	done := make(chan []error, 1)
	go func() { done <- s.GiveBack(context.Background(), "x", claims) }()
	select {
	case errs = <-done:
	case <-time.After(time.Minute): // a second, on a machine however loaded
		t.Fatal("GiveBack without a deadline, with b's row locked throughout, has not returned after a minute")
	}
	if len(errs) != 2 {
		t.Fatalf("GiveBack of 2 without a deadline = %d errors, want 2", len(errs))
	}
	noneGivenBack(t, s, claims, errs)
	// A caller that waits less than two lock timeouts: the last wait for
	// the row ends before its context does, so the give-back fails with
	// the lock's error (55P03, lock_not_available) rather than having its
	// statement cancelled by the context. b's wait is half of what is left
	// when its statement starts, however long the statements before it
	// took.
	errs = giveBackLoaded(t, func() []error {
		short, cancelShort := context.WithTimeout(ctx, 180*time.Millisecond)
		defer cancelShort()
		return s.GiveBack(short, "x", claims)
	})
	for i, err := range errs {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "55P03" {
			t.Errorf("GiveBack(%s) with b's row locked and 180ms to wait = %v, want lock_not_available (55P03)", claims[i].Name, err)
		}
	}
	namesOwnJob(t, claims, errs)
	// Locked for a moment, as another instance's claim holds its rows:
	// the give-back waits it out (one lock timeout is not the end), with
	// a deadline and without one.
	wait2, cancel2 := context.WithTimeout(ctx, 10*time.Second)
	defer cancel2()
	giveBackLockedAWhile(t, s, wait2, "a 10s deadline", tx, claims)
	claims = claim(t, s, "a", "b")
	tx2, err := hostPool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx2.Rollback(ctx)
	lockRow(t, tx2, schema, "b")
	giveBackLockedAWhile(t, s, context.Background(), "no deadline", tx2, claims)
}

// giveBackLockedAWhile gives back claims on s with ctx (its deadline
// described by what) while tx, which locks a row of theirs, ends 300ms
// later, and checks that all of them are given back.
func giveBackLockedAWhile(t *testing.T, s *postgres.Store, ctx context.Context, what string, tx pgx.Tx, claims []*scheduler.JobRecord) {
	t.Helper()
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(300 * time.Millisecond)
		tx.Rollback(context.Background())
	}()
	errs := s.GiveBack(ctx, "x", claims)
	<-released
	for i, err := range errs {
		if err != nil {
			t.Errorf("GiveBack(%s) with %s and a row locked for 300ms = %v, want nil", claims[i].Name, what, err)
		}
	}
	for _, c := range claims {
		if r, err := s.GetJob(context.Background(), "c", c.Name); err != nil || r.LeaseOwner != "" {
			t.Errorf("after the GiveBack with %s, %s's lease owner %q, %v; want none", what, c.Name, r.LeaseOwner, err)
		}
	}
}

// TestGiveBackManyWithoutDeadline: a GiveBack without a deadline whose
// one try takes longer than the second it tries again for (each of 48
// claims' statements sleeps 25ms in a trigger, as round trips to a far
// server would take) gives every claim back: the bound of a call without
// a deadline stops the tries, not the work.
func TestGiveBackManyWithoutDeadline(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	names := make([]string, 48)
	for i := range names {
		names[i] = fmt.Sprintf("j%03d", i)
	}
	claims := claimedJobs(t, s, names...)
	q := pgx.Identifier{schema}.Sanitize()
	host := hostPool(t)
	hostExec(t, host,
		"CREATE FUNCTION "+q+".slow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.025); RETURN NEW; END $$",
		"CREATE TRIGGER slow BEFORE UPDATE ON "+q+".jobs FOR EACH ROW EXECUTE FUNCTION "+q+".slow()",
	)
	for i, err := range s.GiveBack(context.Background(), "x", claims) {
		if err != nil {
			t.Errorf("GiveBack(%s) of 48 slow ones without a deadline = %v, want nil", claims[i].Name, err)
		}
	}
}

// TestGiveBackPausesBetweenTries: GiveBack pauses before it tries again
// after a try failed on a timeout, so a connection's statement_timeout
// of 5ms, which fails a try at once while a row is locked, does not turn
// its tries into a tight loop. A trigger counts the tries in a sequence
// (which a rollback does not undo) as a, the first job, is given back;
// b's row is locked throughout. Within a second, pauses from 10ms
// doubling to 100ms leave room for 15 tries at most, however fast the
// machine.
func TestGiveBackPausesBetweenTries(t *testing.T) {
	schema := newSchema(t)
	s, timeout := openTimed(t, schema)
	claims := claimedJobs(t, s, "a", "b")
	q := pgx.Identifier{schema}.Sanitize()
	host := hostPool(t)
	hostExec(t, host,
		"CREATE SEQUENCE "+q+".tries",
		"CREATE FUNCTION "+q+".count() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM nextval('"+schema+
			".tries'); RETURN NEW; END $$",
		"CREATE TRIGGER count BEFORE UPDATE ON "+q+".jobs FOR EACH ROW WHEN (OLD.name = 'a') EXECUTE FUNCTION "+q+".count()",
	)
	tx, err := host.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	lockRow(t, tx, schema, "b")
	timeout(5)
	wait, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	errs := s.GiveBack(wait, "x", claims)
	timeout(0)
	noneGivenBack(t, s, claims, errs)
	var tries int64
	if err := host.QueryRow(ctx, "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM "+q+".tries").Scan(&tries); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d tries in a second", tries)
	if tries > 20 {
		t.Errorf("GiveBack with a statement_timeout of 5ms and b's row locked for a second tried %d times, want 20 at most", tries)
	}
}

// TestGiveBackKeepsSmallerStatementTimeout: a statement_timeout of the
// connection's smaller than the one GiveBack sets for its statements
// stays in force inside the give-back's transaction. A trigger notes the
// statement_timeout in force as each job is given back.
func TestGiveBackKeepsSmallerStatementTimeout(t *testing.T) {
	schema := newSchema(t)
	s, timeout := openTimed(t, schema)
	claims := claimedJobs(t, s, "a", "b")
	// The store's connections get a statement_timeout of 120ms: less
	// than the 125ms GiveBack sets with a second or more to go.
	timeout(120)
	q := pgx.Identifier{schema}.Sanitize()
	host := hostPool(t)
	hostExec(t, host,
		"CREATE TABLE "+q+".seen (statement_timeout text)",
		"CREATE FUNCTION "+q+".note() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO "+q+
			".seen VALUES (current_setting('statement_timeout')); RETURN NEW; END $$",
		"CREATE TRIGGER note BEFORE UPDATE ON "+q+".jobs FOR EACH ROW EXECUTE FUNCTION "+q+".note()",
	)
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for i, err := range s.GiveBack(wait, "x", claims) {
		if err != nil {
			t.Errorf("GiveBack(%s) = %v, want nil", claims[i].Name, err)
		}
	}
	rows, err := host.Query(ctx, "SELECT statement_timeout FROM "+q+".seen")
	if err != nil {
		t.Fatal(err)
	}
	seen, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0] != "120ms" || seen[1] != "120ms" {
		t.Errorf("statement_timeout as each job was given back: %v, want 120ms twice (the connection's)", seen)
	}
}

// claimedJobs puts jobs of names in collection c of s, due at t0, and
// returns them as claimed by owner x, in the order of names.
func claimedJobs(t *testing.T, s *postgres.Store, names ...string) []*scheduler.JobRecord {
	t.Helper()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		j := &scheduler.JobRecord{Collection: "c", Name: n, Job: &scheduler.Job{}, State: scheduler.JobEnabled,
			Schedule: scheduler.JobSchedule{DueAt: t0}}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	return claim(t, s, names...)
}

// claim claims the jobs of names in collection c of s, due at t0 and not
// leased, for owner x, and returns them in the order of names.
func claim(t *testing.T, s *postgres.Store, names ...string) []*scheduler.JobRecord {
	t.Helper()
	claims, err := s.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: t0, DueBy: t0, Owner: "x", LeaseUntil: t0.Add(time.Minute), Limit: len(names)})
	if err != nil || len(claims) != len(names) {
		t.Fatalf("ClaimDueBy = %d jobs, %v; want %d", len(claims), err, len(names))
	}
	slices.SortFunc(claims, func(a, b *scheduler.JobRecord) int {
		return slices.Index(names, a.Name) - slices.Index(names, b.Name)
	})
	return claims
}

// openTimed opens a store in schema over a pool of its own, and returns
// it with timeout, which gives the pool's connections from then on a
// statement_timeout of ms milliseconds. What runs before, Open's own
// statements (it creates the schema) and a test's setup through the
// store, runs without it, as it would otherwise fail on a loaded machine.
// The store's work shares that pool.
func openTimed(t *testing.T, schema string) (s *postgres.Store, timeout func(ms int)) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	var timed atomic.Int64 // ms, 0 before timeout
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		ms := timed.Load()
		if ms == 0 {
			return nil
		}
		_, err := c.Exec(ctx, "SET statement_timeout = "+strconv.FormatInt(ms, 10))
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err = postgres.New(ctx, pool, &postgres.Options{Schema: schema, EngineConns: -1})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, func(ms int) {
		timed.Store(int64(ms))
		pool.Reset() // the connections used so far end; new ones are timed
	}
}

// lockRowSQL locks the row of job $1 of collection c in schema, as a
// write to the job would.
func lockRowSQL(schema string) string {
	return "SELECT 1 FROM " + pgx.Identifier{schema, "jobs"}.Sanitize() + " WHERE collection = 'c' AND name = $1 FOR UPDATE"
}

// lockRow locks the row of job name of collection c in schema in tx.
func lockRow(t *testing.T, tx pgx.Tx, schema, name string) {
	t.Helper()
	if _, err := tx.Exec(ctx, lockRowSQL(schema), name); err != nil {
		t.Fatal(err)
	}
}

// giveBackLoaded calls giveBack, a GiveBack with a short deadline, until
// it ends otherwise than with that deadline (a statement cancelled, or
// never sent), three times at most, and returns its errors. On a loaded
// machine a round trip to PostgreSQL can take much of a short deadline,
// whatever GiveBack bounds its waits for locks by; a GiveBack that waits
// for locks past its deadline does so every time.
func giveBackLoaded(t *testing.T, giveBack func() []error) []error {
	t.Helper()
	for try := 1; ; try++ {
		errs := giveBack()
		if try == 3 || !slices.ContainsFunc(errs, func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }) {
			return errs
		}
		t.Logf("try %d of GiveBack ran out of time (a loaded machine?): %v", try, errs)
	}
}

// namesOwnJob checks that each of errs, the errors of a GiveBack of
// claims, names its own claim's job first.
func namesOwnJob(t *testing.T, claims []*scheduler.JobRecord, errs []error) {
	t.Helper()
	for i, err := range errs {
		if want := fmt.Sprintf("store/postgres: give back job %q", claims[i].ID()); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("GiveBack(%s) = %v, want an error that begins %s", claims[i].Name, err, want)
		}
	}
}

// noneGivenBack checks that errs, the errors of a GiveBack of claims
// whose transaction failed, each name their own job (see namesOwnJob), and
// that every one of claims is still leased to x, as it was claimed.
func noneGivenBack(t *testing.T, s *postgres.Store, claims []*scheduler.JobRecord, errs []error) {
	t.Helper()
	namesOwnJob(t, claims, errs)
	for _, c := range claims {
		if r, err := s.GetJob(ctx, "c", c.Name); err != nil || r.LeaseOwner != "x" {
			t.Errorf("after a GiveBack that failed, %s's lease owner %q, %v; want x (nothing given back)", c.Name, r.LeaseOwner, err)
		}
	}
}

// TestGiveBackLastTryBounded: the waits for locks of GiveBack's last try
// are bounded as a whole, not one by one. Of three rows, a is locked for
// 60ms, b for 120ms and c throughout; with 180ms to wait, the one try
// (less than two lock timeouts left) must fail with the lock's error
// before its context ends: waits of half the time left at its start each
// (90ms) would add up to 210ms, and the context would cancel c's
// statement.
func TestGiveBackLastTryBounded(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	names := []string{"a", "b", "c"}
	claims := claimedJobs(t, s, names...)
	pool := hostPool(t)
	errs := giveBackLoaded(t, func() []error {
		var locks []pgx.Tx
		for _, n := range names {
			tx, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			lockRow(t, tx, schema, n)
			locks = append(locks, tx)
		}
		budget, cancel := context.WithTimeout(ctx, 180*time.Millisecond)
		defer cancel()
		var released sync.WaitGroup
		defer released.Wait()
		for i, d := range []time.Duration{60 * time.Millisecond, 120 * time.Millisecond} {
			released.Go(func() {
				time.Sleep(d)
				locks[i].Rollback(ctx)
			})
		}
		return s.GiveBack(budget, "x", claims)
	})
	for i, err := range errs {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "55P03" {
			t.Errorf("GiveBack(%s) with a, b and c locked for 60ms, 120ms and throughout, and 180ms to wait = %v, want lock_not_available (55P03)",
				claims[i].Name, err)
		}
	}
	noneGivenBack(t, s, claims, errs)
}

// TestGiveBackQueuedWaiter: PostgreSQL bounds each wait for a lock, not a
// statement's waits together, and a statement that finds another
// transaction queued first for a row waits twice: for the row's holder,
// then for that transaction. With 190ms to wait (one try, the last), a is
// locked for 30ms and b by a transaction that ends at 108ms, with another
// queued for b before the give-back that then keeps it. Waits bounded per
// lock would end b's statement at about 108ms plus half of what was left
// when it started (the bound set at a, 95ms, is not set again at b): past
// the deadline, which would cancel the statement and its connection. The
// statement's own bound fails it first, with the statement timeout's
// error (57014, query_canceled), rolled back.
func TestGiveBackQueuedWaiter(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	claims := claimedJobs(t, s, "a", "b")
	pool := hostPool(t)
	errs := giveBackLoaded(t, func() []error {
		var txs []pgx.Tx // holdA, holdB, queued
		var released, queuedDone sync.WaitGroup
		defer func() { // each try's locks end with it
			released.Wait()
			for i, tx := range txs {
				if i == 2 {
					queuedDone.Wait() // it ends once holdB has
				}
				tx.Rollback(ctx)
			}
		}()
		// A try whose statement its deadline cancelled closed its
		// connection: a give-back of nothing opens another before the
		// clock starts.
		s.GiveBack(ctx, "x", nil)
		for range 3 {
			tx, err := pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			txs = append(txs, tx)
		}
		holdA, holdB, queued := txs[0], txs[1], txs[2]
		lockRow(t, holdA, schema, "a")
		lockRow(t, holdB, schema, "b")
		// queued waits for b's row before the give-back does, and keeps
		// it once holdB ends.
		var pid uint32
		if err := queued.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		queuedDone.Go(func() {
			if _, err := queued.Exec(ctx, lockRowSQL(schema), "b"); err != nil {
				t.Errorf("the transaction queued for b's row: %v", err)
			}
		})
		for waiting := false; !waiting; {
			if err := pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted)", pid).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
		}
		budget, cancel := context.WithTimeout(ctx, 190*time.Millisecond)
		defer cancel()
		for _, l := range []struct {
			tx pgx.Tx
			d  time.Duration
		}{{holdA, 30 * time.Millisecond}, {holdB, 108 * time.Millisecond}} {
			released.Go(func() {
				time.Sleep(l.d)
				l.tx.Rollback(ctx)
			})
		}
		return s.GiveBack(budget, "x", claims)
	})
	for i, err := range errs {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "55P03" && pe.Code != "57014" || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("GiveBack(%s) with a locked for 30ms, b for 108ms then by a transaction queued first, and 190ms to wait = %v, "+
				"want lock_not_available (55P03) or query_canceled (57014) before the deadline", claims[i].Name, err)
		}
	}
	noneGivenBack(t, s, claims, errs)
}

// TestGiveBackFailedKeepsLostClaims: when the transaction of a GiveBack
// fails at a claim (its job's row locked throughout), the claims before it
// that found their job deleted or their lease lost keep ErrNotFound and
// ErrLeaseLost (a rollback does not bring either back), and a claim after
// it, whose statement never ran, says so and names the job it failed at.
func TestGiveBackFailedKeepsLostClaims(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	claims := claimedJobs(t, s, "a", "b", "c", "d")
	if err := s.DeleteJob(ctx, "c", "a", ""); err != nil {
		t.Fatal(err)
	}
	if errs := s.GiveBack(ctx, "x", claims[1:2]); errs[0] != nil {
		t.Fatal(errs[0])
	}
	tx, err := hostPool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	lockRow(t, tx, schema, "c")
	errs := giveBackLoaded(t, func() []error {
		short, cancel := context.WithTimeout(ctx, 180*time.Millisecond)
		defer cancel()
		return s.GiveBack(short, "x", claims)
	})
	if !errors.Is(errs[0], scheduler.ErrNotFound) {
		t.Errorf("GiveBack(a), deleted, = %v, want ErrNotFound", errs[0])
	}
	if !errors.Is(errs[1], scheduler.ErrLeaseLost) {
		t.Errorf("GiveBack(b), given back before, = %v, want ErrLeaseLost", errs[1])
	}
	var pe *pgconn.PgError
	if !errors.As(errs[2], &pe) || pe.Code != "55P03" {
		t.Errorf("GiveBack(c) with c's row locked throughout = %v, want lock_not_available (55P03)", errs[2])
	}
	namesOwnJob(t, claims[2:], errs[2:])
	if want := `not given back: the transaction failed at job "c/c"`; errs[3] == nil || !strings.Contains(errs[3].Error(), want) || !errors.As(errs[3], &pe) {
		t.Errorf("GiveBack(d), after c = %v, want an error that says %s and wraps c's", errs[3], want)
	}
}

// TestRecordBatchPlan: the plan of RecordBatch's statement, as
// RecordBatch runs it, looks each job of a batch up by its key, whatever
// the table's size and whether it has statistics yet. The case of 1,000
// jobs analysed while none was leased is the one that catches missing
// settings: the plan for a batch's values then reads the whole primary key
// of jobs, filtered by the lease owner, once for the batch, and joins it to
// the batch's rows (its cost grows with the size of the table times that of
// the batch). The generic plan, which RecordBatch runs, looks the jobs up
// in all these cases; without the other settings of indexScansSQL it too
// reads every job of a table of 1,000.
func TestRecordBatchPlan(t *testing.T) {
	for _, tt := range []struct {
		name    string
		jobs    int
		analyze bool
	}{
		{"20000 jobs", 20_000, true},
		{"20000 jobs, no statistics", 20_000, false},
		{"1000 jobs", 1_000, true},
		{"1000 jobs, no statistics", 1_000, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			schema := newSchema(t)
			s := open(t, schema)
			// Autovacuum analyses the table only when a case does.
			if _, err := connect(t).Exec(ctx, "ALTER TABLE "+pgx.Identifier{schema}.Sanitize()+".jobs SET (autovacuum_enabled = off)"); err != nil {
				t.Fatal(err)
			}
			base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			conn, q := bigCollection(t, s, schema, tt.jobs, base, time.Nanosecond)
			if tt.analyze {
				if _, err := conn.Exec(ctx, "ANALYZE "+q+".jobs"); err != nil {
					t.Fatal(err)
				}
			}
			claimed, err := s.ClaimDue(ctx, base.Add(time.Minute), "o", base.Add(time.Hour), 50)
			if err != nil || len(claimed) != 50 {
				t.Fatalf("ClaimDue = %d jobs, %v; want 50", len(claimed), err)
			}
			batch := make([]scheduler.RecordRequest, len(claimed))
			for i, j := range claimed {
				j.State = scheduler.JobCompleted
				j.Schedule.DueAt = time.Time{}
				batch[i] = scheduler.RecordRequest{Job: j, History: []scheduler.HistoryEntry{{Collection: "big", Job: j.Name, ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, StartTime: base, EndTime: base}}}
			}
			plan, err := s.ExplainRecordBatch(ctx, "o", batch)
			if err != nil {
				t.Fatal(err)
			}
			var explained []struct{ Plan planNode }
			if err := json.Unmarshal([]byte(plan), &explained); err != nil || len(explained) != 1 {
				t.Fatalf("EXPLAIN (FORMAT JSON) = %s, %v; want one plan", plan, err)
			}
			var reads int
			var check func(n planNode)
			check = func(n planNode) {
				if n.Relation == "jobs" && n.Type != "ModifyTable" {
					reads++
					if !strings.HasPrefix(n.Type, "Index") || n.Index != "jobs_pkey" ||
						!strings.Contains(n.IndexCond, "(collection = ") || !strings.Contains(n.IndexCond, "(name = ") {
						t.Errorf("jobs %s is read by %s (index %q, Index Cond %q), not looked up by its key:\n%s", n.Alias, n.Type, n.Index, n.IndexCond, plan)
					}
				}
				for _, c := range n.Plans {
					check(c)
				}
			}
			check(explained[0].Plan)
			if reads == 0 {
				t.Errorf("the plan reads no jobs:\n%s", plan)
			}
		})
	}
}

// planNode is a node of a plan that EXPLAIN (FORMAT JSON) returns.
type planNode struct {
	Type      string     `json:"Node Type"`
	Relation  string     `json:"Relation Name"`
	Alias     string     `json:"Alias"`
	Index     string     `json:"Index Name"`
	IndexCond string     `json:"Index Cond"`
	Plans     []planNode `json:"Plans"`
}

// hostExec runs the statements on host, one after the other, and fails
// the test at the first error.
func hostExec(t *testing.T, host *pgxpool.Pool, stmts ...string) {
	t.Helper()
	for _, stmt := range stmts {
		if _, err := host.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
}
