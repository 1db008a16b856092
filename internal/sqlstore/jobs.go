package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	scheduler "github.com/jobclock/scheduler"
)

// Conn runs the statements of the shared operations: a store's own
// transaction or connection pool, or a transaction of the host's.
// Implementations report a query that finds no row by returning ErrNoRows
// from Row.Scan, and return the number of rows a statement changed from
// Exec.
type Conn interface {
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Row is the result of Conn.QueryRow.
type Row interface{ Scan(dest ...any) error }

// ErrNoRows is what a Conn's Row.Scan returns when there is no row.
var ErrNoRows = errors.New("sqlstore: no rows")

// Dialect is what the shared operations need to know about a backend.
// Their statements are written once, for both backends: tables as
// {s}.jobs, parameters as $1, $2, ... (which SQLite reads as numbered
// parameters too) and {lock} where the collection row is locked for the
// rest of the transaction.
type Dialect struct {
	// Name prefixes errors: "store/sqlite", "store/postgres".
	Name string
	// Schema is what {s}. becomes: a quoted schema name and a dot, or
	// empty.
	Schema string
	// Lock is what {lock} becomes: " FOR NO KEY UPDATE" on PostgreSQL;
	// empty on SQLite, whose write transactions lock the whole database.
	Lock string
	// Step, when set, runs before each step of a job's create ("count",
	// "insert", "commit"), for tests that break a transaction there.
	Step func(ctx context.Context, c Conn, step string)
	// DeleteHistory, when true, makes DeleteJob delete the job's history
	// after the job, in the same transaction, for a schema whose history
	// has no foreign key that cascades.
	DeleteHistory bool
	// JobCount, when true, makes CreateJob and DeleteJob keep the
	// number of a collection's jobs in its row (collections.job_count),
	// which CreateJob then checks the quota against instead of counting
	// the jobs. The collection row is locked before the job's row.
	JobCount bool

	queries sync.Map // template -> statement
}

// sql returns the statement of template q.
func (d *Dialect) sql(q string) string {
	if s, ok := d.queries.Load(q); ok {
		return s.(string)
	}
	s := strings.NewReplacer("{s}.", d.Schema, "{lock}", d.Lock).Replace(q)
	d.queries.Store(q, s)
	return s
}

func (d *Dialect) step(ctx context.Context, c Conn, name string) {
	if d.Step != nil {
		d.Step(ctx, c, name)
	}
}

// Wrap returns err as "NAME: OP "WHAT": err", unless it is nil or already
// says which store it comes from.
func (d *Dialect) Wrap(op, what string, err error) error {
	if err == nil || strings.HasPrefix(err.Error(), d.Name+":") {
		return err
	}
	return fmt.Errorf("%s: %s %q: %w", d.Name, op, what, err)
}

// The columns of the tables, in the order the scanners read them.
const (
	JobCols        = "collection, name, definition, state, status, schedule, etag, version, created_at, updated_at, due_at, lease_owner, lease_until"
	CollectionCols = "name, definition, enabled, etag, version, created_at, updated_at"
)

// ScanJob reads a row of JobCols, then extra.
func ScanJob(r Row, extra ...any) (*scheduler.JobRecord, error) {
	row, err := ScanJobRow(r, extra...)
	if err != nil {
		return nil, err
	}
	return DecodeJob(row)
}

// ScanJobRow reads a row of JobCols, then extra, without decoding it:
// a write transaction can leave [DecodeJob] to its caller, after the
// commit.
func ScanJobRow(r Row, extra ...any) (*JobRow, error) {
	row := new(JobRow)
	var created, updated, due, lease *int64
	dest := make([]any, 0, 13+len(extra))
	dest = append(dest, &row.Collection, &row.Name, &row.Definition, &row.State, &row.Status, &row.Schedule, &row.ETag,
		&row.Version, &created, &updated, &due, &row.LeaseOwner, &lease)
	if err := r.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	set := func(p *int64, n *int64, ok *bool) {
		if p != nil {
			*n, *ok = *p, true
		}
	}
	set(created, &row.Created, &row.HasCreated)
	set(updated, &row.Updated, &row.HasUpdated)
	set(due, &row.DueAt, &row.HasDue)
	set(lease, &row.LeaseUntil, &row.HasLease)
	return row, nil
}

// ScanCollection reads a row of CollectionCols.
func ScanCollection(r Row) (*scheduler.CollectionRecord, error) {
	var row CollectionRow
	var created, updated *int64
	if err := r.Scan(&row.Name, &row.Definition, &row.Enabled, &row.ETag, &row.Version, &created, &updated); err != nil {
		return nil, err
	}
	if created != nil {
		row.Created, row.HasCreated = *created, true
	}
	if updated != nil {
		row.Updated, row.HasUpdated = *updated, true
	}
	return DecodeCollection(&row)
}

// Missing returns the not-found error of a job, naming the collection
// when that is what is missing.
func (d *Dialect) Missing(ctx context.Context, c Conn, collection, name string) error {
	var one int
	if err := c.QueryRow(ctx, d.sql("SELECT 1 FROM {s}.collections WHERE name = $1"), collection).Scan(&one); errors.Is(err, ErrNoRows) {
		return &scheduler.NotFoundError{Collection: collection}
	}
	return &scheduler.NotFoundError{Collection: collection, Job: name}
}

// GetCollection implements [scheduler.Store.GetCollection] over c.
func (d *Dialect) GetCollection(ctx context.Context, c Conn, name string) (*scheduler.CollectionRecord, error) {
	col, err := ScanCollection(c.QueryRow(ctx, d.sql("SELECT "+CollectionCols+" FROM {s}.collections WHERE name = $1"), name))
	if errors.Is(err, ErrNoRows) {
		return nil, &scheduler.NotFoundError{Collection: name}
	}
	if err != nil {
		return nil, d.Wrap("get job collection", name, err)
	}
	return col, nil
}

// GetJob implements [scheduler.Store.GetJob] over c.
func (d *Dialect) GetJob(ctx context.Context, c Conn, collection, name string) (*scheduler.JobRecord, error) {
	j, err := ScanJob(c.QueryRow(ctx, d.sql("SELECT "+JobCols+" FROM {s}.jobs WHERE collection = $1 AND name = $2"), collection, name))
	if errors.Is(err, ErrNoRows) {
		return nil, d.Missing(ctx, c, collection, name)
	}
	if err != nil {
		return nil, d.Wrap("get job", collection+"/"+name, err)
	}
	return j, nil
}

// PutJob implements [scheduler.Store.PutJob] over c: CreateJob when
// j.Version is 0, else ReplaceJob.
func (d *Dialect) PutJob(ctx context.Context, c Conn, j *scheduler.JobRecord) error {
	row, err := EncodeJob(j)
	if err != nil {
		return fmt.Errorf("%s: put job: %w", d.Name, err)
	}
	if j.Version == 0 {
		return d.CreateJob(ctx, c, j, row)
	}
	return d.ReplaceJob(ctx, c, j, row)
}

// CreateJob inserts job j (encoded as row), after checking that its
// collection exists and has room for it. c must be a transaction: the
// collection row stays locked ({lock}) until it ends, so that creates in
// one collection are serialised and the count and the insert are atomic
// up to the commit, whoever commits it.
func (d *Dialect) CreateJob(ctx context.Context, c Conn, j *scheduler.JobRecord, row *JobRow) error {
	var def string
	var enabled bool
	err := c.QueryRow(ctx, d.sql("SELECT definition, enabled FROM {s}.collections WHERE name = $1{lock}"), j.Collection).Scan(&def, &enabled)
	if errors.Is(err, ErrNoRows) {
		return &scheduler.NotFoundError{Collection: j.Collection}
	}
	if err != nil {
		return d.Wrap("put job", j.ID(), err)
	}
	d.step(ctx, c, "count")
	var n, exists int
	if d.JobCount {
		err = c.QueryRow(ctx, d.sql("SELECT job_count, (SELECT count(*) FROM {s}.jobs WHERE collection = $1 AND name = $2) FROM {s}.collections WHERE name = $1"),
			j.Collection, j.Name).Scan(&n, &exists)
	} else {
		err = c.QueryRow(ctx, d.sql("SELECT count(*), count(*) FILTER (WHERE name = $2) FROM {s}.jobs WHERE collection = $1"),
			j.Collection, j.Name).Scan(&n, &exists)
	}
	if err != nil {
		return d.Wrap("put job", j.ID(), err)
	}
	if exists > 0 {
		return fmt.Errorf("%s: create job %q: it exists: %w", d.Name, j.ID(), scheduler.ErrConflict)
	}
	coll, err := DecodeCollection(&CollectionRow{Name: j.Collection, Definition: def})
	if err != nil {
		return fmt.Errorf("%s: put job %q: %w", d.Name, j.ID(), err)
	}
	if limit := coll.Definition.MaxJobCount(); n >= limit {
		return QuotaError(j.Collection, limit, n)
	}
	d.step(ctx, c, "insert")
	const insert = insertJobSQL
	q := insert
	if d.JobCount {
		// One statement, one round trip fewer with the collection locked.
		q = "WITH i AS (" + insert + " RETURNING collection) UPDATE {s}.collections SET job_count = job_count + 1 WHERE name = (SELECT collection FROM i)"
	}
	_, err = c.Exec(ctx, d.sql(q), row.InsertArgs(enabled)...)
	if err != nil {
		return d.Wrap("put job", j.ID(), err)
	}
	d.step(ctx, c, "commit")
	return nil
}

// ReplaceJob updates job j (encoded as row) when its stored version is
// j.Version, keeping the stored lease; ErrConflict when the version
// differs, ErrNotFound when the job is gone. It is one statement, so c
// need not be a transaction.
func (d *Dialect) ReplaceJob(ctx context.Context, c Conn, j *scheduler.JobRecord, row *JobRow) error {
	n, err := c.Exec(ctx, d.sql(`UPDATE {s}.jobs SET definition = $3, state = $4, status = $5, schedule = $6, etag = $7, version = $8 + 1,
		created_at = $9, updated_at = $10, due_at = $11 WHERE collection = $1 AND name = $2 AND version = $8`),
		j.Collection, j.Name, row.Definition, row.State, row.Status, row.Schedule, row.ETag, j.Version,
		row.CreatedArg(), row.UpdatedArg(), row.DueArg())
	if err != nil {
		return d.Wrap("put job", j.ID(), err)
	}
	if n == 1 {
		return nil
	}
	var version int64
	err = c.QueryRow(ctx, d.sql("SELECT version FROM {s}.jobs WHERE collection = $1 AND name = $2"), j.Collection, j.Name).Scan(&version)
	if errors.Is(err, ErrNoRows) {
		return d.Missing(ctx, c, j.Collection, j.Name)
	}
	if err != nil {
		return d.Wrap("put job", j.ID(), err)
	}
	return fmt.Errorf("%s: put job %q: version %d, stored %d: %w", d.Name, j.ID(), j.Version, version, scheduler.ErrConflict)
}

// DeleteJob implements [scheduler.Store.DeleteJob] over c.
func (d *Dialect) DeleteJob(ctx context.Context, c Conn, collection, name string) error {
	var n int64
	var err error
	if d.JobCount {
		// One statement: the collection row is locked (by its update)
		// before the job's, in the order CreateJob locks them, and is
		// updated only when the job was deleted.
		err = c.QueryRow(ctx, d.sql(`WITH c AS (
				SELECT name FROM {s}.collections WHERE name = $1{lock}
			), d AS (
				DELETE FROM {s}.jobs WHERE collection = (SELECT name FROM c) AND name = $2 RETURNING collection
			), u AS (
				UPDATE {s}.collections SET job_count = job_count - (SELECT count(*) FROM d) WHERE name = (SELECT collection FROM d)
			)
			SELECT count(*) FROM d`), collection, name).Scan(&n)
	} else {
		n, err = c.Exec(ctx, d.sql("DELETE FROM {s}.jobs WHERE collection = $1 AND name = $2"), collection, name)
	}
	if err != nil {
		return d.Wrap("delete job", collection+"/"+name, err)
	}
	if n == 0 {
		return d.Missing(ctx, c, collection, name)
	}
	if d.DeleteHistory {
		if _, err := c.Exec(ctx, d.sql("DELETE FROM {s}.history WHERE collection = $1 AND job = $2"), collection, name); err != nil {
			return d.Wrap("delete job", collection+"/"+name, err)
		}
	}
	return nil
}

// TxView is a store's job methods inside a transaction of the host's: the
// [scheduler.TxStore] that the stores' InTx methods return.
type TxView struct {
	// D is the store's dialect; C the host's transaction.
	D *Dialect
	C Conn
	// Wake, when set, runs in the transaction after a job is put, to wake
	// the schedulers once it commits.
	Wake func(ctx context.Context, c Conn) error
}

var _ scheduler.TxStore = (*TxView)(nil)

// GetCollection implements [scheduler.TxStore].
func (v *TxView) GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error) {
	return v.D.GetCollection(ctx, v.C, name)
}

