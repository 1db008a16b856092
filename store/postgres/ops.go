package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

const (
	jobCols  = sqlstore.JobCols
	collCols = sqlstore.CollectionCols
)

// pgConn adapts a pgx.Tx or the pool to the shared operations.
type pgConn struct {
	q interface {
		Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
		QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	}
}

func (c pgConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.q.Exec(ctx, query, args...)
	return tag.RowsAffected(), err
}

func (c pgConn) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return pgRow{c.q.QueryRow(ctx, query, args...)}
}

// pgRow reports pgx.ErrNoRows as sqlstore.ErrNoRows.
type pgRow struct{ r pgx.Row }

func (r pgRow) Scan(dest ...any) error {
	var err error
	if slices.ContainsFunc(dest, isNullInt) {
		err = (&pgDests{r: r.r}).Scan(dest...)
	} else {
		err = r.r.Scan(dest...)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return sqlstore.ErrNoRows
	}
	return err
}

func prefixed(p, cols string) string {
	parts := strings.Split(cols, ", ")
	for i := range parts {
		parts[i] = p + parts[i]
	}
	return strings.Join(parts, ", ")
}

// jobReader reads the rows of one answer of jobCols (a list, GetJobs)
// into records, with one scanner and one set of destinations for all of
// them, as a claim does.
type jobReader struct {
	scan  sqlstore.JobScanner
	dests pgDests
}

func (j *jobReader) read(r pgx.Row) (*scheduler.JobRecord, error) {
	j.dests.r = r
	row, err := j.scan.Scan(&j.dests)
	if err != nil {
		return nil, err
	}
	return sqlstore.DecodeJob(row)
}

// pgDests reads a row of pgx into the destinations of sqlstore's scanners
// (a [sqlstore.Row]): it hands pgx a *sqlstore.NullInt as a *nullInt,
// which pgx fills without an allocation (through database/sql's Scanner
// the number would come boxed). It keeps the slice it passes from row to
// row.
type pgDests struct {
	r    pgx.Row
	dest []any
}

func (p *pgDests) Scan(dest ...any) error {
	p.dest = append(p.dest[:0], dest...)
	for i, d := range p.dest {
		if n, ok := d.(*sqlstore.NullInt); ok {
			p.dest[i] = (*nullInt)(n)
		}
	}
	err := p.r.Scan(p.dest...)
	clear(p.dest) // holds nothing of the caller's
	return err
}

func isNullInt(d any) bool {
	_, ok := d.(*sqlstore.NullInt)
	return ok
}

// nullInt is a sqlstore.NullInt as pgx fills it ([pgtype.Int64Scanner]).
type nullInt sqlstore.NullInt

// ScanInt64 implements [pgtype.Int64Scanner].
func (n *nullInt) ScanInt64(v pgtype.Int8) error {
	*n = nullInt{N: v.Int64, Valid: v.Valid}
	return nil
}

func scanCollection(r pgx.Row) (*scheduler.CollectionRecord, error) {
	return sqlstore.ScanCollection(r)
}

func wrap(op, name string, err error) error {
	if err == nil {
		return nil
	}
	if strings.HasPrefix(err.Error(), "store/postgres:") {
		return err
	}
	return fmt.Errorf("store/postgres: %s %q: %w", op, name, err)
}

// PutCollection implements [scheduler.Store].
func (s *Store) PutCollection(ctx context.Context, c *scheduler.CollectionRecord) error {
	enabled := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		enabled, err = s.d.PutCollection(ctx, pgConn{tx}, c, false)
		return err
	})
	if err == nil && enabled {
		s.wake(c.Name, "")
	}
	return err
}

// GetCollection implements [scheduler.Store].
func (s *Store) GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	return s.d.GetCollection(ctx, pgConn{s.pool}, name)
}

// ListCollections implements [scheduler.Store].
func (s *Store) ListCollections(ctx context.Context) ([]*scheduler.CollectionRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.sql("SELECT "+collCols+" FROM {s}.collections ORDER BY name"))
	if err != nil {
		return nil, fmt.Errorf("store/postgres: list job collections: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*scheduler.CollectionRecord, error) { return scanCollection(r) })
	if err != nil {
		return nil, fmt.Errorf("store/postgres: list job collections: %w", err)
	}
	if out == nil {
		out = []*scheduler.CollectionRecord{}
	}
	return out, nil
}

// DeleteCollection implements [scheduler.Store].
func (s *Store) DeleteCollection(ctx context.Context, name, etag string) error {
	if err := s.live(); err != nil {
		return err
	}
	// The collection first: its row lock waits for the creates that hold
	// its share lock, and creates after it find no collection. Then its
	// jobs, by a statement that sees what those creates committed (jobs
	// have no foreign key to collections, see migration 013), and their
	// history, by a statement that sees what a Record that held a job's
	// row lock committed. Its grouper of creates goes too (a create that
	// holds it still runs through it; the next gets a new one).
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := s.d.DeleteCollection(ctx, pgConn{tx}, name, etag); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, s.sql("DELETE FROM {s}.jobs WHERE collection = $1"), name); err != nil {
			return wrap("delete job collection", name, err)
		}
		if _, err := tx.Exec(ctx, s.sql("DELETE FROM {s}.history WHERE collection = $1"), name); err != nil {
			return wrap("delete job collection", name, err)
		}
		return nil
	})
	if err == nil {
		s.creates.Delete(name)
	}
	return err
}

// PutJob implements [scheduler.Store].
func (s *Store) PutJob(ctx context.Context, j *scheduler.JobRecord) error {
	row, err := sqlstore.EncodeJob(j)
	if err != nil {
		return fmt.Errorf("store/postgres: put job: %w", err)
	}
	if err := s.live(); err != nil {
		return err
	}
	// A create or a replace is one statement (a create grouped with those
	// that run at the same time, see grouper); the notification follows
	// in a transaction of its own (see Dialect.Wake and notifier).
	if j.Version == 0 {
		err = s.d.CreateJob(ctx, s.creating(j.Collection), j, row, false)
	} else {
		err = s.d.ReplaceJob(ctx, pgConn{s.pool}, j, row, false)
	}
	if err == nil {
		s.wake(j.Collection, j.Name)
	}
	return err
}

// CreateJob implements [scheduler.JobCreator]: one statement when the
// store knows the quota of col already, which it does after a create over
// the same record, grouped as PutJob's creates are. The notification
// follows as for PutJob.
func (s *Store) CreateJob(ctx context.Context, col *scheduler.CollectionRecord, j *scheduler.JobRecord) error {
	if err := s.live(); err != nil {
		return err
	}
	row, err := s.d.EncodeRow(j)
	if err != nil {
		return err
	}
	err = s.d.CreateJobOver(ctx, s.creating(j.Collection), col, j, row, false)
	if err == nil {
		s.wake(j.Collection, j.Name)
	}
	return err
}

// GetJob implements [scheduler.Store].
func (s *Store) GetJob(ctx context.Context, collection, name string) (*scheduler.JobRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	return s.d.GetJob(ctx, pgConn{s.pool}, collection, name)
}

// ReadForPut implements [scheduler.PutReader]: one statement.
func (s *Store) ReadForPut(ctx context.Context, collection, name string) (*scheduler.CollectionRecord, *scheduler.JobRecord, error) {
	if err := s.live(); err != nil {
		return nil, nil, err
	}
	return s.d.ReadForPut(ctx, pgConn{s.pool}, collection, name)
}

// missing returns the not-found error of a job, naming the collection when
// that is what is missing.
func (s *Store) missing(ctx context.Context, collection, name string) error {
	return s.d.Missing(ctx, pgConn{s.pool}, collection, name)
}

func limit(top int) any {
	if top <= 0 {
		return nil // LIMIT NULL: no limit
	}
	return top
}

// orderKeys are the expressions of the orders of ListJobs besides the
// name, read from the stored status: its times are UTC RFC 3339 with the
// fraction's trailing zeros left out, which without the "Z" sort as
// bytes in the order of their instants, to the nanosecond (an instant
// without a fraction is a prefix of one with a fraction in its second);
// a job without the time (NULL) comes last in ascending order, first in
// descending order, as PostgreSQL orders NULLs by default. No index holds
// them: the database sorts the collection's jobs (each index would cost
// every write of a job's status, one per occurrence, an entry).
var orderKeys = map[scheduler.JobOrder]string{
	scheduler.JobsByNextExecution: `(rtrim(status ->> 'nextExecutionTime', 'Z') COLLATE "C")`,
	scheduler.JobsByLastExecution: `(rtrim(status ->> 'lastExecutionTime', 'Z') COLLATE "C")`,
	scheduler.JobsByFailures:      `(coalesce((status ->> 'failureCount')::int, 0))`,
}

