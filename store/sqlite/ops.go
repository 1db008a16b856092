package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

const (
	jobCols  = sqlstore.JobCols
	collCols = sqlstore.CollectionCols
)

// readConn runs the store's reads that are one statement (GetJob,
// ReadForPut, GetCollection) on its pool, each statement prepared once
// (database/sql prepares it again on each connection that runs it): SQLite
// parses a statement anew each time it is run unprepared, which was a
// sixth of a put's processor time.
type readConn struct{ s *Store }

// stmt returns statement q prepared.
func (c readConn) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := c.s.reads.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := c.s.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if prev, loaded := c.s.reads.LoadOrStore(q, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

func (c readConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return 0, err
	}
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (c readConn) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return sqlRow{st.QueryRowContext(ctx, args...)}
}

// errRow is a row whose query could not run.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// sqlRow reports sql.ErrNoRows as sqlstore.ErrNoRows.
type sqlRow struct{ r *sql.Row }

func (r sqlRow) Scan(dest ...any) error {
	err := r.r.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return sqlstore.ErrNoRows
	}
	return err
}

type scanner interface{ Scan(dest ...any) error }

func scanJob(r scanner, extra ...any) (*scheduler.JobRecord, error) {
	return sqlstore.ScanJob(r, extra...)
}

// PutCollection implements [scheduler.Store].
func (s *Store) PutCollection(ctx context.Context, c *scheduler.CollectionRecord) error {
	return s.write(ctx, func(tx *wtx) error {
		_, err := s.d.PutCollection(tx.ctx, tx, c, false)
		return err
	})
}

func wrap(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("store/sqlite: %s %q: %w", op, name, err)
}

// GetCollection implements [scheduler.Store].
func (s *Store) GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	return s.d.GetCollection(ctx, readConn{s}, name)
}

// ListCollections implements [scheduler.Store].
func (s *Store) ListCollections(ctx context.Context) ([]*scheduler.CollectionRecord, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+collCols+" FROM collections ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("store/sqlite: list job collections: %w", err)
	}
	defer rows.Close()
	out := []*scheduler.CollectionRecord{}
	for rows.Next() {
		c, err := sqlstore.ScanCollection(rows)
		if err != nil {
			return nil, fmt.Errorf("store/sqlite: list job collections: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store/sqlite: list job collections: %w", err)
	}
	return out, nil
}

// DeleteCollection implements [scheduler.Store].
// The collection's jobs and their history go with its row (ON DELETE
// CASCADE).
func (s *Store) DeleteCollection(ctx context.Context, name, etag string) error {
	return s.write(ctx, func(tx *wtx) error { return s.d.DeleteCollection(tx.ctx, tx, name, etag) })
}

// PutJob implements [scheduler.Store].
func (s *Store) PutJob(ctx context.Context, j *scheduler.JobRecord) error {
	row, err := sqlstore.EncodeJob(j)
	if err != nil {
		return fmt.Errorf("store/sqlite: put job: %w", err)
	}
	return s.write(ctx, func(tx *wtx) error {
		if j.Version == 0 {
			return s.d.CreateJob(tx.ctx, tx, j, row, false)
		}
		return s.d.ReplaceJob(tx.ctx, tx, j, row, false)
	})
}

// CreateJob implements [scheduler.JobCreator]: one write of the writer,
// one statement when the store knows the quota of col already, which it
// does after a create over the same record. The job is encoded before the
// write, as PutJob encodes it.
func (s *Store) CreateJob(ctx context.Context, col *scheduler.CollectionRecord, j *scheduler.JobRecord) error {
	row, err := s.d.EncodeRow(j)
	if err != nil {
		return err
	}
	return s.write(ctx, func(tx *wtx) error { return s.d.CreateJobOver(tx.ctx, tx, col, j, row, false) })
}

// GetJob implements [scheduler.Store].
func (s *Store) GetJob(ctx context.Context, collection, name string) (*scheduler.JobRecord, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	return s.d.GetJob(ctx, readConn{s}, collection, name)
}

