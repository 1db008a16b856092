package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/postgres"
)

// countStatements is a pgx tracer that keeps the statements that read or
// write the jobs table, sent alone or in a batch, while on is set.
type countStatements struct {
	mu   sync.Mutex
	on   bool
	seen []string
}

func (c *countStatements) saw(sql string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.on && strings.Contains(sql, ".jobs") {
		c.seen = append(c.seen, sql)
	}
}

func (c *countStatements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	c.saw(data.SQL)
	return ctx
}

func (c *countStatements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *countStatements) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (c *countStatements) TraceBatchQuery(_ context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	c.saw(data.SQL)
}

func (c *countStatements) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// extendSetup returns a store with n jobs of collection c, j000 on, all
// claimed by "me" until t0 plus a minute, its pool, its schema, the jobs'
// keys and the tracer of its statements.
func extendSetup(t *testing.T, n int) (*postgres.Store, *pgxpool.Pool, string, []scheduler.JobKey, *countStatements) {
	t.Helper()
	schema := newSchema(t)
	cs := &countStatements{}
	pool := tracedPool(t, cs)
	s, err := postgres.New(ctx, pool, &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c", Definition: scheduler.JobCollection{
		Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: n + 10}}}}); err != nil {
		t.Fatal(err)
	}
	var jobs []scheduler.JobKey
	for i := range n {
		j := &scheduler.JobRecord{Collection: "c", Name: fmt.Sprintf("j%03d", i), Job: &scheduler.Job{},
			State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, scheduler.JobKey{Collection: "c", Name: j.Name})
	}
	if claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), n); err != nil || len(claimed) != n {
		t.Fatalf("ClaimDue = %d jobs, %v; want %d", len(claimed), err, n)
	}
	return s, pool, schema, jobs, cs
}

// statements returns the statements on the jobs table that f runs.
func (c *countStatements) statements(f func()) []string {
	c.mu.Lock()
	c.on, c.seen = true, nil
	c.mu.Unlock()
	f()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.on = false
	return c.seen
}

// TestExtendLeasesOneStatement: ExtendLeases extends many leases in one
// statement; when some are not extended, a second finds out why.
func TestExtendLeasesOneStatement(t *testing.T) {
	const n = 40
	s, _, _, jobs, cs := extendSetup(t, n)
	var errs []error
	seen := cs.statements(func() { errs = s.ExtendLeases(ctx, "me", t0.Add(time.Hour), jobs) })
	if errs != nil {
		t.Fatalf("ExtendLeases = %v; want every lease extended", errs)
	}
	if len(seen) != 1 {
		t.Errorf("ExtendLeases of %d held jobs ran %d statements on the jobs table, want 1:\n%s", len(jobs), len(seen), strings.Join(seen, "\n"))
	}
	jobs = append(jobs, scheduler.JobKey{Collection: "c", Name: "missing"})
	seen = cs.statements(func() { errs = s.ExtendLeases(ctx, "me", t0.Add(time.Hour), jobs) })
	if len(errs) != len(jobs) || errs[0] != nil || errs[n-1] != nil || !errors.Is(errs[n], scheduler.ErrNotFound) {
		t.Fatalf("ExtendLeases = %v; want every lease extended, and the missing job not found", errs)
	}
	if len(seen) != 2 {
		t.Errorf("ExtendLeases of %d jobs, one missing, ran %d statements on the jobs table, want 2:\n%s", len(jobs), len(seen), strings.Join(seen, "\n"))
	}
}

// hostTx begins a transaction of pool that locks job c/name's row, as a
// host's PutJobTx of the job does, until it ends.
func hostTx(t *testing.T, pool *pgxpool.Pool, schema, name string) pgx.Tx {
	t.Helper()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	lockRow(t, tx, schema, name)
	return tx
}

// leasesUntil returns how many jobs of collection c have their leases
// until until.
func leasesUntil(t *testing.T, pool *pgxpool.Pool, schema string, until time.Time) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+schema+".jobs WHERE collection = 'c' AND lease_until = $1", until.UnixNano()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitFor polls cond, failing the test when it is not true within 20s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 400 {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not within 20s", what)
}