// listJobsSQL returns the query of ListJobs in f's order: its key (none
// for the name), then the name, each descending with f.Descending (by
// name alone, read from the primary key). It
// lists the jobs of collection $1 in state $2 (empty: all) with tag $5 of
// value $6 (empty: any), $3 of them (NULL: all) from $4 on; the first row
// says whether the collection exists, so that the existence check and
// the listing see the same snapshot.
func listJobsSQL(f scheduler.JobFilter) string {
	dir := ""
	if f.Descending {
		dir = " DESC"
	}
	order := "name" + dir
	if k, ok := orderKeys[f.OrderBy]; ok {
		order = k + dir + ", " + order
	}
	return `SELECT ` + prefixed("j.", jobCols) + ` FROM {s}.collections c
		LEFT JOIN LATERAL (SELECT * FROM {s}.jobs WHERE collection = c.name AND ($2 = '' OR state = $2)
			AND ($5 = '' OR (tags::jsonb ->> $5) = $6 OR $6 = '' AND (tags::jsonb ->> $5) IS NOT NULL)
			ORDER BY ` + order + ` LIMIT $3 OFFSET $4) j ON true
		WHERE c.name = $1`
}

// ListJobs implements [scheduler.Store].
func (s *Store) ListJobs(ctx context.Context, collection string, f scheduler.JobFilter) ([]*scheduler.JobRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.sql(listJobsSQL(f)), collection, string(f.State), limit(f.Top), max(f.Skip, 0), f.Tag.Name, f.Tag.Value)
	if err != nil {
		return nil, wrap("list jobs of collection", collection, err)
	}
	defer rows.Close()
	found := false
	var out []*scheduler.JobRecord
	var jr jobReader
	for rows.Next() {
		found = true
		if rows.RawValues()[0] == nil { // no job: the LEFT JOIN's row of NULLs
			continue
		}
		j, err := jr.read(rows)
		if err != nil {
			return nil, wrap("list jobs of collection", collection, err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list jobs of collection", collection, err)
	}
	if !found {
		return nil, &scheduler.NotFoundError{Collection: collection}
	}
	return out, nil
}

// DeleteJob implements [scheduler.Store].
func (s *Store) DeleteJob(ctx context.Context, collection, name, etag string) error {
	// The job and then its history, in one transaction (see
	// DeleteCollection).
	return s.inTx(ctx, func(tx pgx.Tx) error { return s.d.DeleteJob(ctx, pgConn{tx}, collection, name, etag) })
}

// claimSQL leases the $2 jobs due by $5, without a lease or with one
// expired at $1, that are ready first, to owner $3 until $4, and returns
// them with the instant each became ready and its lease (owner and end)
// before the claim. ClaimDue passes $5 = $1.
//
// The index jobs_due holds the due time of the jobs of Enabled
// collections, and no lease column, so that a claim is a HOT update. A
// job without a lease is ready at its due time; one with an expired lease
// at the later of its due time and its lease end, which is never before
// its due time. f takes the first $2 jobs without a lease or with an
// expired one, in index order, reading past the jobs leased now once.
// When none of them has an expired lease (the usual case), they are the
// answer: a job after the last of them in index order is due no earlier,
// so it is ready no earlier, and ties go by collection and name as in the
// index. Otherwise a job with an expired lease may be ready after jobs
// that come later in the index, and the claim takes the first $2 by ready
// instant of u and l, which run only then: u takes the first $2 jobs
// without a lease in index order; l looks for expired leases only among
// jobs due no later than the last of u (all due jobs if u found fewer than
// $2), and the first $2 of both are claimed. The update finds the rows by
// their key, not by the ctid the scans saw: when another transaction
// updated a row after the claim's snapshot (a put, a lease extension),
// the locking read returns the newest version, which a lookup by ctid
// under the statement's snapshot would not find, leaving the job locked
// but not claimed and its place taken.
//
// Reading past the jobs leased now costs a claim a read of each one's row
// (BenchmarkClaimPastLeased): with several processes draining a burst,
// the attempts in flight of all of them, and about a third of the server's
// work. Claim indexes that leave leased jobs out (due jobs without a lease
// by due time, leased ones by ready instant) read none of them, but make
// every claim, lease extension and release an update that writes an entry
// into each index of jobs, not a HOT one: in the same burst the claims'
// server time and WAL grew rather than shrank, and so did a claim past a
// thousand leased jobs. Claims stay HOT.
var claimSQL = `WITH f AS (
		SELECT collection, name, GREATEST(due_at, lease_until) AS ready, lease_owner, lease_until, lease_until IS NOT NULL AS expired FROM {s}.jobs
		WHERE coll_enabled AND due_at <= $5 AND (lease_until IS NULL OR lease_until <= $1)
		ORDER BY due_at, collection, name
		LIMIT $2
		FOR UPDATE SKIP LOCKED
	), x AS (
		SELECT coalesce(bool_or(expired), false) AS expired FROM f
	), u AS (
		SELECT collection, name, due_at AS ready, lease_owner, lease_until FROM {s}.jobs
		WHERE (SELECT expired FROM x) AND coll_enabled AND due_at <= $5 AND lease_until IS NULL
		ORDER BY due_at, collection, name
		LIMIT $2
		FOR UPDATE SKIP LOCKED
	), l AS (
		SELECT collection, name, GREATEST(due_at, lease_until) AS ready, lease_owner, lease_until FROM {s}.jobs
		WHERE (SELECT expired FROM x) AND coll_enabled AND due_at <= (SELECT CASE WHEN count(*) < $2 THEN $5 ELSE max(ready) END FROM u)
			AND lease_until <= $1
		ORDER BY ready, collection, name
		LIMIT $2
		FOR UPDATE SKIP LOCKED
	), c AS (
		SELECT collection, name, ready, lease_owner, lease_until FROM f WHERE NOT (SELECT expired FROM x)
		UNION ALL (
			SELECT * FROM u UNION ALL SELECT * FROM l
			ORDER BY ready, collection, name
			LIMIT $2
		)
	)
	UPDATE {s}.jobs j SET lease_owner = $3, lease_until = $4, version = j.version + 1
	FROM c WHERE j.collection = c.collection AND j.name = c.name
	RETURNING ` + prefixed("j.", jobCols) + `, c.ready, c.lease_owner, c.lease_until`

// ClaimDue implements [scheduler.Store]: ClaimDueBy with DueBy = now.
func (s *Store) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*scheduler.JobRecord, error) {
	return s.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: now, DueBy: now, Owner: owner, LeaseUntil: leaseUntil, Limit: limit})
}

// ClaimDueBy implements [scheduler.AheadClaimer].
func (s *Store) ClaimDueBy(ctx context.Context, c scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	now, owner, leaseUntil, limit := c.Now, c.Owner, c.LeaseUntil, c.Limit
	if limit < 1 {
		return nil, nil
	}
	if c.DueBy.Before(now) {
		return nil, fmt.Errorf("store/postgres: claim: due horizon %v is before now %v", c.DueBy, now)
	}
	if !leaseUntil.After(c.DueBy) {
		return nil, fmt.Errorf("store/postgres: claim: lease end %v is not after %v", leaseUntil, c.DueBy)
	}
	if err := s.live(); err != nil {
		return nil, err
	}
	b := &pgx.Batch{}
	b.Queue(claimPlanSQL)
	b.Queue(s.sql(claimSQL), sqlstore.NanosInt(now), limit, owner, sqlstore.NanosInt(leaseUntil), sqlstore.NanosInt(c.DueBy))
	br := s.engine.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, fmt.Errorf("store/postgres: claim due jobs: %w", err)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, fmt.Errorf("store/postgres: claim due jobs: %w", err)
	}
	cr := claimReaders.Get().(*claimReader)
	defer cr.free()
	out, err := pgx.AppendRows(cr.out[:0], rows, func(r pgx.CollectableRow) (claimed, error) {
		var c claimed
		cr.prev = ""
		cr.dests.r = r
		row, err := cr.scan.Scan(&cr.dests, &cr.ready, &cr.prev, &cr.prevUntil)
		c.ready = cr.ready
		if err == nil {
			c.j, err = sqlstore.DecodeJobShared(row, &cr.defs)
		}
		if err == nil {
			c.j.PreviousLeaseOwner = cr.prev
			if cr.prev != "" && cr.prevUntil.Valid {
				c.j.PreviousLeaseUntil = sqlstore.Time(cr.prevUntil.N, true)
			}
		}
		return c, err
	})
	if err == nil {
		err = br.Close()
	}
	cr.out = out
	if err != nil {
		return nil, fmt.Errorf("store/postgres: claim due jobs: %w", err)
	}
	slices.SortFunc(out, func(a, b claimed) int {
		switch {
		case a.ready != b.ready:
			return cmpInt(a.ready, b.ready)
		case a.j.Collection != b.j.Collection:
			return strings.Compare(a.j.Collection, b.j.Collection)
		}
		return strings.Compare(a.j.Name, b.j.Name)
	})
	jobs := make([]*scheduler.JobRecord, len(out))
	handles := make([]claimHandle, len(out)) // one allocation for the claim
	for i, c := range out {
		jobs[i] = c.j
		handles[i] = claimHandle{collection: c.j.Collection, name: c.j.Name, version: c.j.Version, state: stateLetter(c.j.State)}
		c.j.Handle = &handles[i]
	}
	return jobs, nil
}