// ReadForPut implements [scheduler.PutReader]: one statement.
func (s *Store) ReadForPut(ctx context.Context, collection, name string) (*scheduler.CollectionRecord, *scheduler.JobRecord, error) {
	if err := s.readable(); err != nil {
		return nil, nil, err
	}
	return s.d.ReadForPut(ctx, readConn{s}, collection, name)
}

// missing returns the not-found error of a job, naming the collection when
// that is what is missing.
func (s *Store) missing(ctx context.Context, collection, name string) error {
	return s.d.Missing(ctx, readConn{s}, collection, name)
}

func limitOffset(top, skip int) (int, int) {
	if top <= 0 {
		top = -1
	}
	return top, max(skip, 0)
}

// orderKeys are the expressions of the orders of ListJobs besides the
// name, read from the stored status: its times are UTC RFC 3339 with the
// fraction's trailing zeros left out, which without the "Z" sort as text
// in the order of their instants, to the nanosecond; a job without the
// time takes "~", after every time. No index holds them: SQLite sorts the
// collection's jobs (each index would cost every write of a job's status,
// one per occurrence, an entry).
var orderKeys = map[scheduler.JobOrder]string{
	scheduler.JobsByNextExecution: "coalesce(rtrim(json_extract(status, '$.nextExecutionTime'), 'Z'), '~')",
	scheduler.JobsByLastExecution: "coalesce(rtrim(json_extract(status, '$.lastExecutionTime'), 'Z'), '~')",
	scheduler.JobsByFailures:      "coalesce(json_extract(status, '$.failureCount'), 0)",
}

// orderBy returns the ORDER BY terms of f's order: its key (none for the
// name), then the name, each descending with f.Descending.
func orderBy(f scheduler.JobFilter) string {
	dir := ""
	if f.Descending {
		dir = " DESC"
	}
	if k, ok := orderKeys[f.OrderBy]; ok {
		return k + dir + ", name" + dir
	}
	return "name" + dir
}

// listJobsSQL returns the query of ListJobs and its arguments.
func listJobsSQL(collection string, f scheduler.JobFilter) (string, []any) {
	top, skip := limitOffset(f.Top, f.Skip)
	q, args := "SELECT "+jobCols+" FROM jobs WHERE collection = ?", []any{collection}
	if f.State != "" {
		q, args = q+" AND state = ?", append(args, string(f.State))
	}
	if f.Tag.Name != "" {
		q, args = q+" AND EXISTS (SELECT 1 FROM json_each(jobs.tags) WHERE key = ? AND (? = '' OR value = ?))", append(args, f.Tag.Name, f.Tag.Value, f.Tag.Value)
	}
	return q + " ORDER BY " + orderBy(f) + " LIMIT ? OFFSET ?", append(args, top, skip)
}

// ListJobs implements [scheduler.Store].
func (s *Store) ListJobs(ctx context.Context, collection string, f scheduler.JobFilter) ([]*scheduler.JobRecord, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, wrap("list jobs of collection", collection, err)
	}
	defer tx.Rollback()
	var one int
	if err := tx.QueryRowContext(ctx, "SELECT 1 FROM collections WHERE name = ?", collection).Scan(&one); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, &scheduler.NotFoundError{Collection: collection}
		}
		return nil, wrap("list jobs of collection", collection, err)
	}
	q, args := listJobsSQL(collection, f)
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, wrap("list jobs of collection", collection, err)
	}
	defer rows.Close()
	var out []*scheduler.JobRecord
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, wrap("list jobs of collection", collection, err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list jobs of collection", collection, err)
	}
	return out, nil
}

// DeleteJob implements [scheduler.Store].
func (s *Store) DeleteJob(ctx context.Context, collection, name, etag string) error {
	return s.write(ctx, func(tx *wtx) error { return s.d.DeleteJob(tx.ctx, tx, collection, name, etag) })
}

var errMissing = errors.New("missing")