// GetJob implements [scheduler.TxStore].
func (v *TxView) GetJob(ctx context.Context, collection, name string) (*scheduler.JobRecord, error) {
	return v.D.GetJob(ctx, v.C, collection, name)
}

// PutJob implements [scheduler.TxStore].
func (v *TxView) PutJob(ctx context.Context, j *scheduler.JobRecord) error {
	if err := v.D.PutJob(ctx, v.C, j); err != nil {
		return err
	}
	if v.Wake != nil {
		if err := v.Wake(ctx, v.C); err != nil {
			return v.D.Wrap("wake schedulers after putting job", j.ID(), err)
		}
	}
	return nil
}

// DeleteJob implements [scheduler.TxStore].
func (v *TxView) DeleteJob(ctx context.Context, collection, name string) error {
	return v.D.DeleteJob(ctx, v.C, collection, name)
}

// JobInserter is an optional capability of a [Conn]: inserting many new
// job rows in one round trip (store/postgres copies them). PutJobs uses it
// when the Conn has it, and otherwise inserts the rows one statement at a
// time. A row whose job exists fails the whole insert with an error
// matching [scheduler.ErrConflict].
type JobInserter interface {
	// InsertJobs inserts rows, with version 1, no lease and coll_enabled
	// set to enabled.
	InsertJobs(ctx context.Context, rows []*JobRow, enabled bool) error
}