// claimReader is what a claim reads its rows with: the destinations,
// reused from row to row, and the definitions of the claim's jobs (jobs
// with the same definition share it). A store keeps claimReaders from
// claim to claim, so that a claim of a few jobs, as a steady rate makes
// them, allocates little besides its records. Nothing of a reader is
// its records': their strings are in bytes that no later row writes
// (see [sqlstore.JobScanner]), and the next claim forgets the
// definitions (Definitions.Reset).
type claimReader struct {
	out       []claimed // the records read, empty between claims
	scan      sqlstore.JobScanner
	dests     pgDests
	defs      sqlstore.Definitions
	ready     int64
	prev      string           // the owner of an expired lease, read before the update
	prevUntil sqlstore.NullInt // its end
}

// claimed is a record a claim read, with its place in the order of the
// claim's answer.
type claimed struct {
	j     *scheduler.JobRecord
	ready int64
}

// claimReaders holds the claimReaders of claims done.
var claimReaders = sync.Pool{New: func() any { return new(claimReader) }}

// free gives cr back for another claim, unless a large claim made its
// definitions too many to keep.
func (cr *claimReader) free() {
	if cr.defs.Len() > 1024 || cap(cr.out) > 1024 {
		return
	}
	clear(cr.out) // holds nothing of the records
	cr.out = cr.out[:0]
	cr.dests.r = nil
	cr.defs.Reset()
	claimReaders.Put(cr)
}

// claimHandle is the [scheduler.JobRecord.Handle] of a claimed job: the
// job's state at the version the claim left it at. A record of the job at
// that version replaces that state (every write that changes a job's
// state raises its version), so the record statements count the change
// without reading the job's row again for its state.
type claimHandle struct {
	collection, name string
	version          int64
	state            byte // its stateLetter
}

// stateLetter returns the letter that stands for state s in the record
// statements' arguments (wasSQL reads it back), '-' for a state it does
// not know.
func stateLetter(s scheduler.JobState) byte {
	switch s {
	case scheduler.JobEnabled:
		return 'E'
	case scheduler.JobDisabled:
		return 'D'
	case scheduler.JobCompleted:
		return 'C'
	case scheduler.JobFaulted:
		return 'F'
	}
	return '-'
}

// wasSQL is the state a record replaces, from the letter %[1]s
// (stateLetter), or, when that is '-', from the job's row (collection
// %[2]s, name %[3]s) as the statement's snapshot sees it: a subquery in
// RETURNING does not see the statement's own update.
const wasSQL = `coalesce(CASE %[1]s WHEN 'E' THEN 'Enabled' WHEN 'D' THEN 'Disabled' WHEN 'C' THEN 'Completed' WHEN 'F' THEN 'Faulted' END,
			(SELECT o.state FROM {s}.jobs o WHERE o.collection = %[2]s AND o.name = %[3]s))`

// claimedState returns the stateLetter of the state j replaces when it is
// recorded, as its handle knows it, or '-' when the handle is not one of
// this store's claims of the same job at the same version (the record
// statements then read the stored state).
func claimedState(j *scheduler.JobRecord) byte {
	h, ok := j.Handle.(*claimHandle)
	if !ok || h.collection != j.Collection || h.name != j.Name || h.version != j.Version {
		return '-'
	}
	return h.state
}

// giveBackLockTimeout is how long GiveBack waits for the lock on a job's
// row that another transaction holds (a write to the job) before it tries
// again: the scheduler starts nothing while it gives claims back.
const giveBackLockTimeout = 100 * time.Millisecond

// giveBackRetryFor is how long after it began a GiveBack whose context
// has no deadline still tries again after a try failed waiting for a
// lock: one second, what a Scheduler with the default
// Config.LeaseDuration allows its give-backs.
const giveBackRetryFor = time.Second

// giveBackPause is the pause before GiveBack's second try; each pause
// after it is twice the one before, up to giveBackLockTimeout.
const giveBackPause = 10 * time.Millisecond

// GiveBack implements [scheduler.AheadClaimer]: all of claims in one
// transaction on the engine's connections, each job apart. A statement
// waits at most giveBackLockTimeout for a row that another transaction
// has locked (another instance's claim holds its rows for a moment); the
// transaction is then tried again after a pause, for as long as ctx
// lasts, so that a lock held for ever cannot hold the caller longer than
// ctx allows. The pauses start at 10ms and double up to
// giveBackLockTimeout, less when half the time left before ctx's deadline
// is less: a try that a small statement_timeout of the connection's
// fails at once is not tried again without end in a tight loop.
//
// A ctx without a deadline is tried again only within a second of the
// call's start (what a Scheduler with the default Config.LeaseDuration
// allows its give-backs): a lock held for longer then fails the call,
// and a claim not given back keeps its lease until it expires, which
// does no harm, while a caller held for as long as a lock is would be.
// Each try runs to its end, its statements bounded one by one as below,
// however many the claims and however long the round trips, so a
// give-back that meets no lock is never cut short; the call takes at most
// about a second plus one try.
//
// PostgreSQL bounds each wait for a lock (lock_timeout), not a
// statement's waits together: a statement that finds another transaction
// queued for the row first waits for the row's holder, then again for
// that transaction. So each statement also runs under a statement_timeout
// of five fourths of its lock wait (or the connection's own, when that is
// smaller): a statement that waits once fails with the lock's error
// (55P03, lock_not_available), one that waits twice with the statement
// timeout's (57014, query_canceled), and either rolls the try back and is
// tried again. Once less than twice giveBackLockTimeout is left before
// ctx's deadline, the try is the last, and its waits are bounded as a
// whole: each statement waits for a lock at most half the time left when
// it starts (at most two thirds: the bounds are set again, a round trip,
// only once they have shrunk by a quarter) and runs at most five fourths
// of that, so that the try fails, rolled back, before ctx would cancel
// its statement (and with it the connection). Its error is then each
// claim's, none of claims is given back, and their leases expire instead.
//
// When the transaction fails, each claim's error names its own job: the
// claim whose statement failed it has that statement's error; a claim
// found lost (ErrLeaseLost) or deleted (ErrNotFound) before keeps that
// error, which a rollback does not change; the others wrap the error that
// failed the transaction, those after the failed claim saying they were
// not given back.
func (s *Store) GiveBack(ctx context.Context, owner string, claims []*scheduler.JobRecord) []error {
	began := time.Now()
	deadline, bounded := ctx.Deadline()
	errs := make([]error, len(claims))
	err := s.live()
	failed := -1 // the claim whose statement failed the transaction, if any
	last := false
	for pause := giveBackPause; err == nil; pause = min(2*pause, giveBackLockTimeout) {
		clear(errs)
		failed = -1
		err = pgx.BeginFunc(ctx, s.engine, func(tx pgx.Tx) error {
			var wait time.Duration // the lock_timeout set
			for i, r := range claims {
				w := giveBackLockTimeout
				if bounded {
					if half := time.Until(deadline) / 2; half < w {
						w, last = max(half, time.Millisecond), true
					}
				}
				if i == 0 || w < wait*3/4 {
					if err := setLockTimeouts(ctx, tx, w); err != nil {
						return err
					}
					wait = w
				}
				errs[i] = s.d.GiveBack(ctx, pgConn{tx}, owner, r)
				if e := errs[i]; e != nil && !errors.Is(e, scheduler.ErrLeaseLost) && !errors.Is(e, scheduler.ErrNotFound) {
					failed = i
					return e // the transaction is aborted: nothing is given back
				}
			}
			return nil
		})
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "55P03" && pe.Code != "57014" || ctx.Err() != nil || last ||
			!bounded && time.Since(began) >= giveBackRetryFor {
			break
		}
		// 55P03, lock_not_available, or 57014, query_canceled, while ctx
		// lasts: a lock wait or the statement timeout; pause, and try
		// again.
		p := pause
		if bounded {
			p = min(p, time.Until(deadline)/2)
		}
		select {
		case <-ctx.Done():
			// ctx ended: the try's error stands
		case <-time.After(p):
			err = nil
		}
	}
	if err != nil {
		for i := range errs {
			switch {
			case i == failed:
				errs[i] = err // it names the job
			case errors.Is(errs[i], scheduler.ErrLeaseLost) || errors.Is(errs[i], scheduler.ErrNotFound):
				// lost or deleted, rolled back or not
			case failed >= 0 && i > failed:
				errs[i] = fmt.Errorf("store/postgres: give back job %q: not given back: the transaction failed at job %q: %w",
					claims[i].ID(), claims[failed].ID(), err)
			case failed >= 0:
				errs[i] = fmt.Errorf("store/postgres: give back job %q: rolled back with the transaction: %w", claims[i].ID(), err)
			default:
				errs[i] = fmt.Errorf("store/postgres: give back job %q: %w", claims[i].ID(), err)
			}
		}
	}
	return errs
}