// TestExtendLeasesLockedRow: a row that a host's transaction holds (a
// PutJobTx of a running job) holds up its own job's extension only: the
// other leases are extended while it is held, and its own, as ExtendLease
// would, once the transaction ends, or fails with the call's context.
func TestExtendLeasesLockedRow(t *testing.T) {
	s, pool, schema, jobs, _ := extendSetup(t, 40)
	tx := hostTx(t, pool, schema, "j020")
	until := t0.Add(time.Hour)
	done := make(chan []error, 1)
	go func() { done <- s.ExtendLeases(ctx, "me", until, jobs) }()
	waitFor(t, "the 39 leases whose rows are not locked extended", func() bool { return leasesUntil(t, pool, schema, until) == 39 })
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if errs := <-done; errs != nil && slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
		t.Errorf("ExtendLeases with a row locked until the host's transaction committed = %v, want every lease extended", errs)
	}
	if n := leasesUntil(t, pool, schema, until); n != 40 {
		t.Errorf("%d of 40 leases extended, want 40", n)
	}

	// The row is held past the call's context: the call waits for it no
	// longer than half the time its context leaves, and says that the
	// row was locked.
	hostTx(t, pool, schema, "j020")
	until = until.Add(time.Hour)
	c, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	errs := s.ExtendLeases(c, "me", until, jobs)
	if len(errs) != len(jobs) || errs[20] == nil || !strings.Contains(errs[20].Error(), "locked by another transaction") ||
		errors.Is(errs[20], scheduler.ErrLeaseLost) || errors.Is(errs[20], scheduler.ErrNotFound) || c.Err() != nil {
		t.Fatalf("ExtendLeases with a row locked past the call's context = %v (context: %v); want c/j020 not extended for the lock before the context ended", errs, c.Err())
	}
	for i, err := range errs {
		if i != 20 && err != nil {
			t.Errorf("c/%s: %v, want it extended", jobs[i].Name, err)
		}
	}
	if n := leasesUntil(t, pool, schema, until); n != 39 {
		t.Errorf("%d of 40 leases extended, want 39", n)
	}
}

// TestExtendLeasesLockedRowsLeaveConnections: while host transactions
// hold the rows of two running jobs, an ExtendLeases call that waits for
// them holds one of the engine's two connections at a time, so that
// claims and records of other jobs go on meanwhile; the two leases are
// extended once the transactions end.
func TestExtendLeasesLockedRowsLeaveConnections(t *testing.T) {
	s, pool, schema, jobs, _ := extendSetup(t, 4)
	held := []pgx.Tx{hostTx(t, pool, schema, "j000"), hostTx(t, pool, schema, "j001")}
	if err := s.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: "free", Job: &scheduler.Job{},
		State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}); err != nil {
		t.Fatal(err)
	}
	rec, err := s.GetJob(ctx, "c", "j003")
	if err != nil {
		t.Fatal(err)
	}
	until := t0.Add(time.Hour)
	c, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	done := make(chan []error, 1)
	go func() { done <- s.ExtendLeases(c, "me", until, jobs) }()
	waitingForLocks(t, pool, 1)
	if claimed, err := s.ClaimDue(ctx, t0, "other", t0.Add(time.Minute), 10); err != nil || len(claimed) != 1 || claimed[0].Name != "free" {
		t.Errorf("ClaimDue while ExtendLeases waits for two locked rows = %d jobs, %v; want c/free", len(claimed), err)
	}
	if errs := s.RecordBatch(ctx, "me", []scheduler.RecordRequest{{Job: rec, KeepDefinition: true}}); errs != nil && errs[0] != nil {
		t.Errorf("RecordBatch(c/j003) while ExtendLeases waits for two locked rows: %v", errs[0])
	}
	select {
	case errs := <-done:
		t.Fatalf("ExtendLeases returned %v before the claim and the record went on: they waited for its connections", errs)
	default:
	}
	for _, tx := range held {
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	errs := <-done
	if len(errs) != len(jobs) || errs[0] != nil || errs[1] != nil || errs[2] != nil {
		t.Errorf("ExtendLeases once the rows' transactions ended = %v; want c/j000-j002 extended", errs)
	}
}

// waitingForLocks waits until n statements wait for a lock.
func waitingForLocks(t *testing.T, pool *pgxpool.Pool, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d statements waiting for locks", n), func() bool {
		var k int
		pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'").Scan(&k)
		return k >= n
	})
}