// insertJobSQL inserts a new job row (see CreateJob).
const insertJobSQL = "INSERT INTO {s}.jobs (" + JobCols + ", coll_enabled) VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9, $10, '', NULL, $11)"

// InsertArgs returns the arguments of a new job row's insert: JobCols'
// values but version, lease_owner and lease_until.
func (r *JobRow) InsertArgs(enabled bool) []any {
	return []any{r.Collection, r.Name, r.Definition, r.State, r.Status, r.Schedule, r.ETag,
		r.CreatedArg(), r.UpdatedArg(), r.DueArg(), enabled}
}

// PutJobs implements [scheduler.BulkPutter.PutJobs] over c, which must be
// a transaction: the caller rolls it back when PutJobs fails. rows are the
// encoded jobs. The collection row is locked ({lock}) for the rest of the
// transaction, as CreateJob locks it, so the quota is counted once for
// the batch and stays exact up to the commit.
func (d *Dialect) PutJobs(ctx context.Context, c Conn, collection string, jobs []*scheduler.JobRecord, rows []*JobRow) error {
	var def string
	var enabled bool
	err := c.QueryRow(ctx, d.sql("SELECT definition, enabled FROM {s}.collections WHERE name = $1{lock}"), collection).Scan(&def, &enabled)
	if errors.Is(err, ErrNoRows) {
		return &scheduler.NotFoundError{Collection: collection}
	}
	if err != nil {
		return d.Wrap("put jobs of collection", collection, err)
	}
	var creates []*JobRow
	for i, j := range jobs {
		if j.Collection != collection {
			return fmt.Errorf("%s: put jobs of collection %q: job %q is of collection %q", d.Name, collection, j.Name, j.Collection)
		}
		if j.Version == 0 {
			creates = append(creates, rows[i])
		} else if err := d.ReplaceJob(ctx, c, j, rows[i]); err != nil {
			return err
		}
	}
	if len(creates) == 0 {
		return nil
	}
	var n int
	if d.JobCount {
		err = c.QueryRow(ctx, d.sql("SELECT job_count FROM {s}.collections WHERE name = $1"), collection).Scan(&n)
	} else {
		err = c.QueryRow(ctx, d.sql("SELECT count(*) FROM {s}.jobs WHERE collection = $1"), collection).Scan(&n)
	}
	if err != nil {
		return d.Wrap("put jobs of collection", collection, err)
	}
	coll, err := DecodeCollection(&CollectionRow{Name: collection, Definition: def})
	if err != nil {
		return fmt.Errorf("%s: put jobs of collection %q: %w", d.Name, collection, err)
	}
	if limit := coll.Definition.MaxJobCount(); n+len(creates) > limit {
		err := QuotaError(collection, limit, n).(*scheduler.QuotaError)
		err.Reason += fmt.Sprintf(", and the batch creates %d", len(creates))
		return err
	}
	if ins, ok := c.(JobInserter); ok {
		err = ins.InsertJobs(ctx, creates, enabled)
	} else {
		for _, r := range creates {
			var k int64
			k, err = c.Exec(ctx, d.sql(insertJobSQL+" ON CONFLICT (collection, name) DO NOTHING"), r.InsertArgs(enabled)...)
			if err == nil && k == 0 {
				return fmt.Errorf("%s: create job %q: it exists: %w", d.Name, r.Collection+"/"+r.Name, scheduler.ErrConflict)
			}
			if err != nil {
				break
			}
		}
	}
	if err != nil {
		return d.Wrap("put jobs of collection", collection, err)
	}
	if d.JobCount {
		if _, err := c.Exec(ctx, d.sql("UPDATE {s}.collections SET job_count = job_count + $2 WHERE name = $1"), collection, len(creates)); err != nil {
			return d.Wrap("put jobs of collection", collection, err)
		}
	}
	return nil
}

// EncodeJobs encodes each of jobs, for PutJobs.
func (d *Dialect) EncodeJobs(jobs []*scheduler.JobRecord) ([]*JobRow, error) {
	rows := make([]*JobRow, len(jobs))
	for i, j := range jobs {
		var err error
		if rows[i], err = EncodeJob(j); err != nil {
			return nil, fmt.Errorf("%s: put job %q: %w", d.Name, j.ID(), err)
		}
	}
	return rows, nil
}

// InOrder returns found, jobs of one collection, in the order of names:
// nil where found has no job of that name ([scheduler.BulkPutter.GetJobs]).
func InOrder(names []string, found []*scheduler.JobRecord) []*scheduler.JobRecord {
	byName := make(map[string]*scheduler.JobRecord, len(found))
	for _, j := range found {
		byName[j.Name] = j
	}
	out := make([]*scheduler.JobRecord, len(names))
	for i, n := range names {
		out[i] = byName[n]
	}
	return out
}