// setLockTimeouts sets, for the rest of tx, its lock_timeout to wait and
// its statement_timeout to five fourths of wait, or leaves the
// statement_timeout in force when that is smaller (see GiveBack): the
// statement_timeout bounds a statement's waits for locks together, which
// lock_timeout bounds each alone (a statement queued behind another
// transaction waiting for the same row waits twice).
func setLockTimeouts(ctx context.Context, tx pgx.Tx, wait time.Duration) error {
	ms := func(d time.Duration) int64 { return max(d.Milliseconds(), 1) }
	_, err := tx.Exec(ctx, lockTimeoutsSQL, strconv.FormatInt(ms(wait), 10)+"ms", ms(wait+wait/4))
	return err
}

// lockTimeoutsSQL sets lock_timeout to $1 and statement_timeout to $2
// milliseconds, or to the one in force when it is smaller and not zero
// (none), for the rest of the transaction. current_setting gives the one
// in force with its unit ("120ms", "5s", "1min"; "0" for none), which the
// cast to interval reads (a number without a unit as seconds: only 0
// comes so); it is cheaper than pg_settings, a view that builds a row of
// every setting to return one.
const lockTimeoutsSQL = `SELECT pg_catalog.set_config('lock_timeout', $1, true), pg_catalog.set_config('statement_timeout',
	(SELECT CASE WHEN t BETWEEN 1 AND $2::bigint THEN t ELSE $2::bigint END
		FROM (SELECT (extract(epoch FROM pg_catalog.current_setting('statement_timeout')::interval) * 1000)::bigint) AS s (t))::text || 'ms', true)`

func cmpInt(a, b int64) int {
	if a < b {
		return -1
	}
	return 1
}

// nextDueSQL returns the earliest instant at which a job is ready (see
// claimSQL), NULL when none has a due time: the due time of the first job
// without a lease, or the lease end of a leased job due earlier. A leased
// job due at that same instant is ready no earlier than it, so the second
// part reads only the jobs due before it, all leased (the jobs in flight
// and held), and not every job that shares the instant: a million jobs
// due at one instant (a year ahead, or every day at midnight) made each
// NextDue read the whole table, about 0.5 s.
const nextDueSQL = `WITH u AS (
		SELECT due_at FROM {s}.jobs WHERE coll_enabled AND due_at IS NOT NULL AND lease_until IS NULL
		ORDER BY due_at LIMIT 1
	)
	SELECT LEAST((SELECT due_at FROM u), (SELECT min(GREATEST(due_at, lease_until)) FROM {s}.jobs
		WHERE coll_enabled AND due_at < coalesce((SELECT due_at FROM u), 9223372036854775807) AND lease_until IS NOT NULL))`

// indexScansSQL makes the planner read jobs through its indexes for the
// rest of the transaction (a pipeline of statements is one transaction).
// ClaimDue and NextDue read a range of jobs_due whose end is only known
// at run time, or filter it by a lease column whose statistics may not
// exist yet: estimates that can make a sequential scan and a sort of every
// due job look cheaper than reading the few that are needed in index
// order. It also turns JIT compilation off: a generic plan estimates the
// range up to a parameter as a third of the table, and on a large table
// that estimate crosses jit_above_cost, so every claim would compile
// (about 30 ms) the plan that then reads a few rows.
//
// And it makes a statement with parameters run its generic plan, planned
// once per connection. PostgreSQL would otherwise plan the statement anew
// for each call's values (the generic plan's estimated cost is higher):
// planning a claim of a hundred jobs takes about as much server time as
// the rest of it, and the plan of RecordBatch for a batch's values, on a
// table of a thousand jobs analysed while none was leased, reads the whole
// primary key of jobs for the jobs leased to the owner and joins them to
// the batch, where the generic plan looks each job of the batch up by its
// key. A statement without parameters (NextDue's) has only the one plan.
const indexScansSQL = "SELECT set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true), set_config('jit', 'off', true), " +
	"set_config('plan_cache_mode', 'force_generic_plan', true)"

// claimPlanSQL is indexScansSQL for ClaimDue. Not knowing the limit, the
// claim's generic plan estimates a tenth of the due jobs and could find
// the jobs to update by merging the claimed ones, sorted, with a scan of
// the whole primary key; without merge and hash joins it looks each one up
// by its key, as the plan for given values does.
const claimPlanSQL = indexScansSQL + ", set_config('enable_mergejoin', 'off', true), set_config('enable_hashjoin', 'off', true)"