// TestExtendLeasesNoDeadlock: two ExtendLeases calls of one owner that
// name the same locked rows in opposite orders, or an ExtendLeases beside
// a RecordBatch of the same jobs, do not deadlock: once the host's
// transaction that holds a row ends, every lease is extended and the
// outcomes recorded.
func TestExtendLeasesNoDeadlock(t *testing.T) {
	for _, with := range []string{"ExtendLeases", "RecordBatch"} {
		t.Run(with, func(t *testing.T) {
			s, pool, schema, jobs, _ := extendSetup(t, 2)
			a, b := jobs[0], jobs[1]
			ra, err := s.GetJob(ctx, a.Collection, a.Name)
			if err != nil {
				t.Fatal(err)
			}
			rb, err := s.GetJob(ctx, b.Collection, b.Name)
			if err != nil {
				t.Fatal(err)
			}
			tx := hostTx(t, pool, schema, a.Name)
			out := make(chan string, 2)
			c, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			extend := func(keys ...scheduler.JobKey) {
				if errs := s.ExtendLeases(c, "me", t0.Add(time.Hour), keys); errs != nil && slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
					out <- fmt.Sprintf("ExtendLeases %v: %v", keys, errs)
					return
				}
				out <- ""
			}
			if with == "RecordBatch" {
				go func() {
					if errs := s.RecordBatch(c, "me", []scheduler.RecordRequest{{Job: ra, KeepDefinition: true}, {Job: rb, KeepDefinition: true}}); errs != nil && slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
						out <- fmt.Sprintf("RecordBatch: %v", errs)
						return
					}
					out <- ""
				}()
			} else {
				go extend(a, b)
			}
			waitingForLocks(t, pool, 1)
			go extend(b, a)
			if with == "RecordBatch" {
				waitingForLocks(t, pool, 2)
			} else {
				// The second call waits for the first's turn at the
				// locked rows (one wait at a time in the Store), not
				// for a lock.
				time.Sleep(100 * time.Millisecond)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if r := <-out; r != "" && (with == "ExtendLeases" || !strings.HasPrefix(r, "ExtendLeases") || strings.Contains(r, "deadlock")) {
					t.Error(r)
				}
			}
		})
	}
}

// TestExtendLeasesChangedMeanwhile: a job taken over or deleted by a
// transaction that held its row while ExtendLeases ran fails as
// ExtendLease's would, naming the lease's holder, or not found.
func TestExtendLeasesChangedMeanwhile(t *testing.T) {
	for _, tc := range []struct {
		change string
		want   error
		holder string
	}{
		{"UPDATE %s.jobs SET lease_owner = 'them' WHERE collection = 'c' AND name = 'j001'", scheduler.ErrLeaseLost, `held by "them"`},
		{"DELETE FROM %s.jobs WHERE collection = 'c' AND name = 'j001'", scheduler.ErrNotFound, ""},
	} {
		s, pool, schema, jobs, _ := extendSetup(t, 3)
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf(tc.change, schema)); err != nil {
			t.Fatal(err)
		}
		done := make(chan []error, 1)
		go func() { done <- s.ExtendLeases(ctx, "me", t0.Add(time.Hour), jobs) }()
		waitingForLocks(t, pool, 1) // the extension of j001 on its own
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		errs := <-done
		if len(errs) != 3 || errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], tc.want) || !strings.Contains(errs[1].Error(), tc.holder) {
			t.Errorf("ExtendLeases while %q: %v; want j001 to fail with %v (%s), the others extended", tc.change[:6], errs, tc.want, tc.holder)
		}
	}
}

// TestExtendLeasesLockedRowsWaitWithinHalf: the waits for rows held by
// other transactions add up to at most half of what the call's context
// left when they began, whatever the number of rows: each row's error
// names how long it waited and the most it could, which is at most what
// the rows before it left of half the context, shared among the rows
// left.
func TestExtendLeasesLockedRowsWaitWithinHalf(t *testing.T) {
	s, pool, schema, jobs, _ := extendSetup(t, 6)
	for _, n := range []string{"j000", "j001", "j002", "j003"} {
		hostTx(t, pool, schema, n)
	}
	const T = 4 * time.Second
	c, cancel := context.WithTimeout(ctx, T)
	defer cancel()
	errs := s.ExtendLeases(c, "me", t0.Add(time.Hour), jobs)
	var spent time.Duration
	for i := range 4 {
		var waited, most string
		if errs[i] != nil {
			_, waited, _ = strings.Cut(errs[i].Error(), "(waited ")
			waited, most, _ = strings.Cut(waited, " of at most ")
			most, _, _ = strings.Cut(most, ")")
		}
		w, err1 := time.ParseDuration(waited)
		m, err2 := time.ParseDuration(most)
		if err1 != nil || err2 != nil || !strings.Contains(errs[i].Error(), "locked by another transaction") {
			t.Fatalf("errs[%d] = %v, want locked, naming how long it waited and the most it could", i, errs[i])
		}
		if share := (T/2 - spent) / time.Duration(4-i); m > share {
			t.Errorf("row %d could wait %v, more than its share (%v) of what the rows before it left of half the context (%v)", i, m, share, T/2)
		}
		spent += w
	}
	for i := 4; i < len(jobs); i++ {
		if errs[i] != nil {
			t.Errorf("errs[%d] = %v, want nil", i, errs[i])
		}
	}
}