// ClaimDue implements [scheduler.Store]: ClaimDueBy with DueBy = now.
func (s *Store) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*scheduler.JobRecord, error) {
	return s.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: now, DueBy: now, Owner: owner, LeaseUntil: leaseUntil, Limit: limit})
}

// ClaimDueBy implements [scheduler.AheadClaimer]. A job's ready_at is the
// later of its due time and its lease's end: the jobs ready by DueBy, less
// those whose leases end after Now.
func (s *Store) ClaimDueBy(ctx context.Context, c scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	now, owner, leaseUntil, limit := c.Now, c.Owner, c.LeaseUntil, c.Limit
	if limit < 1 {
		return nil, nil
	}
	if c.DueBy.Before(now) {
		return nil, fmt.Errorf("store/sqlite: claim: due horizon %v is before now %v", c.DueBy, now)
	}
	if !leaseUntil.After(c.DueBy) {
		return nil, fmt.Errorf("store/sqlite: claim: lease end %v is not after %v", leaseUntil, c.DueBy)
	}
	// The writer only reads and updates rows; the JSON columns are
	// decoded here, after the commit, so that claiming holds up other
	// writes as little as possible.
	type claimed struct {
		row       *sqlstore.JobRow
		prev      string        // the owner of an expired lease
		prevUntil sql.NullInt64 // its end
	}
	var got []claimed
	err := s.writeFirst(ctx, func(tx *wtx) error {
		got = got[:0]
		rows, err := tx.query("SELECT rowid, lease_owner, lease_until FROM jobs WHERE ready_at <= ? AND (lease_until IS NULL OR lease_until <= ?) ORDER BY ready_at, collection, name LIMIT ?",
			sqlstore.NanosInt(c.DueBy), sqlstore.NanosInt(now), limit)
		if err != nil {
			return err
		}
		// The rows' order, by rowid, and their ids as a JSON array.
		order := make(map[int64]int)
		ids := []byte{'['}
		for rows.Next() {
			var id int64
			var prev string
			var prevUntil sql.NullInt64
			if err := rows.Scan(&id, &prev, &prevUntil); err != nil {
				rows.Close()
				return err
			}
			if len(got) > 0 {
				ids = append(ids, ',')
			}
			ids = strconv.AppendInt(ids, id, 10)
			order[id] = len(got)
			got = append(got, claimed{prev: prev, prevUntil: prevUntil})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(got) == 0 {
			return nil
		}
		ids = append(ids, ']')
		// One statement for all of them.
		rows, err = tx.query("UPDATE jobs SET lease_owner = ?, lease_until = ?, version = version + 1 WHERE rowid IN (SELECT value FROM json_each(?)) RETURNING rowid, "+jobCols,
			owner, sqlstore.NanosInt(leaseUntil), string(ids))
		if err != nil {
			return err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var id int64
			row, err := sqlstore.ScanJobRow(rowsFirst{rows, &id})
			if err != nil {
				return err
			}
			i, ok := order[id]
			if !ok || got[i].row != nil {
				return fmt.Errorf("claimed row %d twice or unasked", id)
			}
			got[i].row = row
			n++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if n != len(got) {
			return fmt.Errorf("claimed %d of %d due rows", n, len(got))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store/sqlite: claim due jobs: %w", err)
	}
	out := make([]*scheduler.JobRecord, len(got))
	for i, c := range got {
		j, err := sqlstore.DecodeJob(c.row)
		if err != nil {
			// The claim stands; the lease lets the job be claimed again
			// once it expires, as when a claimant dies.
			return nil, fmt.Errorf("store/sqlite: claim due jobs: %w", err)
		}
		j.PreviousLeaseOwner = c.prev
		if c.prev != "" {
			j.PreviousLeaseUntil = sqlstore.Time(c.prevUntil.Int64, c.prevUntil.Valid)
		}
		out[i] = j
	}
	return out, nil
}

// GiveBack implements [scheduler.AheadClaimer]: all of claims in one
// write transaction, each job apart. It waits for its turn at the
// store's writer, which comes after at most the group of writes under
// way (the scheduler's writes go first), and then for the write lock of
// the file as any write does (see Options.BusyTimeout); once begun, it
// runs to its end whatever ctx does. So a give-back that meets no other
// process's lock always finishes, and one that meets a transaction holding
// the lock fails after Options.BusyTimeout. ctx bounds the wait for its
// turn, and ends the wait for the lock at the next of the writer's tries;
// a ctx without a deadline is given no other bound, so while other
// processes keep taking the lock in turn (each commit restarts the busy
// timeout) it waits for them.
func (s *Store) GiveBack(ctx context.Context, owner string, claims []*scheduler.JobRecord) []error {
	errs := make([]error, len(claims))
	err := s.writeFirst(ctx, func(tx *wtx) error {
		for i, r := range claims {
			errs[i] = s.d.GiveBack(tx.ctx, tx, owner, r)
		}
		return nil
	})
	if err != nil {
		for i := range errs {
			errs[i] = fmt.Errorf("store/sqlite: give back job %q: %w", claims[i].ID(), err)
		}
	}
	return errs
}

// rowsFirst scans a row whose first column is read into first and the
// others into the destinations Scan is given.
type rowsFirst struct {
	rows  *sql.Rows
	first any
}

func (r rowsFirst) Scan(dest ...any) error {
	return r.rows.Scan(append([]any{r.first}, dest...)...)
}

// NextDue implements [scheduler.Store].
func (s *Store) NextDue(ctx context.Context) (time.Time, error) {
	if err := s.readable(); err != nil {
		return time.Time{}, err
	}
	var n sql.NullInt64
	if err := s.db.QueryRowContext(ctx, "SELECT min(ready_at) FROM jobs WHERE ready_at IS NOT NULL").Scan(&n); err != nil {
		return time.Time{}, fmt.Errorf("store/sqlite: next due job: %w", err)
	}
	return sqlstore.Time(n.Int64, n.Valid), nil
}

// ExtendLease implements [scheduler.Store].
func (s *Store) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	var holder string
	err := s.writeFirst(ctx, func(tx *wtx) error {
		n, err := tx.exec("UPDATE jobs SET lease_until = ? WHERE collection = ? AND name = ? AND lease_owner = ? AND lease_owner <> ''",
			sqlstore.NanosInt(until), collection, name, owner)
		if err != nil {
			return wrap("extend lease of job", collection+"/"+name, err)
		}
		if n == 1 {
			return nil
		}
		err = tx.queryRow("SELECT lease_owner FROM jobs WHERE collection = ? AND name = ?", collection, name).Scan(&holder)
		if errors.Is(err, sql.ErrNoRows) {
			return errMissing
		}
		if err != nil {
			return wrap("extend lease of job", collection+"/"+name, err)
		}
		return fmt.Errorf("store/sqlite: extend lease of job %q: held by %q, not %q: %w", collection+"/"+name, holder, owner, scheduler.ErrLeaseLost)
	})
	if errors.Is(err, errMissing) {
		return s.missing(ctx, collection, name)
	}
	return err
}

// ExtendLeases implements [scheduler.LeaseExtender]: one write, whose
// one statement extends the leases that owner holds and, when some are
// not, a second finds out why.
func (s *Store) ExtendLeases(ctx context.Context, owner string, until time.Time, jobs []scheduler.JobKey) []error {
	if len(jobs) == 0 {
		return nil
	}
	keys, err := sqlstore.LeaseKeys(jobs)
	var not []byte
	if err == nil {
		err = s.writeFirst(ctx, func(tx *wtx) error {
			n, err := tx.exec(extendLeasesSQL, sqlstore.NanosInt(until), keys, owner)
			if err != nil || n == int64(len(jobs)) {
				not = []byte("[]")
				return err
			}
			return tx.queryRow(notExtendedSQL, keys, owner).Scan(&not)
		})
	}
	return s.d.ExtendErrors(owner, jobs, not, err)
}

// extendLeasesSQL moves to ?1 the leases that owner ?3 holds of the jobs
// of ?2, a JSON array of [collection, name] pairs.
const extendLeasesSQL = `UPDATE jobs SET lease_until = ?1
	FROM (SELECT value ->> 0 AS collection, value ->> 1 AS name FROM json_each(?2)) AS k
	WHERE jobs.collection = k.collection AND jobs.name = k.name AND jobs.lease_owner = ?3 AND jobs.lease_owner <> ''`

// notExtendedSQL returns, after extendLeasesSQL, the jobs of ?2 whose
// leases owner ?3 does not hold, as a JSON array of sqlstore.NotExtended.
const notExtendedSQL = `SELECT coalesce(json_group_array(json_object('i', k.key + 1, 'holder', j.lease_owner,
		'coll', json(iif(EXISTS (SELECT 1 FROM collections c WHERE c.name = k.value ->> 0), 'true', 'false')))), '[]')
	FROM json_each(?1) AS k LEFT JOIN jobs j ON j.collection = k.value ->> 0 AND j.name = k.value ->> 1
	WHERE j.lease_owner IS NULL OR j.lease_owner <> ?2 OR ?2 = ''`

// encodeRecord returns the rows of a Record call; with keepDef, the row
// has no definition (see [scheduler.RecordRequest.KeepDefinition]).
func encodeRecord(j *scheduler.JobRecord, keepDef bool, history []scheduler.HistoryEntry) (*sqlstore.JobRow, []*sqlstore.HistoryRow, error) {
	row, err := sqlstore.EncodeRecord(j, keepDef, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("store/sqlite: record: %w", err)
	}
	hist := make([]*sqlstore.HistoryRow, len(history))
	for i := range history {
		if hist[i], err = historyColumns.EncodeHistory(&history[i], j.Collection, j.Name); err != nil {
			return nil, nil, fmt.Errorf("store/sqlite: record: %w", err)
		}
	}
	return row, hist, nil
}

// historyColumns are the members of a history entry that the columns of
// history hold (collection, job, status and end_time), which its JSON
// leaves out.
var historyColumns = sqlstore.HistoryColumns{}

// historySelect are the columns of history that scanHistory reads.
const historySelect = "collection, job, status, end_time, entry"

// scanHistory returns the entry of a row of historySelect.
func scanHistory(rows *sql.Rows) (scheduler.HistoryEntry, error) {
	var r sqlstore.HistoryRow
	var end sql.NullInt64
	if err := rows.Scan(&r.Collection, &r.Job, &r.Status, &end, &r.Entry); err != nil {
		return scheduler.HistoryEntry{}, err
	}
	r.End, r.HasEnd = end.Int64, end.Valid
	return historyColumns.DecodeHistory(&r)
}

// record is the body of Record inside a write transaction. It returns
// errMissing when the job does not exist, and an error matching
// ErrNotFound when the job stored is another one of the same name (its
// Incarnation or Created differs from j's: the job was deleted and
// created again). A
// row without its definition keeps the stored one.
func record(tx *wtx, owner string, j *scheduler.JobRecord, row *sqlstore.JobRow, hist []*sqlstore.HistoryRow) error {
	var n int64
	if owner != "" {
		var err error
		n, err = tx.exec(`UPDATE jobs SET definition = coalesce(?, definition), state = ?, status = ?, schedule = ?, etag = ?, version = ?,
			created_at = ?, updated_at = ?, due_at = ?, lease_owner = '', lease_until = NULL
			WHERE collection = ? AND name = ? AND lease_owner = ? AND version = ? AND created_at IS ? AND incarnation = ?`,
			row.DefinitionArg(), row.State, row.Status, row.Schedule, row.ETag, j.Version+1,
			row.CreatedArg(), row.UpdatedArg(), row.DueArg(), j.Collection, j.Name, owner, j.Version, row.CreatedArg(), j.Incarnation)
		if err != nil {
			return wrap("record job", j.ID(), err)
		}
	}
	if n == 0 {
		var holder string
		var version int64
		var created sql.NullInt64
		var incarnation int64
		err := tx.queryRow("SELECT lease_owner, version, created_at, incarnation FROM jobs WHERE collection = ? AND name = ?", j.Collection, j.Name).Scan(&holder, &version, &created, &incarnation)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return errMissing
		case err != nil:
			return wrap("record job", j.ID(), err)
		case incarnation != j.Incarnation || created.Valid != row.HasCreated || created.Valid && created.Int64 != row.Created:
			return fmt.Errorf("store/sqlite: record: %w", scheduler.NewRecreatedErrorOf(j, sqlstore.Time(created.Int64, created.Valid), incarnation))
		case holder != owner || owner == "":
			return fmt.Errorf("store/sqlite: record job %q: lease held by %q, not %q: %w", j.ID(), holder, owner, scheduler.ErrLeaseLost)
		default:
			return fmt.Errorf("store/sqlite: record job %q: version %d, stored %d: %w", j.ID(), j.Version, version, scheduler.ErrConflict)
		}
	}
	for _, h := range hist {
		if _, err := tx.exec("INSERT INTO history (collection, job, status, end_time, entry) VALUES (?, ?, ?, ?, ?)",
			j.Collection, j.Name, h.Status, h.EndArg(), h.Entry); err != nil {
			return wrap("record history of job", j.ID(), err)
		}
	}
	return nil
}

// Record implements [scheduler.Store].
func (s *Store) Record(ctx context.Context, owner string, j *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	row, hist, err := encodeRecord(j, false, history)
	if err != nil {
		return err
	}
	err = s.writeFirst(ctx, func(tx *wtx) error { return record(tx, owner, j, row, hist) })
	if errors.Is(err, errMissing) {
		return s.missing(ctx, j.Collection, j.Name)
	}
	return err
}

// RecordBatch implements [scheduler.BatchRecorder]: the elements are
// recorded in one transaction, and an element that fails changes nothing
// and leaves the others alone.
//
// An element that fails before it changes anything (the job is gone, its
// lease lost or its version stale: the update matched no row) needs no
// savepoint, so the batch first runs without one per element. Should an
// element fail after changing something, that run is undone and the
// batch runs again with each element inside a savepoint of its own.
func (s *Store) RecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) []error {
	errs := make([]error, len(batch))
	type enc struct {
		row  *sqlstore.JobRow
		hist []*sqlstore.HistoryRow
		err  error
	}
	encs := make([]enc, len(batch))
	for i, r := range batch {
		encs[i].row, encs[i].hist, encs[i].err = encodeRecord(r.Job, r.KeepDefinition, r.History)
	}
	run := func(savepoints bool) error {
		return s.writeFirst(ctx, func(tx *wtx) error {
			for i, r := range batch {
				if errs[i] = encs[i].err; errs[i] != nil {
					continue
				}
				if savepoints {
					if _, err := tx.exec("SAVEPOINT r"); err != nil {
						return err
					}
				}
				errs[i] = record(tx, owner, r.Job, encs[i].row, encs[i].hist)
				switch {
				case !savepoints:
					if errs[i] != nil && !changedNothing(errs[i]) {
						// With the element's reason: should SQLite
						// have undone the whole transaction (as it
						// may on a full disk), the other writes of
						// the transaction fail for it too.
						return fmt.Errorf("%w: %w", errRedo, fullError(errs[i]))
					}
					continue
				case errs[i] != nil:
					if _, err := tx.exec("ROLLBACK TO r"); err != nil {
						return fmt.Errorf("%w (undoing that element alone: %w)", fullError(errs[i]), err)
					}
				}
				if _, err := tx.exec("RELEASE r"); err != nil {
					return err
				}
			}
			return nil
		})
	}
	err := run(false)
	if errors.Is(err, errRedo) {
		err = run(true)
	}
	for i, r := range batch {
		switch {
		case err != nil && (errs[i] == nil || errors.Is(errs[i], errMissing)):
			// The transaction failed: nothing was recorded.
			errs[i] = fmt.Errorf("store/sqlite: record job %q: %w", r.Job.ID(), err)
		case errors.Is(errs[i], errMissing):
			errs[i] = s.missing(ctx, r.Job.Collection, r.Job.Name)
		default:
			errs[i] = fullError(errs[i])
		}
	}
	return errs
}

// errRedo makes RecordBatch run its batch again with savepoints.
var errRedo = errors.New("store/sqlite: record batch: an element failed after a change")

// changedNothing reports whether record failed with err before it changed
// anything: its update matched no row.
func changedNothing(err error) bool {
	return errors.Is(err, errMissing) || errors.Is(err, scheduler.ErrNotFound) || errors.Is(err, scheduler.ErrLeaseLost) || errors.Is(err, scheduler.ErrConflict)
}

// ListHistory implements [scheduler.Store].
func (s *Store) ListHistory(ctx context.Context, collection, job string, f scheduler.HistoryFilter) ([]scheduler.HistoryEntry, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, wrap("list history of job", collection+"/"+job, err)
	}
	defer tx.Rollback()
	var one int
	if err := tx.QueryRowContext(ctx, "SELECT 1 FROM jobs WHERE collection = ? AND name = ?", collection, job).Scan(&one); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, s.missing(ctx, collection, job)
		}
		return nil, wrap("list history of job", collection+"/"+job, err)
	}
	if f.Collections != nil && !slices.Contains(f.Collections, collection) {
		return nil, nil
	}
	f.Collections = nil // the job's own collection is kept
	top, skip := limitOffset(f.Top, f.Skip)
	where, args := historyWhere(f)
	args = append([]any{collection, job}, args...)
	rows, err := tx.QueryContext(ctx, "SELECT "+historySelect+" FROM history WHERE collection = ? AND job = ?"+where+" ORDER BY id DESC LIMIT ? OFFSET ?", append(args, top, skip)...)
	if err != nil {
		return nil, wrap("list history of job", collection+"/"+job, err)
	}
	defer rows.Close()
	var out []scheduler.HistoryEntry
	for rows.Next() {
		h, err := scanHistory(rows)
		if err != nil {
			return nil, wrap("list history of job", collection+"/"+job, err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list history of job", collection+"/"+job, err)
	}
	return out, nil
}

// Prune implements [scheduler.Store].
func (s *Store) Prune(ctx context.Context, p scheduler.PruneRequest) (int, error) {
	total := 0
	err := s.write(ctx, func(tx *wtx) error {
		total = 0
		if err := s.d.PrunePermits(tx.ctx, tx, p.LimitsBefore); err != nil {
			return err
		}
		if !p.FinalJobsBefore.IsZero() {
			n, err := tx.exec("DELETE FROM jobs WHERE state IN ('Completed', 'Faulted') AND (updated_at IS NULL OR updated_at < ?)",
				sqlstore.NanosInt(p.FinalJobsBefore))
			if err != nil {
				return err
			}
			total += int(n)
		}
		if !p.HistoryBefore.IsZero() {
			n, err := tx.exec("DELETE FROM history WHERE end_time IS NULL OR end_time < ?", sqlstore.NanosInt(p.HistoryBefore))
			if err != nil {
				return err
			}
			total += int(n)
		}
		if p.PerJob > 0 {
			rows, err := tx.query("SELECT collection, job FROM history GROUP BY collection, job HAVING count(*) > ?", p.PerJob)
			if err != nil {
				return err
			}
			type key struct{ c, j string }
			var over []key
			for rows.Next() {
				var k key
				if err := rows.Scan(&k.c, &k.j); err != nil {
					rows.Close()
					return err
				}
				over = append(over, k)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for _, k := range over {
				n, err := tx.exec(`DELETE FROM history WHERE collection = ? AND job = ? AND id <=
					(SELECT id FROM history WHERE collection = ? AND job = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
					k.c, k.j, k.c, k.j, p.PerJob)
				if err != nil {
					return err
				}
				total += int(n)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store/sqlite: prune: %w", err)
	}
	return total, nil
}