// queryRowIndexed runs query, which returns one row, into dest after
// indexScansSQL, in one round trip and one implicit transaction.
func (s *Store) queryRowIndexed(ctx context.Context, dest any, query string, args ...any) error {
	b := &pgx.Batch{}
	b.Queue(indexScansSQL)
	b.Queue(query, args...)
	br := s.engine.SendBatch(ctx, b)
	_, err := br.Exec()
	if err == nil {
		err = br.QueryRow().Scan(dest)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// NextDue implements [scheduler.Store].
func (s *Store) NextDue(ctx context.Context) (time.Time, error) {
	if err := s.live(); err != nil {
		return time.Time{}, err
	}
	var n *int64
	if err := s.queryRowIndexed(ctx, &n, s.sql(nextDueSQL)); err != nil {
		return time.Time{}, fmt.Errorf("store/postgres: next due job: %w", err)
	}
	if n == nil {
		return time.Time{}, nil
	}
	return sqlstore.Time(*n, true), nil
}

// ExtendLease implements [scheduler.Store].
func (s *Store) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	if err := s.live(); err != nil {
		return err
	}
	return s.extendLease(ctx, s.engine, collection, name, owner, until)
}

// extendLease is ExtendLease through q, the engine's pool or a
// transaction of it.
func (s *Store) extendLease(ctx context.Context, q interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}, collection, name, owner string, until time.Time) error {
	tag, err := q.Exec(ctx, s.sql("UPDATE {s}.jobs SET lease_until = $4 WHERE collection = $1 AND name = $2 AND lease_owner = $3 AND lease_owner <> ''"),
		collection, name, owner, sqlstore.NanosInt(until))
	if err != nil {
		return wrap("extend lease of job", collection+"/"+name, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var holder string
	err = q.QueryRow(ctx, s.sql("SELECT lease_owner FROM {s}.jobs WHERE collection = $1 AND name = $2"), collection, name).Scan(&holder)
	if errors.Is(err, pgx.ErrNoRows) {
		return s.missing(ctx, collection, name)
	}
	if err != nil {
		return wrap("extend lease of job", collection+"/"+name, err)
	}
	return fmt.Errorf("store/postgres: extend lease of job %q: held by %q, not %q: %w", collection+"/"+name, holder, owner, scheduler.ErrLeaseLost)
}

// ExtendLeases implements [scheduler.LeaseExtender]. One statement,
// extendLeasesSQL, extends the leases that owner holds of the jobs whose
// rows no other transaction has locked, without waiting for a lock; when
// some were not extended, a second, notExtendedSQL, reads why from the
// rows as they are then. Those still held by owner were skipped for a
// lock (a host's transaction that put the job, a RecordBatch under way):
// they are extended one at a time, each waiting for its row (see
// extendLocked). So a locked row holds up only its own job's extension,
// the call never waits for a row while it holds the locks of others (it
// cannot deadlock with another call or with RecordBatch), and the waits
// of all calls of the Store hold at most one of the engine's connections
// at a time, leaving the others to claims and records.
func (s *Store) ExtendLeases(ctx context.Context, owner string, until time.Time, jobs []scheduler.JobKey) []error {
	if len(jobs) == 0 {
		return nil
	}
	if err := s.live(); err != nil {
		return s.d.ExtendErrors(owner, jobs, nil, err)
	}
	colls, names := make([]string, len(jobs)), make([]string, len(jobs))
	for i, k := range jobs {
		colls[i], names[i] = k.Collection, k.Name
	}
	var places []int64 // of the jobs not extended, from 1
	if err := s.queryRowIndexed(ctx, &places, s.sql(extendLeasesSQL), colls, names, owner, sqlstore.NanosInt(until)); err != nil {
		return s.d.ExtendErrors(owner, jobs, nil, err)
	}
	if len(places) == 0 {
		return nil
	}
	errs := make([]error, len(jobs))
	colls, names = colls[:0], names[:0]
	for _, p := range places {
		colls, names = append(colls, jobs[p-1].Collection), append(names, jobs[p-1].Name)
	}
	var why []byte
	if err := s.queryRowIndexed(ctx, &why, s.sql(notExtendedSQL), colls, names, places); err != nil {
		for _, p := range places {
			errs[p-1] = wrap("extend lease of job", jobs[p-1].Collection+"/"+jobs[p-1].Name, err)
		}
		return errs
	}
	var not []sqlstore.NotExtended
	if err := json.Unmarshal(why, &not); err != nil {
		return s.d.ExtendErrors(owner, jobs, nil, err)
	}
	var locked []int // places in jobs, from 0, of the rows skipped for a lock
	for _, n := range not {
		if n.Place < 1 || n.Place > len(jobs) {
			continue
		}
		i, k := n.Place-1, jobs[n.Place-1]
		if n.Holder == nil || *n.Holder != owner || owner == "" {
			errs[i] = s.d.NotExtendedError(owner, k, n)
			continue
		}
		locked = append(locked, i)
	}
	// With a deadline on ctx, the waits share half of the time left: each
	// row may wait for what is left of that budget shared among the rows
	// still to extend, this one among them.
	d, bounded := ctx.Deadline()
	budget, began := time.Until(d)/2, time.Now()
	for n, i := range locked {
		wait := time.Duration(-1) // no bound
		if bounded {
			wait = max((budget-time.Since(began))/time.Duration(len(locked)-n), time.Millisecond)
		}
		errs[i] = s.extendLocked(ctx, jobs[i], owner, until, wait)
	}
	return errs
}

// errRowLocked is the error of a lease that ExtendLeases did not extend
// because another transaction held the job's row for longer than the call
// could wait (see extendLocked). The lease is as it was; the Scheduler's
// lease keeper tries again about a third of a lease later.
var errRowLocked = errors.New("store/postgres: the job's row is locked by another transaction; the lease is not extended this time")

// errOtherLockedRow is why a lease was not extended when another
// ExtendLeases call of the Store waited for a locked row all the while.
var errOtherLockedRow = errors.New("another call waited for a locked row meanwhile")

// extendLocked extends the lease of job k, whose row another transaction
// locked, waiting for the row at most wait, or as long as the row is held
// when wait is negative. ExtendLeases gives the rows it extends so, with a
// deadline on its context, half of the time left when they began, shared
// out as they go: a row held longer fails with errRowLocked, and the lease
// keeper, whose calls end a third of a lease after they begin, tries again
// a third of a lease later while the lease has time left. One such wait
// runs at a time in the Store (s.lockedRows), so that the lease keeper's
// calls under way at once hold one engine connection in all; the wait for
// that turn counts in wait.
func (s *Store) extendLocked(ctx context.Context, k scheduler.JobKey, owner string, until time.Time, wait time.Duration) error {
	began := time.Now()
	var timeout <-chan time.Time
	if wait >= 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case s.lockedRows <- struct{}{}:
		defer func() { <-s.lockedRows }()
	case <-timeout:
		return fmt.Errorf("%w (waited %v of at most %v): %w", errRowLocked, time.Since(began), wait, errOtherLockedRow)
	case <-ctx.Done():
		return wrap("extend lease of job", k.Collection+"/"+k.Name, ctx.Err())
	}
	if wait < 0 {
		return s.extendLease(ctx, s.engine, k.Collection, k.Name, owner, until)
	}
	wait = max(wait-time.Since(began), time.Millisecond)
	var err error
	txErr := pgx.BeginFunc(ctx, s.engine, func(tx pgx.Tx) error {
		// The statement as a whole may take wait (its statement_timeout),
		// each of its waits for a lock four fifths of that.
		if err := setLockTimeouts(ctx, tx, wait*4/5); err != nil {
			return err
		}
		err = s.extendLease(ctx, tx, k.Collection, k.Name, owner, until)
		return err
	})
	// txErr is err, or the commit's error.
	if err == nil && txErr != nil {
		err = wrap("extend lease of job", k.Collection+"/"+k.Name, txErr)
	}
	var pe *pgconn.PgError
	// 55P03, lock_not_available: the lock_timeout; 57014, query_canceled,
	// while ctx is live: the statement_timeout.
	if errors.As(err, &pe) && (pe.Code == "55P03" || pe.Code == "57014" && ctx.Err() == nil) {
		return fmt.Errorf("%w (waited %v of at most %v): %w", errRowLocked, time.Since(began), wait, err)
	}
	return err
}

// extendLeasesSQL moves to $4 the leases that owner $3 holds of the jobs
// named by $1 (collections) and $2 (names), except those whose rows
// another transaction has locked, which it skips rather than wait for:
// l locks the rows (in the order of the primary key), u extends their
// leases. It returns the places in the call (from 1) of the jobs whose
// leases it did not extend; a job named twice is extended, or not, in
// both places.
const extendLeasesSQL = `WITH k AS (
		SELECT * FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(collection, name, i)
	), l AS (
		SELECT j.collection, j.name FROM {s}.jobs j
		WHERE (j.collection, j.name) IN (SELECT collection, name FROM k) AND j.lease_owner = $3 AND j.lease_owner <> ''
		ORDER BY j.collection, j.name FOR UPDATE SKIP LOCKED
	), u AS (
		UPDATE {s}.jobs j SET lease_until = $4 FROM l
		WHERE j.collection = l.collection AND j.name = l.name
		RETURNING j.collection, j.name
	)
	SELECT coalesce(array_agg(k.i ORDER BY k.i), '{}') FROM k
	WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.collection = k.collection AND u.name = k.name)`

// notExtendedSQL returns, for the jobs named by $1 (collections) and $2
// (names) at places $3 of an ExtendLeases call, their lease owners and
// whether their collections exist, as a JSON array of
// sqlstore.NotExtended: a statement of its own, after extendLeasesSQL,
// so that it reads the rows as they are since, not as extendLeasesSQL's
// snapshot had them (a job deleted meanwhile has no row).
const notExtendedSQL = `SELECT coalesce(json_agg(json_build_object('i', k.i, 'holder', j.lease_owner,
		'coll', EXISTS (SELECT 1 FROM {s}.collections c WHERE c.name = k.collection))), '[]')
	FROM unnest($1::text[], $2::text[], $3::bigint[]) AS k(collection, name, i)
	LEFT JOIN {s}.jobs j ON j.collection = k.collection AND j.name = k.name`

// recordSQL updates the job, checked against the lease holder, the version,
// the incarnation ($20) and the creation instant (a job deleted and
// created again may reach the same version under the same holder), appends its history and, when the
// job's state changes, the change of the counts (migration 15: the trigger
// of migration 11 leaves records out), in one statement; it returns the
// number of jobs updated (0 or 1). The update applies only at version $4,
// and every write that changes a job's state raises its version, so the
// state the update replaces is the state at that version: from $19 when
// the caller's claim knows it (claimedState), else from the job's row
// (wasSQL). A NULL definition ($5) keeps the stored one.
var recordSQL = `WITH u AS (
		UPDATE {s}.jobs j SET definition = coalesce($5::json, j.definition), state = $6, status = $7, schedule = $8, etag = $9,
			version = $4 + 1, created_at = $10, updated_at = $11, due_at = $12, lease_owner = '', lease_until = NULL
		WHERE j.collection = $1 AND j.name = $2 AND j.lease_owner = $3 AND j.version = $4 AND j.created_at IS NOT DISTINCT FROM $10
			AND j.incarnation = $20
		RETURNING ` + fmt.Sprintf(wasSQL, "$19", "$1", "$2") + ` AS was, j.state
	), d AS (
		INSERT INTO {s}.job_count_deltas (collection, state, n)
		SELECT $1, m.state, m.n FROM u, LATERAL (VALUES (u.was, -1), (u.state, 1)) AS m(state, n)
		WHERE u.was <> u.state
	), h AS (
		INSERT INTO {s}.history (collection, job, status, end_time, entry, action_name, retry_count, faulted)
		SELECT $1, $2, x.status, x.end_time, x.entry::json, x.action_name, x.retry_count, x.faulted
		FROM unnest($13::text[], $14::bigint[], $15::text[], $16::text[], $17::integer[], $18::boolean[])
			WITH ORDINALITY AS x(status, end_time, entry, action_name, retry_count, faulted, n)
		WHERE EXISTS (SELECT 1 FROM u)
		ORDER BY x.n
	)
	SELECT count(*) FROM u`

// recordArgs returns the arguments of recordSQL, in a's columns; with
// keepDef, the definition is NULL (see
// [scheduler.RecordRequest.KeepDefinition]).
func recordArgs(a *batchArgs, owner string, j *scheduler.JobRecord, keepDef bool, history []scheduler.HistoryEntry) ([]any, error) {
	var row sqlstore.JobRow
	if err := a.texts.EncodeRecord(&row, j, keepDef, nil); err != nil {
		return nil, fmt.Errorf("store/postgres: record: %w", err)
	}
	if err := a.h.add(&a.texts, 0, j.Collection, j.Name, history); err != nil {
		return nil, err
	}
	// The driver, and a host's tracer, may keep the arguments: the texts
	// are cloned out of a.texts, which the next statement overwrites.
	return []any{j.Collection, j.Name, owner, j.Version, row.DefinitionArg(), row.State, strings.Clone(row.Status), strings.Clone(row.Schedule), row.ETag,
		row.CreatedArg(), row.UpdatedArg(), row.DueArg(), &a.h.status, &a.h.end, &a.h.entry, &a.h.action, &a.h.retry, &a.h.faulted, string(rune(claimedState(j))), j.Incarnation}, nil
}

// Record implements [scheduler.Store]. The update of the job (checked
// against owner and j.Version) and the insert of the history entries are
// one statement, so they commit together or not at all.
func (s *Store) Record(ctx context.Context, owner string, j *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	if err := s.live(); err != nil {
		return err
	}
	a := newBatchArgs()
	defer a.free()
	args, err := recordArgs(a, owner, j, false, history)
	if err != nil {
		return err
	}
	updated := 0
	if owner != "" {
		if err := s.engine.QueryRow(ctx, s.sql(recordSQL), args...).Scan(&updated); err != nil {
			if s.recorded(ctx, j, history) {
				return nil
			}
			return wrap("record job", j.ID(), err)
		}
	}
	if updated == 1 {
		return nil
	}
	return s.whyNotRecorded(ctx, owner, j, history)
}

// whyNotRecorded returns the error of a Record that updated nothing, or
// nil when it repeats one that committed (see historyStored).
func (s *Store) whyNotRecorded(ctx context.Context, owner string, j *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	var holder string
	var version int64
	var created, incarnation pgtype.Int8
	err := s.engine.QueryRow(ctx, s.sql("SELECT lease_owner, version, created_at, incarnation FROM {s}.jobs WHERE collection = $1 AND name = $2"),
		j.Collection, j.Name).Scan(&holder, &version, &created, &incarnation)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return s.missing(ctx, j.Collection, j.Name)
	case err != nil:
		return wrap("record job", j.ID(), err)
	case !sameJob(created, incarnation, j):
		return fmt.Errorf("store/postgres: record: %w", scheduler.NewRecreatedErrorOf(j, sqlstore.Time(created.Int64, created.Valid), incarnation.Int64))
	}
	if owner != "" {
		if stored, err := s.historyStored(ctx, j, history); err != nil {
			return wrap("record job", j.ID(), err)
		} else if stored {
			return nil
		}
	}
	if holder != owner || owner == "" {
		return fmt.Errorf("store/postgres: record job %q: lease held by %q, not %q: %w", j.ID(), holder, owner, scheduler.ErrLeaseLost)
	}
	return fmt.Errorf("store/postgres: record job %q: version %d, stored %d: %w", j.ID(), j.Version, version, scheduler.ErrConflict)
}