// TestExtendLeasesLockedRowWaitsOnceInAll: a row's try is bounded as a
// whole, not each of its waits for a lock: behind a host's transaction
// that holds the row and another transaction queued for it, the
// fallback's update waits first for the queued transaction's lock, then,
// once the host committed and the queued transaction took the row, for
// that one; the statement's bound (its statement_timeout) ends the try,
// where each wait's (its lock_timeout) would let it wait nearly twice.
func TestExtendLeasesLockedRowWaitsOnceInAll(t *testing.T) {
	s, pool, schema, jobs, _ := extendSetup(t, 2)
	h1 := hostTx(t, pool, schema, "j000")
	t2, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer t2.Rollback(ctx)
	locked := make(chan error, 1)
	go func() {
		_, err := t2.Exec(ctx, lockRowSQL(schema), "j000")
		locked <- err
	}()
	waitingForLocks(t, pool, 1)
	// One row, a 4 s context: the try may take 2 s in all.
	const T = 4 * time.Second
	c, cancel := context.WithTimeout(ctx, T)
	defer cancel()
	done := make(chan []error, 1)
	go func() { done <- s.ExtendLeases(c, "me", t0.Add(time.Hour), jobs[:1]) }()
	waitingForLocks(t, pool, 2)
	time.Sleep(time.Second) // then the first wait ends, well before a bound of its own
	if err := h1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-locked; err != nil {
		t.Fatal(err)
	}
	errs := <-done
	var pe *pgconn.PgError
	if !errors.As(errs[0], &pe) || pe.Code != "57014" || !strings.Contains(errs[0].Error(), "locked by another transaction") {
		t.Errorf("ExtendLeases of a row held by a host, then by the transaction queued before it = %v, want locked, ended by the statement's bound (57014)", errs[0])
	}
}

// TestExtendLeasesCallsShareOneConnection: the waits for locked rows of
// all ExtendLeases calls of a Store take one of the engine's connections
// in all, so that two calls under way at once, as the lease keeper makes
// them, each waiting for a row that a host's transaction holds, leave a
// connection to claims.
func TestExtendLeasesCallsShareOneConnection(t *testing.T) {
	s, pool, schema, jobs, _ := extendSetup(t, 4)
	held := []pgx.Tx{hostTx(t, pool, schema, "j000"), hostTx(t, pool, schema, "j001")}
	if err := s.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: "free", Job: &scheduler.Job{},
		State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}); err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	done := make(chan []error, 2)
	go func() { done <- s.ExtendLeases(c, "me", t0.Add(time.Hour), []scheduler.JobKey{jobs[0], jobs[2]}) }()
	go func() { done <- s.ExtendLeases(c, "me", t0.Add(time.Hour), []scheduler.JobKey{jobs[1], jobs[3]}) }()
	waitingForLocks(t, pool, 1)
	time.Sleep(200 * time.Millisecond) // for the other call to reach its wait
	cc, ccancel := context.WithTimeout(ctx, 10*time.Second)
	defer ccancel()
	if claimed, err := s.ClaimDue(cc, t0, "other", t0.Add(time.Minute), 10); err != nil || len(claimed) != 1 || claimed[0].Name != "free" {
		t.Errorf("ClaimDue while two ExtendLeases calls wait for locked rows = %d jobs, %v; want c/free", len(claimed), err)
	}
	for _, tx := range held {
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		for i, err := range <-done {
			if err != nil {
				t.Errorf("ExtendLeases once the rows' transactions ended: errs[%d] = %v", i, err)
			}
		}
	}
}
