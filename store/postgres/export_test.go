package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	scheduler "github.com/jobclock/scheduler"
)

// SetHook sets the function run before each step of a multi-statement
// transaction.
func (s *Store) SetHook(h func(ctx context.Context, tx pgx.Tx, step string)) { s.hook = h }

// ExplainClaim returns the plan of the claim statement as ClaimDue runs
// it: prepared, after claimPlanSQL in its transaction.
func (s *Store) ExplainClaim(ctx context.Context, now, leaseUntil int64, limit int) (string, error) {
	lines, err := s.explainPrepared(ctx, claimPlanSQL, "PREPARE explained_claim (bigint, integer, text, bigint, bigint) AS "+s.sql(claimSQL),
		fmt.Sprintf("EXPLAIN EXECUTE explained_claim (%d, %d, 'o', %d, %d)", now, limit, leaseUntil, now))
	return strings.Join(lines, "\n"), err
}

// explainPrepared returns the rows of explain, run in a transaction
// after settings and prepare (which prepares the statement explained), on
// a connection taken out of the store's pool and closed at the end: a
// statement prepared in a transaction outlives its rollback, but not its
// connection, so none is left behind in the pool, whether explain
// succeeds or not.
func (s *Store) explainPrepared(ctx context.Context, settings, prepare, explain string, args ...any) ([]string, error) {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	conn := c.Hijack()
	defer conn.Close(context.Background())
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, settings); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, prepare); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, explain, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// VacuumAfter is how many folded changes make a fold vacuum
// job_count_deltas.
const VacuumAfter = vacuumAfter

// VacuumSoon is how many changes earlier folds deleted that make the
// next fold vacuum job_count_deltas.
const VacuumSoon = vacuumSoon

// VacuumRetry is how long after a vacuum still owed the next fold tries
// again.
const VacuumRetry = vacuumRetry

// WaitVacuum waits for the vacuum of job_count_deltas that a fold
// started, if one runs.
func (s *Store) WaitVacuum() { s.vacuums.Wait() }

// VacuumDue returns when the next fold vacuums job_count_deltas again
// while a vacuum is owed, and the zero time when none is.
func (s *Store) VacuumDue() time.Time {
	if n := s.vacuumOwed.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// MayVacuum reports whether the store's role may vacuum job_count_deltas.
func (s *Store) MayVacuum(ctx context.Context) bool { return s.mayVacuum(ctx) }

// ExplainNextDue returns the plan of NextDue's statement as NextDue runs
// it (after indexScansSQL), executed: EXPLAIN ANALYZE.
func (s *Store) ExplainNextDue(ctx context.Context) (string, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, indexScansSQL); err != nil {
		return "", err
	}
	rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, TIMING OFF) "+s.sql(nextDueSQL))
	if err != nil {
		return "", err
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return strings.Join(lines, "\n"), err
}

// OwnTables are the tables an upgrade locks, in the order it locks them.
var OwnTables = ownTables

// Column returns v in the form the record statements pass their arrays.
func Column[T pgtype.Text | pgtype.Int8 | pgtype.Int4 | pgtype.Bool](v ...T) any {
	return &column[T]{v: v}
}

// Creates returns how many groups of single creates into collection run,
// and how many creates wait for one.
func (s *Store) Creates(collection string) (running, waiting int) {
	g := s.creating(collection).g
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running, len(g.waiting)
}

// CreatesHeld returns for how many creates into collection a group's
// place is held, 0 when none is.
func (s *Store) CreatesHeld(collection string) int {
	g := s.creating(collection).g
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gather
}

// Groupers returns how many collections have a grouper of creates.
func (s *Store) Groupers() int {
	n := 0
	s.creates.Range(func(any, any) bool { n++; return true })
	return n
}

// SetCreatesWait makes d how long a create into collection waits for a
// group of creates to run in (see groupWait).
func (s *Store) SetCreatesWait(collection string, d time.Duration) {
	g := s.creating(collection).g
	g.mu.Lock()
	defer g.mu.Unlock()
	g.maxWait = d
}

// ExplainRecordBatch returns the plan, in JSON, of the statement that
// RecordBatch runs for batch, as RecordBatch runs it: prepared, after
// indexScansSQL in its transaction.
func (s *Store) ExplainRecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) (string, error) {
	a := newBatchArgs()
	defer a.free()
	for i, r := range batch {
		if err := a.add(i, r); err != nil {
			return "", err
		}
	}
	args := a.args(owner)
	params := make([]string, len(args))
	for i := range params {
		params[i] = fmt.Sprintf("$%d", i+1)
	}
	// The simple protocol writes the values into the statement's text.
	lines, err := s.explainPrepared(ctx, indexScansSQL, "PREPARE explained_record AS "+s.sql(recordBatchSQL),
		"EXPLAIN (FORMAT JSON) EXECUTE explained_record ("+strings.Join(params, ", ")+")", append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
	return strings.Join(lines, "\n"), err
}

// ExplainListJobs returns the plan of ListJobs's statement for f, with
// sorts and sequential scans priced out (enable_sort and enable_seqscan
// off), so that the plan reads an index in f's order if one can serve it,
// however few jobs the table holds.
func (s *Store) ExplainListJobs(ctx context.Context, collection string, f scheduler.JobFilter) (string, error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SET LOCAL enable_sort = off; SET LOCAL enable_seqscan = off"); err != nil {
		return "", err
	}
	rows, err := tx.Query(ctx, "EXPLAIN "+s.sql(listJobsSQL(f)), collection, string(f.State), limit(f.Top), max(f.Skip, 0), f.Tag.Name, f.Tag.Value)
	if err != nil {
		return "", err
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return strings.Join(lines, "\n"), err
}