// RecordBatch implements [scheduler.BatchRecorder]: one statement
// updates the jobs and appends their history, so the batch commits
// together. An element that finds its lease lost or its version changed
// updates nothing and does not disturb the others; when the round trip
// itself fails, each element is checked for whether it was recorded. A
// batch that holds a job more than once is recorded one statement per
// element, in order.
func (s *Store) RecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) []error {
	errs := make([]error, len(batch))
	if err := s.live(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	if owner == "" {
		for i, r := range batch {
			errs[i] = s.whyNotRecorded(ctx, owner, r.Job, r.History)
		}
		return errs
	}
	a := newBatchArgs()
	defer a.free()
	if a.repeatsJob(batch) {
		return s.recordEach(ctx, owner, batch, errs)
	}
	for i, r := range batch {
		errs[i] = a.add(i, r)
	}
	if len(a.places) == 0 {
		return errs
	}
	var done []int64
	berr := s.queryRowIndexed(ctx, &done, s.sql(recordBatchSQL), a.args(owner)...)
	updated := make([]bool, len(batch))
	for _, p := range done {
		updated[a.places[p-1]] = true
	}
	for _, i := range a.places {
		r := batch[i]
		switch {
		case berr != nil:
			// The statement may have committed before the error
			// reached us: find out.
			if !s.recorded(ctx, r.Job, r.History) {
				errs[i] = wrap("record job", r.Job.ID(), berr)
			}
		case !updated[i]:
			errs[i] = s.whyNotRecorded(ctx, owner, r.Job, r.History)
		}
	}
	return errs
}

// repeatsJob reports whether batch holds a job more than once.
func (a *batchArgs) repeatsJob(batch []scheduler.RecordRequest) bool {
	if len(batch) < 2 {
		return false
	}
	if a.seen == nil {
		a.seen = make(map[[2]string]struct{}, len(batch))
	}
	for _, r := range batch {
		k := [2]string{r.Job.Collection, r.Job.Name}
		if _, ok := a.seen[k]; ok {
			return true
		}
		a.seen[k] = struct{}{}
	}
	return false
}

// recordEach records the elements of batch with one Record statement
// each, sent in one round trip, so that they commit together and each
// sees what the ones before it wrote. owner is not empty.
func (s *Store) recordEach(ctx context.Context, owner string, batch []scheduler.RecordRequest, errs []error) []error {
	b := &pgx.Batch{}
	var queued []int
	for i, r := range batch {
		// Each statement its own columns: pgx encodes them when the
		// batch is sent.
		args, err := recordArgs(new(batchArgs), owner, r.Job, r.KeepDefinition, r.History)
		if err != nil {
			errs[i] = err
			continue
		}
		b.Queue(s.sql(recordSQL), args...)
		queued = append(queued, i)
	}
	updated := make([]int, len(batch))
	var berr error
	if len(queued) > 0 {
		br := s.engine.SendBatch(ctx, b)
		for _, i := range queued {
			if berr == nil {
				berr = br.QueryRow().Scan(&updated[i])
			}
		}
		if err := br.Close(); berr == nil {
			berr = err
		}
	}
	for i, r := range batch {
		switch {
		case errs[i] != nil:
		case berr != nil:
			// The statements run in one implicit transaction: after an
			// error, find out what committed.
			if !s.recorded(ctx, r.Job, r.History) {
				errs[i] = wrap("record job", r.Job.ID(), berr)
			}
		case updated[i] != 1:
			errs[i] = s.whyNotRecorded(ctx, owner, r.Job, r.History)
		}
	}
	return errs
}

// recordBatchSQL is recordSQL for many jobs at once ($1 is the lease
// owner): x holds one row per job, i its element's place in the batch; u
// updates those still leased to $1 at their version, incarnation ($21)
// and creation instant and returns their places; h appends the history of the elements u
// updated, in batch order; d inserts the changes of the counts of the jobs
// whose state u changed, one row per collection and state (the state each
// update replaces, was, as in recordSQL: from the letter at its place in
// $20 when the claim knows it). It returns the places of the updated
// elements. A job may appear once: when two rows of x match one job, which
// of them the update uses is not defined. A NULL definition keeps the
// stored one.
//
// A record that ends a one-time job (state Completed or Faulted, no due
// time) cannot be a heap-only update, as a claim is: the state is indexed
// (jobs_state, and jobs_final's predicate). Its new row version leaves
// jobs_due (whose predicate needs a due time) and takes an entry in each
// other index of jobs, every one of which a query reads: the primary key
// (lookups by name), jobs_state (lists by state), jobs_final (Prune of
// final jobs by age) and jobs_slot (a create's free quota place). Its
// history row takes an entry in history's primary key (the history of
// all jobs, newest first), history_job (a job's history; PerJob pruning)
// and history_end (Stats; HistoryBefore pruning); history_status and
// history_faulted leave completed entries out. On the steady benchmark,
// a schema without history_end spent no less server CPU per occurrence
// than the runs' spread.
var recordBatchSQL = `WITH x AS (
		SELECT * FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
			$10::bigint[], $11::bigint[], $12::bigint[], $21::bigint[])
			WITH ORDINALITY AS x(collection, name, version, definition, state, status, schedule, etag, created_at, updated_at, due_at, incarnation, i)
	), u AS (
		UPDATE {s}.jobs j SET definition = coalesce(x.definition::json, j.definition), state = x.state, status = x.status::json, schedule = x.schedule::json,
			etag = x.etag, version = x.version + 1, created_at = x.created_at, updated_at = x.updated_at, due_at = x.due_at,
			lease_owner = '', lease_until = NULL
		FROM x
		WHERE j.collection = x.collection AND j.name = x.name AND j.lease_owner = $1 AND j.version = x.version
			AND j.created_at IS NOT DISTINCT FROM x.created_at AND j.incarnation = x.incarnation
		RETURNING x.i, j.collection, j.name,
			` + fmt.Sprintf(wasSQL, "substr($20, x.i::integer, 1)", "x.collection", "x.name") + ` AS was, j.state
	), d AS (
		INSERT INTO {s}.job_count_deltas (collection, state, n)
		SELECT u.collection, m.state, sum(m.n) FROM u, LATERAL (VALUES (u.was, -1), (u.state, 1)) AS m(state, n)
		WHERE u.was <> u.state
		GROUP BY 1, 2 HAVING sum(m.n) <> 0
	), h AS (
		INSERT INTO {s}.history (collection, job, status, end_time, entry, action_name, retry_count, faulted)
		SELECT u.collection, u.name, y.status, y.end_time, y.entry::json, y.action_name, y.retry_count, y.faulted
		FROM unnest($13::bigint[], $14::text[], $15::bigint[], $16::text[], $17::text[], $18::integer[], $19::boolean[])
			WITH ORDINALITY AS y(i, status, end_time, entry, action_name, retry_count, faulted, n)
		JOIN u ON u.i = y.i
		ORDER BY y.n
	)
	SELECT coalesce(array_agg(i), '{}') FROM u`

// batchArgs collects the arguments of recordBatchSQL, one element at a
// time, in columns that a store reuses from batch to batch (newBatchArgs).
type batchArgs struct {
	colls, names, defs, states, statuses, schedules, etags column[pgtype.Text] // a NULL definition: the stored one stays
	versions, created, updated, due, incarnations          column[pgtype.Int8]
	h                                                      historyArgs
	places                                                 []int                     // batch index of each place - 1
	was                                                    []byte                    // the stateLetter of the state replaced, per place
	defJSON                                                map[*scheduler.Job]string // the definitions encoded
	texts                                                  sqlstore.Texts            // the JSON texts of statuses, schedules and entries
	seen                                                   map[[2]string]struct{}    // repeatsJob's, empty between batches
}

// historyArgs are the columns of history entries of recordSQL and
// recordBatchSQL.
type historyArgs struct {
	elem                  column[pgtype.Int8] // the place (from 1) of each entry's element; recordBatchSQL only
	status, entry, action column[pgtype.Text]
	end                   column[pgtype.Int8]
	retry                 column[pgtype.Int4]
	faulted               column[pgtype.Bool]
}

// historyColumns are the members of a history entry that the columns of
// history hold (collection, job, status, end_time, action_name and
// retry_count), which its JSON leaves out.
var historyColumns = sqlstore.HistoryColumns{Action: true}

// add appends the entries of history, of the batch's element at place,
// the job collection/name, their JSON texts in t.
func (h *historyArgs) add(t *sqlstore.Texts, place int64, collection, name string, history []scheduler.HistoryEntry) error {
	for i := range history {
		e := &history[i]
		hr, err := t.EncodeHistory(historyColumns, e, collection, name)
		if err != nil {
			return fmt.Errorf("store/postgres: record: %w", err)
		}
		h.elem.add(bigint(place, true))
		h.addRow(&hr)
		h.faulted.add(pgtype.Bool{Bool: e.Faulted, Valid: true})
	}
	return nil
}

// addRow appends the columns of history row r that the history
// statements pass: status, entry, action name, end time and retry count.
func (h *historyArgs) addRow(r *sqlstore.HistoryRow) {
	h.status.add(text(r.Status))
	h.entry.add(text(r.Entry))
	h.action.add(text(r.ActionName))
	h.end.add(bigint(r.End, r.HasEnd))
	h.retry.add(pgtype.Int4{Int32: r.RetryCount, Valid: true})
}

// truncate drops the entries from the n-th on.
func (h *historyArgs) truncate(n int) {
	for _, c := range []*column[pgtype.Text]{&h.status, &h.entry, &h.action} {
		clear(c.v[n:])
		c.v = c.v[:n]
	}
	h.elem.v, h.end.v, h.retry.v, h.faulted.v = h.elem.v[:n], h.end.v[:n], h.retry.v[:n], h.faulted.v[:n]
}

// batchArgsPool holds the batchArgs of batches done, their columns empty.
var batchArgsPool = sync.Pool{New: func() any { return new(batchArgs) }}

// newBatchArgs returns empty batchArgs, with the room of a batch before.
func newBatchArgs() *batchArgs { return batchArgsPool.Get().(*batchArgs) }

// free empties a and gives it back for another batch, unless a large
// batch made it too large to keep. Nothing may use a's columns, or the
// texts they hold, after.
func (a *batchArgs) free() {
	// A map does not shrink when cleared: len(a.seen) is the size it grew to.
	if cap(a.places) > 4096 || cap(a.h.entry.v) > 4096 || a.texts.Cap() > 4<<20 || len(a.seen) > 4096 {
		return
	}
	for _, c := range []*column[pgtype.Text]{&a.colls, &a.names, &a.defs, &a.states, &a.statuses, &a.schedules, &a.etags} {
		c.reset()
	}
	a.h.truncate(0)
	a.versions.reset()
	a.created.reset()
	a.updated.reset()
	a.due.reset()
	a.incarnations.reset()
	a.places, a.was = a.places[:0], a.was[:0]
	clear(a.defJSON)
	clear(a.seen)
	a.texts.Reset()
	batchArgsPool.Put(a)
}

// add appends the job and history of batch element i, r.
func (a *batchArgs) add(i int, r scheduler.RecordRequest) error {
	j := r.Job
	if a.defJSON == nil && !r.KeepDefinition {
		a.defJSON = map[*scheduler.Job]string{}
	}
	var row sqlstore.JobRow
	if err := a.texts.EncodeRecord(&row, j, r.KeepDefinition, a.defJSON); err != nil {
		return fmt.Errorf("store/postgres: record: %w", err)
	}
	n := len(a.h.entry.v)
	if err := a.h.add(&a.texts, int64(len(a.places)+1), j.Collection, j.Name, r.History); err != nil {
		a.h.truncate(n) // the element is left out, with the entries it added
		return err
	}
	a.places, a.was = append(a.places, i), append(a.was, claimedState(j))
	a.colls.add(text(j.Collection))
	a.names.add(text(j.Name))
	a.versions.add(bigint(j.Version, true))
	a.defs.add(pgtype.Text{String: row.Definition, Valid: !r.KeepDefinition})
	a.states.add(text(row.State))
	a.statuses.add(text(row.Status))
	a.schedules.add(text(row.Schedule))
	a.etags.add(text(row.ETag))
	a.created.add(bigint(row.Created, row.HasCreated))
	a.updated.add(bigint(row.Updated, row.HasUpdated))
	a.due.add(bigint(row.DueAt, row.HasDue))
	a.incarnations.add(bigint(j.Incarnation, true))
	return nil
}

func (a *batchArgs) args(owner string) []any {
	return []any{owner, &a.colls, &a.names, &a.versions, &a.defs, &a.states, &a.statuses, &a.schedules, &a.etags,
		&a.created, &a.updated, &a.due, &a.h.elem, &a.h.status, &a.h.end, &a.h.entry, &a.h.action, &a.h.retry, &a.h.faulted, string(a.was), &a.incarnations}
}

// recorded reports whether a Record of j whose outcome the connection did
// not report (a cancelled context, a lost connection) committed all the
// same. Only that Record can have left the job with version j.Version+1
// and no lease: a claim by anyone else would have raised the version
// further, and a PutJob keeps the lease. Failing that, the Record
// committed if its history is stored (see historyStored). The row lock
// waits for the statement if it is still running.
func (s *Store) recorded(ctx context.Context, j *scheduler.JobRecord, history []scheduler.HistoryEntry) bool {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var holder string
	var version int64
	var created, incarnation pgtype.Int8
	err := s.engine.QueryRow(cctx, s.sql("SELECT lease_owner, version, created_at, incarnation FROM {s}.jobs WHERE collection = $1 AND name = $2 FOR SHARE"),
		j.Collection, j.Name).Scan(&holder, &version, &created, &incarnation)
	if err != nil || !sameJob(created, incarnation, j) {
		return false
	}
	if holder == "" && version == j.Version+1 {
		return true
	}
	stored, err := s.historyStored(cctx, j, history)
	return err == nil && stored
}

// sameJob reports whether created and incarnation, a job's created_at and
// incarnation, are j's Created and Incarnation: whether the job stored is
// the one j was read from, not another of the same name that was created
// after that one was deleted.
func sameJob(created, incarnation pgtype.Int8, j *scheduler.JobRecord) bool {
	return created.Valid == !j.Created.IsZero() && created.Int64 == sqlstore.NanosInt(j.Created) && incarnation.Int64 == j.Incarnation
}

// historyStored reports whether every entry of history is stored for the
// job j, which identifies a Record that committed although its caller
// heard an error, when the caller repeats it later: the job may have been
// claimed or written since, but the outcome of an attempt brings an entry
// with the attempt's execution tag, retry count and start and end to the
// nanosecond, which no other Record writes. A Record without history is
// not recognised this way.
func (s *Store) historyStored(ctx context.Context, j *scheduler.JobRecord, history []scheduler.HistoryEntry) (bool, error) {
	if len(history) == 0 {
		return false, nil
	}
	var rows []sqlstore.HistoryRow
	for i := range history {
		hr, err := historyColumns.EncodeHistory(&history[i], j.Collection, j.Name)
		if err != nil {
			return false, err
		}
		if !slices.Contains(rows, *hr) {
			rows = append(rows, *hr)
		}
	}
	var h historyArgs
	for i := range rows {
		h.addRow(&rows[i])
	}
	var n int
	err := s.engine.QueryRow(ctx, s.sql(`SELECT count(DISTINCT x.n) FROM {s}.history h
		JOIN unnest($3::text[], $4::text[], $5::text[], $6::bigint[], $7::integer[]) WITH ORDINALITY AS x(entry, status, action_name, end_time, retry_count, n)
			ON h.entry::text = x.entry AND h.status = x.status AND h.action_name = x.action_name
				AND h.end_time IS NOT DISTINCT FROM x.end_time AND h.retry_count = x.retry_count
		WHERE h.collection = $1 AND h.job = $2`), j.Collection, j.Name, &h.entry, &h.status, &h.action, &h.end, &h.retry).Scan(&n)
	return n == len(rows), err
}

// historyRowColumns are the columns of history that scanHistory reads, in
// its order.
const historyRowColumns = "status, end_time, action_name, retry_count, entry::text AS entry"

// scanHistory returns the entry that row holds in historyRowColumns, after
// the values of lead (which may point at r's names), the entry's row r
// holding the names of its job; ok is false when the columns are NULL (an
// outer join that found no entry).
func scanHistory(row pgx.Row, r *sqlstore.HistoryRow, lead ...any) (h scheduler.HistoryEntry, ok bool, err error) {
	var status, action, entry pgtype.Text
	var end pgtype.Int8
	var retry pgtype.Int4
	if err := row.Scan(append(lead, &status, &end, &action, &retry, &entry)...); err != nil || !entry.Valid {
		return h, false, err
	}
	r.Status, r.End, r.HasEnd, r.ActionName, r.RetryCount, r.Entry = status.String, end.Int64, end.Valid, action.String, retry.Int32, entry.String
	h, err = historyColumns.DecodeHistory(r)
	return h, err == nil, err
}

// ListHistory implements [scheduler.Store].
func (s *Store) ListHistory(ctx context.Context, collection, job string, f scheduler.HistoryFilter) ([]scheduler.HistoryEntry, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	// A filter that leaves out the job's collection keeps no entries,
	// but the job must still exist.
	none := f.Collections != nil && !slices.Contains(f.Collections, collection)
	f.Collections = nil
	where, args := historyWhere(f, []any{collection, job, limit(f.Top), max(f.Skip, 0)})
	if none {
		where += " AND false"
	}
	rows, err := s.pool.Query(ctx, s.sql(`SELECT h.status, h.end_time, h.action_name, h.retry_count, h.entry FROM {s}.jobs j
		LEFT JOIN LATERAL (SELECT `+historyRowColumns+` FROM {s}.history WHERE collection = j.collection AND job = j.name`+where+`
			ORDER BY id DESC LIMIT $3 OFFSET $4) h ON true
		WHERE j.collection = $1 AND j.name = $2`), args...)
	if err != nil {
		return nil, wrap("list history of job", collection+"/"+job, err)
	}
	found := false
	var out []scheduler.HistoryEntry
	for rows.Next() {
		found = true
		h, ok, err := scanHistory(rows, &sqlstore.HistoryRow{Collection: collection, Job: job})
		if err == nil && !ok {
			continue
		}
		if err != nil {
			rows.Close()
			return nil, wrap("list history of job", collection+"/"+job, err)
		}
		out = append(out, h)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, wrap("list history of job", collection+"/"+job, err)
	}
	if !found {
		return nil, s.missing(ctx, collection, job)
	}
	return out, nil
}

// Prune implements [scheduler.Store]. It also folds the changes of the
// job counts (see CountJobs).
func (s *Store) Prune(ctx context.Context, p scheduler.PruneRequest) (int, error) {
	total := 0
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		total = 0
		if err := s.d.PrunePermits(ctx, pgConn{tx}, p.LimitsBefore); err != nil {
			return err
		}
		if !p.FinalJobsBefore.IsZero() {
			var colls, names []string
			err := tx.QueryRow(ctx, s.sql(`WITH d AS (
					DELETE FROM {s}.jobs WHERE state IN ('Completed', 'Faulted') AND (updated_at IS NULL OR updated_at < $1)
					RETURNING collection, name
				)
				SELECT coalesce(array_agg(collection), '{}'), coalesce(array_agg(name), '{}') FROM d`),
				sqlstore.NanosInt(p.FinalJobsBefore)).Scan(&colls, &names)
			if err != nil {
				return err
			}
			if len(names) > 0 {
				if _, err := tx.Exec(ctx, s.sql(`DELETE FROM {s}.history h USING unnest($1::text[], $2::text[]) AS d(collection, name)
					WHERE h.collection = d.collection AND h.job = d.name`), colls, names); err != nil {
					return err
				}
			}
			total += len(names)
		}
		if !p.HistoryBefore.IsZero() {
			tag, err := tx.Exec(ctx, s.sql("DELETE FROM {s}.history WHERE end_time IS NULL OR end_time < $1"), sqlstore.NanosInt(p.HistoryBefore))
			if err != nil {
				return err
			}
			total += int(tag.RowsAffected())
		}
		if p.PerJob > 0 {
			tag, err := tx.Exec(ctx, s.sql(`DELETE FROM {s}.history h USING (
					SELECT o.collection, o.job, (SELECT id FROM {s}.history WHERE collection = o.collection AND job = o.job
						ORDER BY id DESC LIMIT 1 OFFSET $1) AS last
					FROM {s}.history o GROUP BY o.collection, o.job HAVING count(*) > $1
				) x
				WHERE h.collection = x.collection AND h.job = x.job AND h.id <= x.last`), p.PerJob)
			if err != nil {
				return err
			}
			total += int(tag.RowsAffected())
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store/postgres: prune: %w", err)
	}
	// The engine prunes every few minutes: the job counts' changes are
	// folded then too, so that they do not pile up in a store whose
	// counts nobody reads.
	if err := s.foldCounts(ctx); err != nil {
		return total, fmt.Errorf("store/postgres: prune: fold the job counts: %w", err)
	}
	return total, nil
}
