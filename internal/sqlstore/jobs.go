package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

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
	// Writes that change a collection's quota, and bulk creates, lock its
	// row so.
	Lock string
	// Share is what {share} becomes: " FOR SHARE" on PostgreSQL, which a
	// create takes on its collection's row, so that creates do not wait
	// for each other but a change of the quota, or a bulk create, waits
	// for them; empty on SQLite.
	Share string
	// JSONAgg is the aggregate that collects values into a JSON array:
	// "json_agg" on PostgreSQL, "json_group_array" on SQLite.
	JSONAgg string
	// Count is what {count} becomes: a query of one row and one BIGINT
	// column, the number of jobs of collection $1 as the store counts
	// them (the counts that CountJobs reads), which the statement's
	// snapshot sees exactly when every job was created and deleted
	// through the store. It may use {s}. A search for free places that
	// finds too few near where it starts reads it, so that a full
	// collection answers without looking at every place (see
	// freeSlotsSQL). Empty: the jobs of the collection counted in the
	// jobs table, exact but read job by job.
	Count string
	// Wake is what {wake} becomes at the end of the WHERE clause of a
	// job's create and replace when they are asked to wake the
	// schedulers: a condition that holds and wakes the store's schedulers
	// once the statement's transaction commits (" AND pg_notify('CHANNEL',
	// '') IS NOT NULL" on PostgreSQL, which delivers a notification sent
	// many times in one transaction once), so that a put in a host's
	// transaction needs no statement of its own to wake them; empty on
	// SQLite. The store's own puts do not ask: PostgreSQL holds a lock
	// that serialises the commits of transactions that notify from before
	// their commit until it is durable, so that concurrent puts would
	// commit one at a time on a durable server; the store notifies in a
	// transaction of its own after the commit instead.
	Wake string
	// Unique reports whether err is the database's unique violation (a
	// create of a job that exists).
	Unique func(err error) bool
	// Step, when set, runs before each step of a job's create ("insert",
	// "commit"), for tests that break a transaction there.
	Step func(ctx context.Context, c Conn, step string)
	// DeleteHistory, when true, makes DeleteJob delete the job's history
	// after the job, in the same transaction, for a schema whose history
	// has no foreign key that cascades.
	DeleteHistory bool
	// CountCreates, when true, makes the statements that create jobs
	// insert the changes of the job counts by collection and state into
	// table job_count_deltas themselves, in the same statement as a
	// single create and in one statement after a bulk create's inserts
	// (one row per state), for a schema that counts jobs so (PostgreSQL,
	// migration 14) instead of by a trigger on every insert.
	CountCreates bool

	queries sync.Map // template -> statement
	colls   sync.Map // collection name -> *collInfo
}

// waking returns the statement of template q with {wake} (see Wake)
// when wake is true, and without it otherwise.
func (d *Dialect) waking(q string, wake bool) string {
	if !wake {
		q = strings.Replace(q, "{wake}", "", 1)
	}
	return d.sql(q)
}

// sql returns the statement of template q.
func (d *Dialect) sql(q string) string {
	if s, ok := d.queries.Load(q); ok {
		return s.(string)
	}
	count := d.Count
	if count == "" {
		count = "SELECT CAST(count(*) AS BIGINT) FROM {s}.jobs WHERE collection = $1"
	}
	s := strings.ReplaceAll(q, "{count}", count) // first: it may hold {s}.
	s = strings.NewReplacer("{s}.", d.Schema, "{lock}", d.Lock, "{share}", d.Share, "{jsonagg}", d.JSONAgg, "{wake}", d.Wake).Replace(s)
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
	JobCols        = "collection, name, definition, state, status, schedule, etag, version, created_at, updated_at, due_at, lease_owner, lease_until, tags, incarnation"
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
	return new(JobScanner).Scan(r, extra...)
}

// JobScanner reads rows of JobCols, as ScanJobRow does, into one JobRow
// and one set of destinations that it reuses from row to row: reading the
// rows of one answer (a claim) allocates little besides a buffer now and
// then. The collection, state and lease owner of a row are the strings of
// the row before when they have the same text, as they are for most rows
// of a claim; the JSON columns are copied into one buffer that the next
// row reuses; the name and ETag into another that no row overwrites,
// which their strings share (a [keptBytes]). The zero value is ready to
// use.
type JobScanner struct {
	row                          JobRow
	coll, state, owner           keptText
	def, status, schedule, tags  bufText // in json
	name, etag                   bufText // in kept
	created, updated, due, lease NullInt
	json                         []byte
	kept                         keptBytes
	dest                         []any
}

// keptBuf is the size of a keptBytes' buffers: a claimed record's strings
// keep those of about a hundred others alive with them, no more.
const keptBuf = 4 << 10

// keptBytes holds texts whose strings outlive the row they were read from
// (a claimed record's name, a claim's definition texts) in buffers that
// nothing overwrites: the strings are views of their bytes, not a copy
// each. The first buffer is the size of the first text, each next one
// four times the one before, up to keptBuf (or the size of a longer
// text): an answer of one row takes little, one of many a buffer every
// few dozen rows. The zero value is ready to use.
type keptBytes struct{ b []byte }

// keep returns a string of the bytes of p, copied into k.
func keep[T ~string | ~[]byte](k *keptBytes, p T) string {
	if cap(k.b)-len(k.b) < len(p) {
		// A new buffer; the strings made of the last keep it.
		k.b = make([]byte, 0, max(len(p), min(keptBuf, 4*cap(k.b))))
	}
	from := len(k.b)
	k.b = append(k.b, p...) // within its room: the bytes before stay as they are
	return view(k.b, from, len(k.b))
}

// Scan reads a row of JobCols, then extra. The row it returns, and the
// JSON texts it holds (Definition, Status, Schedule, Tags), are s's own,
// valid until the next Scan; its other strings stay valid after.
func (s *JobScanner) Scan(r Row, extra ...any) (*JobRow, error) {
	s.row = JobRow{}
	s.json = s.json[:0]
	row := &s.row
	for _, j := range []*bufText{&s.def, &s.status, &s.schedule, &s.tags} {
		*j = bufText{buf: &s.json}
	}
	s.name, s.etag = bufText{kept: &s.kept}, bufText{kept: &s.kept}
	s.dest = append(s.dest[:0], &s.coll, &s.name, &s.def, &s.state, &s.status, &s.schedule, &s.etag,
		&row.Version, &s.created, &s.updated, &s.due, &s.owner, &s.lease, &s.tags, &row.Incarnation)
	s.dest = append(s.dest, extra...)
	err := r.Scan(s.dest...)
	clear(s.dest[15:]) // holds nothing of the caller's
	if err != nil {
		return nil, err
	}
	row.Collection, row.State, row.LeaseOwner = string(s.coll), string(s.state), string(s.owner)
	row.Name, row.ETag = s.name.text(), s.etag.text()
	row.Definition, row.Status, row.Schedule, row.Tags = s.def.text(), s.status.text(), s.schedule.text(), s.tags.text()
	row.Created, row.HasCreated = s.created.N, s.created.Valid
	row.Updated, row.HasUpdated = s.updated.N, s.updated.Valid
	row.DueAt, row.HasDue = s.due.N, s.due.Valid
	row.LeaseUntil, row.HasLease = s.lease.N, s.lease.Valid
	return row, nil
}

// NullInt is the destination of a nullable integer column: database/sql
// hands it the value through Scan; a backend whose driver has a way of
// its own to fill it without an allocation may use that instead.
type NullInt struct {
	N     int64
	Valid bool // not NULL
}

// Scan implements [database/sql.Scanner].
func (n *NullInt) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*n = NullInt{}
	case int64:
		*n = NullInt{N: v, Valid: true}
	default:
		return fmt.Errorf("sqlstore: scan %T into a nullable integer", src)
	}
	return nil
}

// keptText is the destination of a text column that keeps the string it
// holds when the column has the same text: the rows of a claim share
// their collection, state and lease owner, most of the time. NULL reads
// as "".
type keptText string

// ScanBytes reads b, which may be the driver's memory (pgx's
// pgtype.BytesScanner).
func (k *keptText) ScanBytes(b []byte) error {
	if string(b) != string(*k) {
		*k = keptText(b)
	}
	return nil
}

// Scan implements [database/sql.Scanner].
func (k *keptText) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*k = ""
	case string:
		*k = keptText(v)
	case []byte:
		return k.ScanBytes(v)
	default:
		return fmt.Errorf("sqlstore: scan %T into text", src)
	}
	return nil
}

// bufText is the destination of a text column whose text is copied into
// a buffer of its scanner, which the next row reuses, or with kept into
// a keptBytes (database/sql's strings are kept as they are). NULL reads
// as "".
type bufText struct {
	buf      *[]byte
	kept     *keptBytes
	from, to int
	s        string
	inBuf    bool
}

// ScanBytes reads b, which may be the driver's memory (pgx's
// pgtype.BytesScanner).
func (t *bufText) ScanBytes(b []byte) error {
	if t.kept != nil {
		t.s = keep(t.kept, b)
		return nil
	}
	t.from = len(*t.buf)
	*t.buf = append(*t.buf, b...)
	t.to, t.inBuf = len(*t.buf), true
	return nil
}

// Scan implements [database/sql.Scanner].
func (t *bufText) Scan(src any) error {
	switch v := src.(type) {
	case nil:
	case string:
		t.s = v
	case []byte:
		return t.ScanBytes(v)
	default:
		return fmt.Errorf("sqlstore: scan %T into text", src)
	}
	return nil
}

// text returns the text read, valid until the bytes of the buffer it
// was read into are written again.
func (t *bufText) text() string {
	if !t.inBuf || t.to == t.from {
		return t.s
	}
	return unsafe.String(&(*t.buf)[t.from], t.to-t.from)
}

// ScanCollection reads a row of CollectionCols.
func ScanCollection(r Row) (*scheduler.CollectionRecord, error) {
	var c collectionScan
	if err := r.Scan(c.dest()...); err != nil {
		return nil, err
	}
	return c.decode()
}

// collectionScan is where a row's CollectionCols are read into.
type collectionScan struct {
	row              CollectionRow
	created, updated *int64
}

// dest returns the destinations of CollectionCols.
func (c *collectionScan) dest() []any {
	return []any{&c.row.Name, &c.row.Definition, &c.row.Enabled, &c.row.ETag, &c.row.Version, &c.created, &c.updated}
}

// decode returns the record read.
func (c *collectionScan) decode() (*scheduler.CollectionRecord, error) {
	if c.created != nil {
		c.row.Created, c.row.HasCreated = *c.created, true
	}
	if c.updated != nil {
		c.row.Updated, c.row.HasUpdated = *c.updated, true
	}
	return DecodeCollection(&c.row)
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

// GiveBack implements one job of [scheduler.AheadClaimer.GiveBack] over
// c: it puts the lease that r's claim replaced back, if owner holds the
// job's lease as r's claim left it (its end r.LeaseUntil or the job's
// Version r.Version unchanged: a later claim changes both) and the job is
// the one claimed (of r.Incarnation, created at
// r.Created, not deleted and created again since).
func (d *Dialect) GiveBack(ctx context.Context, c Conn, owner string, r *scheduler.JobRecord) error {
	until := Nanos(r.PreviousLeaseUntil)
	if r.PreviousLeaseOwner == "" {
		until = nil
	}
	n, err := c.Exec(ctx, d.sql(`UPDATE {s}.jobs SET lease_owner = $4, lease_until = $5
		WHERE collection = $1 AND name = $2 AND lease_owner = $3 AND lease_owner <> '' AND (lease_until = $8 OR version = $9)
			AND created_at IS NOT DISTINCT FROM $6 AND incarnation = $7`),
		r.Collection, r.Name, owner, r.PreviousLeaseOwner, until, Nanos(r.Created), r.Incarnation, Nanos(r.LeaseUntil), r.Version)
	if err != nil || n == 1 {
		return d.Wrap("give back job", r.ID(), err)
	}
	var holder string
	var created, leaseUntil NullInt
	var incarnation int64
	err = c.QueryRow(ctx, d.sql("SELECT lease_owner, created_at, incarnation, lease_until FROM {s}.jobs WHERE collection = $1 AND name = $2"),
		r.Collection, r.Name).Scan(&holder, &created, &incarnation, &leaseUntil)
	if errors.Is(err, ErrNoRows) {
		return d.Missing(ctx, c, r.Collection, r.Name)
	}
	if err != nil {
		return d.Wrap("give back job", r.ID(), err)
	}
	if at := Time(created.N, created.Valid); incarnation != r.Incarnation || !at.Equal(r.Created) {
		return fmt.Errorf("%s: give back: %w", d.Name, scheduler.NewRecreatedErrorOf(r, at, incarnation))
	}
	if holder == owner && owner != "" {
		// owner claimed the job again once this claim's lease lapsed:
		// that claim is not this one's to give back.
		return fmt.Errorf("%s: give back job %q: %q claimed it again (lease until %v, not %v): %w",
			d.Name, r.ID(), owner, Time(leaseUntil.N, leaseUntil.Valid), r.LeaseUntil, scheduler.ErrLeaseLost)
	}
	return fmt.Errorf("%s: give back job %q: lease held by %q, not %q: %w", d.Name, r.ID(), holder, owner, scheduler.ErrLeaseLost)
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

// jobOrNoneCols are JobCols of the job j that jobWithCollection finds,
// with values in place of NULL (not to be read) when it finds none, and
// whether it found one.
const jobOrNoneCols = `COALESCE(j.collection, ''), COALESCE(j.name, ''), COALESCE(j.definition, 'null'), COALESCE(j.state, ''),
		COALESCE(j.status, 'null'), COALESCE(j.schedule, 'null'), COALESCE(j.etag, ''), COALESCE(j.version, 0), j.created_at,
		j.updated_at, j.due_at, COALESCE(j.lease_owner, ''), j.lease_until, j.tags, COALESCE(j.incarnation, 0), j.name IS NOT NULL`

// jobWithCollection finds the row c of collection $1, and the row j of its
// job $2 when there is one: no row when the collection does not exist, so
// that a lookup of a job not there yet (a create's) says why in one
// statement.
const jobWithCollection = ` FROM {s}.collections c LEFT JOIN {s}.jobs j ON j.collection = $1 AND j.name = $2 WHERE c.name = $1`

// GetJobSQL (a template of Dialect) is GetJob's statement.
const GetJobSQL = "SELECT " + jobOrNoneCols + jobWithCollection

// readForPutSQL is ReadForPut's statement: GetJob's, and the collection's
// CollectionCols.
const readForPutSQL = "SELECT " + jobOrNoneCols + ", c.name, c.definition, c.enabled, c.etag, c.version, c.created_at, c.updated_at" + jobWithCollection

// GetJob implements [scheduler.Store.GetJob] over c.
func (d *Dialect) GetJob(ctx context.Context, c Conn, collection, name string) (*scheduler.JobRecord, error) {
	_, j, err := d.readJob(ctx, c, collection, name, false)
	if err == nil && j == nil {
		err = &scheduler.NotFoundError{Collection: collection, Job: name}
	}
	return j, err
}

// ReadForPut implements [scheduler.PutReader] over c: one statement.
func (d *Dialect) ReadForPut(ctx context.Context, c Conn, collection, name string) (*scheduler.CollectionRecord, *scheduler.JobRecord, error) {
	return d.readJob(ctx, c, collection, name, true)
}

// readJob reads job name of collection, nil when there is none, and with
// withCollection the collection's record too.
func (d *Dialect) readJob(ctx context.Context, c Conn, collection, name string, withCollection bool) (col *scheduler.CollectionRecord, j *scheduler.JobRecord, err error) {
	var found bool
	var cs collectionScan
	q, dest := GetJobSQL, []any{&found}
	if withCollection {
		q, dest = readForPutSQL, append(dest, cs.dest()...)
	}
	row, err := ScanJobRow(c.QueryRow(ctx, d.sql(q), collection, name), dest...)
	if errors.Is(err, ErrNoRows) {
		return nil, nil, &scheduler.NotFoundError{Collection: collection}
	}
	if err == nil && withCollection {
		col, err = cs.decode()
	}
	if err == nil && found {
		j, err = DecodeJob(row)
	}
	if err != nil {
		return nil, nil, d.Wrap("get job", collection+"/"+name, err)
	}
	return col, j, nil
}

// PutJob implements [scheduler.Store.PutJob] over c: CreateJob when
// j.Version is 0, else ReplaceJob; wake is as for them.
func (d *Dialect) PutJob(ctx context.Context, c Conn, j *scheduler.JobRecord, wake bool) error {
	row, err := d.EncodeRow(j)
	if err != nil {
		return err
	}
	if j.Version == 0 {
		return d.CreateJob(ctx, c, j, row, wake)
	}
	return d.ReplaceJob(ctx, c, j, row, wake)
}

// Places: each job holds one place of its collection, a number from 0 to
// the collection's MaxJobCount()-1 in the jobs' slot column, and a unique
// index on (slot, collection) lets no two jobs of a collection hold the
// same. A create takes a free place below the quota, so the quota holds
// exactly, across processes and transactions, without counting the jobs
// or updating a count that every create would wait for: two creates that
// pick the same place meet at the index, where the second waits for the
// first and then looks for another.
//
// A create is one statement: it inserts the job into the place the store
// tries next for the collection, provided the collection's stored record
// is the one whose quota the store knows (collInfo: the same version and
// ETag) and the place is below that quota, share-locking the collection's
// row ({share}) until the transaction ends. The store tries the places after the last
// one it took, in order and wrapping around to 0, so filling a collection
// finds a free place at once, however full it is, and reuses the places
// of deleted jobs once it has gone round. Only when the insert writes
// nothing does a second query find out why: the collection is gone, its
// record changed (the store reads the new quota and tries again, unless
// the caller built the job over the record it gave, see CreateJobOver), the
// job exists, or the place is taken, when it looks for the next free
// places up from there (reading the run of taken places once), and tries
// one of the first few at random (so that creates of several stores that
// lost the same place do not race for the same one again), or finds none
// below the quota. That query looks at a few dozen places from there, and
// reads the collection's job count (Dialect.Count) only when they hold
// too few free ones: it looks at every place unless the count says the
// collection is full, so that a create into a full collection reads a
// few pages, not every place (see freeSlotsSQL). Lowering the quota below
// places in use moves those
// jobs down (FitSlots).

// slotAttempts bounds the places a create tries when others take them
// first.
const slotAttempts = 8

// spreadSlots is how many free places a create whose place was taken
// finds, to try one of them at random (see create).
const spreadSlots = 8

// collInfo is what a store keeps of a collection for its creates: which
// record of it the store last read (its version and ETag: every write of a
// collection changes its version, and a collection deleted and created
// again starts at version 1 with a new ETag), the quota that record gives,
// and the next place to try. A create inserts only while the stored record
// is that one, in the same statement, so the quota it obeys is the stored
// one even when another process changed the collection meanwhile.
type collInfo struct {
	version int64
	etag    string
	limit   int64
	next    atomic.Int64
}

// take returns the place to try next, and moves past it.
func (ci *collInfo) take() int64 {
	if ci.limit <= 0 {
		return 0
	}
	return (ci.next.Add(1) - 1) % ci.limit
}

// info returns what the store keeps of collection for a create, as read
// from its stored record (definition def, version and etag): the kept one
// when the record is still the same, else a new one that goes on from the
// kept one's next place.
func (d *Dialect) info(collection, def string, version int64, etag string) (*collInfo, error) {
	if ci, ok := d.kept(collection, version, etag); ok {
		return ci, nil
	}
	coll, err := DecodeCollection(&CollectionRow{Name: collection, Definition: def})
	if err != nil {
		return nil, err
	}
	return d.keep(collection, version, etag, coll.Definition.MaxJobCount()), nil
}

// kept returns what the store keeps of collection when it was read from
// the record of that version and etag.
func (d *Dialect) kept(collection string, version int64, etag string) (*collInfo, bool) {
	old, _ := d.colls.Load(collection)
	ci, ok := old.(*collInfo)
	return ci, ok && ci.version == version && ci.etag == etag
}

// keep makes the collection's record of that version and etag, whose quota
// is limit, the one the store keeps for its creates, going on from the
// kept one's next place.
func (d *Dialect) keep(collection string, version int64, etag string, limit int) *collInfo {
	old, _ := d.colls.Load(collection)
	ci := &collInfo{version: version, etag: etag, limit: int64(limit)}
	if prev, ok := old.(*collInfo); ok {
		ci.next.Store(prev.next.Load())
	} else if ci.limit > 0 {
		// Creates of other processes start elsewhere.
		ci.next.Store(rand.Int64N(ci.limit))
	}
	d.colls.Store(collection, ci)
	return ci
}

// knownInfo returns what the store keeps of collection, reading the
// collection's definition when it keeps nothing yet.
func (d *Dialect) knownInfo(ctx context.Context, c Conn, collection string) (*collInfo, error) {
	if ci, ok := d.colls.Load(collection); ok {
		return ci.(*collInfo), nil
	}
	var def, etag string
	var version int64
	err := c.QueryRow(ctx, d.sql("SELECT CAST(definition AS TEXT), version, etag FROM {s}.collections WHERE name = $1"), collection).Scan(&def, &version, &etag)
	if errors.Is(err, ErrNoRows) {
		return nil, &scheduler.NotFoundError{Collection: collection}
	}
	if err != nil {
		return nil, err
	}
	return d.info(collection, def, version, etag)
}

// freeSlotsSQL returns the stored definition, version and ETag of
// collection $1 (NULL when there is none), whether job $2 exists in it,
// whether the places decided, the number of its jobs (Dialect.Count) when
// they did not, and, as a JSON array, the first $5 free places of the
// collection found looking from place $3 up to the quota $4 less one,
// then from 0 up, of which the caller needs $6.
//
// It looks in a window first, the $5 + nearSlotsSQL places from $3 on
// (wrapping round), which is as far as a put looks when the collection
// has room where it took its last places. Only when the window holds
// fewer than $6 free places (and not all the places) does it read the
// count, and then it looks at every place unless the count says the jobs
// counted and $6 more exceed the quota: a full collection answers after
// the window and the count, not after every place. The count decides
// only when it agrees with the window: one so high that the window's
// free places would not fit beside it is known to be wrong (jobs deleted
// without their change of the counts), and the places decide then too.
//
// The places are generated only as far as needed, and each is looked up
// on its own (placeFree).
const freeSlotsSQL = `WITH RECURSIVE w(o) AS (
		SELECT CAST(0 AS BIGINT) WHERE 0 < $4 UNION ALL SELECT o + 1 FROM w WHERE o + 1 < $4 AND o + 1 < $5 + ` + nearSlotsSQL + `
	), near AS (
		SELECT s FROM (SELECT ($3 + o) % $4 AS s FROM w) x WHERE ` + placeFree + ` LIMIT $5
	), k(n) AS ({count}), short(v) AS (
		SELECT (SELECT count(*) FROM near) < $6 AND $4 > $5 + ` + nearSlotsSQL + `
	), r(ok) AS (
		SELECT (SELECT v FROM short) AND ((SELECT n FROM k) + CAST($6 AS BIGINT) <= $4 OR (SELECT n FROM k) + (SELECT count(*) FROM near) > $4)
	), g(s) AS (
		SELECT CAST($3 AS BIGINT) WHERE $3 < $4 AND (SELECT ok FROM r) UNION ALL SELECT s + 1 FROM g WHERE s + 1 < $4
	), h(s) AS (
		SELECT CAST(0 AS BIGINT) WHERE 0 < $3 AND (SELECT ok FROM r) UNION ALL SELECT s + 1 FROM h WHERE s + 1 < $3
	), f AS (
		SELECT s FROM (SELECT s FROM g UNION ALL SELECT s FROM h) x WHERE ` + placeFree + ` LIMIT $5
	)
	SELECT c.def, c.version, c.etag, (SELECT count(*) FROM {s}.jobs WHERE collection = $1 AND name = $2),
		NOT (SELECT v FROM short) OR (SELECT ok FROM r),
		CASE WHEN (SELECT v FROM short) AND NOT (SELECT ok FROM r) THEN (SELECT n FROM k) END,
		CASE WHEN (SELECT ok FROM r) THEN (SELECT {jsonagg}(s) FROM f) ELSE (SELECT {jsonagg}(s) FROM near) END
	FROM (SELECT 1) o LEFT JOIN (SELECT CAST(definition AS TEXT) AS def, version, etag FROM {s}.collections WHERE name = $1) c ON true`

// nearSlotsSQL is how many places past those it asks for a search for
// free places looks at before it reads the collection's job count (see
// freeSlotsSQL), in SQL.
const nearSlotsSQL = "64"

// placeFree is the condition that no job of collection $1 takes place
// x.s. Each place is looked up on its own (a subquery per place, which
// the planners do not turn into a join that would read all the
// collection's jobs) in the index on (slot, collection), as the range
// from (place, collection) to (place, collection) in that order: only
// that index can give it (row comparisons in the order of the index's
// columns), and the range holds the entries of that place and collection
// only, however many jobs other transactions are inserting beside it. A
// lookup by "collection = $1 AND slot = place" could also be planned
// through the primary key (collection, name), reading all the
// collection's jobs for each place, and PostgreSQL does so, at the same
// estimated cost, when its statistics were taken while the collection had
// few jobs or none (a collection filling after an ANALYZE).
const placeFree = `(SELECT 1 FROM {s}.jobs WHERE (slot, collection) >= (x.s, $1) AND (slot, collection) <= (x.s, $1)
			ORDER BY slot, collection LIMIT 1) IS NULL`

// storedColl is a collection's stored definition, version and ETag as
// freeSlots reads them; Def is nil when there is no such collection.
type storedColl struct {
	Def     *string
	Version *int64
	ETag    *string
}

// placeSearch is what freeSlots looks for: up to n free places of
// collection below limit, looking from place start up, of which the
// caller needs need (need <= n); and whether job name exists in it (name
// may be empty).
type placeSearch struct {
	collection, name string
	limit, start     int64
	need, n          int
}

// placesFound is what freeSlots found.
type placesFound struct {
	coll   storedColl
	exists bool // the job named exists
	// searched is whether the places decided: slots are all the free
	// places up to n. When they did not, the collection's job count said
	// it holds held jobs, too many for need more, and slots are those
	// found before it was read.
	searched bool
	held     int64
	slots    []int64
}

// freeSlots returns the stored record of q.collection, whether job q.name
// exists in it, the jobs it holds, and the free places q asks for, in one
// statement.
func (d *Dialect) freeSlots(ctx context.Context, c Conn, q placeSearch) (placesFound, error) {
	var f placesFound
	var count int
	var held *int64
	var list *string
	if q.limit > 0 {
		q.start %= q.limit
	}
	err := c.QueryRow(ctx, d.sql(freeSlotsSQL), q.collection, q.name, q.start, q.limit, q.n, q.need).Scan(&f.coll.Def, &f.coll.Version, &f.coll.ETag, &count, &f.searched, &held, &list)
	if err == nil && list != nil {
		err = json.Unmarshal([]byte(*list), &f.slots)
	}
	if held != nil {
		f.held = *held
	}
	f.exists = count > 0
	return f, err
}

// collectionForPut reads the state and definition of collection for a
// bulk create, locking its row with {lock} until c ends.
func (d *Dialect) collectionForPut(ctx context.Context, c Conn, collection string) (enabled bool, ci *collInfo, err error) {
	var def, etag string
	var version int64
	err = c.QueryRow(ctx, d.sql("SELECT CAST(definition AS TEXT), enabled, version, etag FROM {s}.collections WHERE name = $1{lock}"), collection).Scan(&def, &enabled, &version, &etag)
	if errors.Is(err, ErrNoRows) {
		return false, nil, &scheduler.NotFoundError{Collection: collection}
	}
	if err != nil {
		return false, nil, err
	}
	ci, err = d.info(collection, def, version, etag)
	return enabled, ci, err
}

// insertSlotSQL inserts a new job row of incarnation $14 holding place
// $13, unless another job of the collection holds it.
const insertSlotSQL = "INSERT INTO {s}.jobs (" + JobCols + ", coll_enabled, slot) VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9, $10, '', NULL, $12, $14, $11, $13) ON CONFLICT (slot, collection) DO NOTHING"

// createSQL inserts a new job row of incarnation $16 holding place $12
// when the collection's
// stored record is at version $14 with ETag $15 and $12 is below its quota
// $13, share-locking the collection's row; it inserts nothing when the job
// exists or another job holds the place.
const createSQL = createColl + createInsert

// createCountedSQL is createSQL that also inserts the change of the job
// counts (+1 for the job's collection and state) when it inserts the job
// (see Dialect.CountCreates). It changes as many rows as createSQL: one
// when it creates the job, none otherwise.
const createCountedSQL = createColl + `, i AS (` + createInsert + ` RETURNING collection, state)
	INSERT INTO {s}.job_count_deltas (collection, state, n) SELECT collection, state, 1 FROM i`

// createColl and createInsert are the two parts of createSQL.
const (
	createColl   = `WITH c AS (SELECT enabled FROM {s}.collections WHERE name = $1 AND version = $14 AND etag = $15{share})`
	createInsert = `
	INSERT INTO {s}.jobs (` + JobCols + `, coll_enabled, slot)
	SELECT $1, $2, $3, $4, $5, $6, $7, 1, $8, $9, $10, '', NULL, $11, CAST($16 AS BIGINT), c.enabled, CAST($12 AS BIGINT)
	FROM c WHERE CAST($12 AS BIGINT) < CAST($13 AS BIGINT){wake} ON CONFLICT DO NOTHING`
)

// CreateJob inserts job j (encoded as row) into a free place of its
// collection (see Places above), which must exist. When c is a
// transaction, the collection row stays share-locked ({share}) until it
// ends, so that its quota does not change meanwhile; otherwise the create
// is one statement, its own transaction. With wake, the statement wakes
// the schedulers when its transaction commits (see Dialect.Wake).
func (d *Dialect) CreateJob(ctx context.Context, c Conn, j *scheduler.JobRecord, row *JobRow, wake bool) error {
	ci, err := d.knownInfo(ctx, c, j.Collection)
	if err != nil {
		return d.Wrap("put job", j.ID(), err)
	}
	return d.create(ctx, c, ci, false, j, row, wake)
}

// CreateJobOver implements [scheduler.JobCreator] over c: CreateJob of
// j (encoded as row), inserting only while col is the collection's stored
// record (the same version and ETag), without reading the collection
// first when the store keeps what it needs of that record. wake is as for
// CreateJob.
func (d *Dialect) CreateJobOver(ctx context.Context, c Conn, col *scheduler.CollectionRecord, j *scheduler.JobRecord, row *JobRow, wake bool) error {
	if col.Name != j.Collection {
		return fmt.Errorf("%s: create job %q over the record of collection %q", d.Name, j.ID(), col.Name)
	}
	ci, ok := d.kept(col.Name, col.Version, col.ETag)
	if !ok {
		ci = d.keep(col.Name, col.Version, col.ETag, col.Definition.MaxJobCount())
	}
	return d.create(ctx, c, ci, true, j, row, wake)
}

// create is CreateJob with ci, what the store keeps of the collection.
// With fixed, j was built over the collection's record that ci was kept
// from, and a create that inserts nothing fails with ErrConflict at once
// (see scheduler.JobCreator): the caller reads and puts again, which finds
// out why.
func (d *Dialect) create(ctx context.Context, c Conn, ci *collInfo, fixed bool, j *scheduler.JobRecord, row *JobRow, wake bool) error {
	for range slotAttempts {
		slot := ci.take()
		d.step(ctx, c, "insert")
		inc := NewIncarnation()
		n, err := c.Exec(ctx, d.waking(d.createSQL(), wake), row.Collection, row.Name, row.Definition, row.State, row.Status, row.Schedule, row.ETag,
			row.CreatedArg(), row.UpdatedArg(), row.DueArg(), row.TagsArg(), slot, ci.limit, ci.version, ci.etag, inc)
		if err != nil {
			return d.createError(j.ID(), err)
		}
		if n == 1 {
			j.Incarnation = inc
			d.step(ctx, c, "commit")
			return nil
		}
		if fixed {
			// Most likely the job exists (a replace tried as a create):
			// the next create tries this place again.
			ci.next.Add(-1)
			return fmt.Errorf("%s: create job %q over version %d of its collection: nothing inserted: %w", d.Name, j.ID(), ci.version, scheduler.ErrConflict)
		}
		// Find out why nothing was inserted.
		f, err := d.freeSlots(ctx, c, placeSearch{collection: j.Collection, name: j.Name, limit: ci.limit, start: slot, need: 1, n: spreadSlots})
		sc, slots := f.coll, f.slots
		switch {
		case err != nil:
			return d.Wrap("put job", j.ID(), err)
		case sc.Def == nil:
			d.colls.Delete(j.Collection)
			return d.Wrap("put job", j.ID(), &scheduler.NotFoundError{Collection: j.Collection})
		case *sc.Version != ci.version || *sc.ETag != ci.etag:
			if ci, err = d.info(j.Collection, *sc.Def, *sc.Version, *sc.ETag); err != nil {
				return d.Wrap("put job", j.ID(), err)
			}
		case f.exists:
			return fmt.Errorf("%s: create job %q: it exists: %w", d.Name, j.ID(), scheduler.ErrConflict)
		case len(slots) == 0:
			return QuotaError(j.Collection, int(ci.limit), int(ci.limit))
		default:
			// Creates of other stores that lost the same place would all
			// find the same first free place, and race for it again (and
			// again, while they keep coming): each tries one of the first
			// free places found, at random.
			ci.next.Store(slots[rand.IntN(len(slots))])
		}
	}
	return fmt.Errorf("%s: create job %q: other creates took the free places found %d times: %w", d.Name, j.ID(), slotAttempts, scheduler.ErrConflict)
}

// createSQL returns the template of a single create: createCountedSQL
// when the statements count the jobs they create (CountCreates),
// createSQL otherwise.
func (d *Dialect) createSQL() string {
	if d.CountCreates {
		return createCountedSQL
	}
	return createSQL
}

// countCreated inserts the changes of the job counts that the bulk create
// of jobs into collection makes, one row per state, in one statement,
// when the statements count the jobs they create (CountCreates).
func (d *Dialect) countCreated(ctx context.Context, c Conn, collection string, jobs []*scheduler.JobRecord) error {
	if !d.CountCreates {
		return nil
	}
	var states []string
	var ns []int64
	for _, j := range jobs {
		i := slices.Index(states, string(j.State))
		if i < 0 {
			states, ns = append(states, string(j.State)), append(ns, 0)
			i = len(states) - 1
		}
		ns[i]++
	}
	_, err := c.Exec(ctx, d.sql("INSERT INTO {s}.job_count_deltas (collection, state, n) SELECT $1, state, n FROM unnest($2::text[], $3::bigint[]) AS x(state, n)"),
		collection, states, ns)
	return err
}

// createError returns the error of an insert that failed: ErrConflict for
// a job that exists (created meanwhile).
func (d *Dialect) createError(id string, err error) error {
	if d.Unique != nil && d.Unique(err) {
		return fmt.Errorf("%s: create job %q: it exists: %w", d.Name, id, scheduler.ErrConflict)
	}
	return d.Wrap("put job", id, err)
}

// FitSlots moves the jobs of collection that hold places at or above
// limit, the collection's new quota, below it (see Places above), when
// it holds at most limit jobs. c must be a transaction that holds the
// collection row locked ({lock}), so that no create runs meanwhile. It
// renumbers the collection's places from 0 in two updates, through
// negative numbers, so that no two jobs hold the same place on the way.
func (d *Dialect) FitSlots(ctx context.Context, c Conn, collection string, limit int) error {
	var above int
	if err := c.QueryRow(ctx, d.sql("SELECT count(*) FROM (SELECT 1 FROM {s}.jobs WHERE collection = $1 AND slot >= $2 LIMIT 1) x"), collection, limit).Scan(&above); err != nil || above == 0 {
		return err
	}
	if _, err := c.Exec(ctx, d.sql(`UPDATE {s}.jobs AS j SET slot = -1 - r.n FROM (
			SELECT name, row_number() OVER (ORDER BY slot) - 1 AS n FROM {s}.jobs WHERE collection = $1
		) AS r WHERE j.collection = $1 AND j.name = r.name`), collection); err != nil {
		return err
	}
	_, err := c.Exec(ctx, d.sql("UPDATE {s}.jobs SET slot = -1 - slot WHERE collection = $1"), collection)
	return err
}

// ReplaceJob updates job j (encoded as row) when its stored version is
// j.Version, keeping the stored lease; ErrConflict when the version
// differs, ErrNotFound when the job is gone. It is one statement, so c
// need not be a transaction. wake is as for CreateJob.
func (d *Dialect) ReplaceJob(ctx context.Context, c Conn, j *scheduler.JobRecord, row *JobRow, wake bool) error {
	n, err := c.Exec(ctx, d.waking(`UPDATE {s}.jobs SET definition = $3, state = $4, status = $5, schedule = $6, etag = $7, version = $8 + 1,
		created_at = $9, updated_at = $10, due_at = $11, tags = $12 WHERE collection = $1 AND name = $2 AND version = $8{wake}`, wake),
		j.Collection, j.Name, row.Definition, row.State, row.Status, row.Schedule, row.ETag, j.Version,
		row.CreatedArg(), row.UpdatedArg(), row.DueArg(), row.TagsArg())
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

// DeleteJob implements [scheduler.Store.DeleteJob] over c: with an etag,
// the statement that deletes the job's row deletes it only when it holds
// that ETag, so that the row the condition holds for is the row deleted
// (on PostgreSQL, a write of the row that commits while the statement
// waits for it is judged again in its new version).
func (d *Dialect) DeleteJob(ctx context.Context, c Conn, collection, name, etag string) error {
	var n int64
	var err error
	if etag == "" {
		n, err = c.Exec(ctx, d.sql("DELETE FROM {s}.jobs WHERE collection = $1 AND name = $2"), collection, name)
	} else {
		n, err = c.Exec(ctx, d.sql("DELETE FROM {s}.jobs WHERE collection = $1 AND name = $2 AND etag = $3"), collection, name, etag)
	}
	if err != nil {
		return d.Wrap("delete job", collection+"/"+name, err)
	}
	if n == 0 {
		if etag == "" {
			return d.Missing(ctx, c, collection, name)
		}
		var stored string
		err := c.QueryRow(ctx, d.sql("SELECT etag FROM {s}.jobs WHERE collection = $1 AND name = $2"), collection, name).Scan(&stored)
		if errors.Is(err, ErrNoRows) {
			return d.Missing(ctx, c, collection, name)
		}
		if err != nil {
			return d.Wrap("delete job", collection+"/"+name, err)
		}
		return fmt.Errorf("%s: delete job %q of collection %q: ETag %q, not %q: %w", d.Name, name, collection, stored, etag, scheduler.ErrPreconditionFailed)
	}
	if d.DeleteHistory {
		if _, err := c.Exec(ctx, d.sql("DELETE FROM {s}.history WHERE collection = $1 AND job = $2"), collection, name); err != nil {
			return d.Wrap("delete job", collection+"/"+name, err)
		}
	}
	return nil
}

// TxView is a store's job and collection writes inside a transaction of
// the host's: the [scheduler.TxStore] that the stores' InTx methods
// return. A job put through it wakes the schedulers when the host
// commits, from the put's own statement (Dialect.Wake).
type TxView struct {
	// D is the store's dialect; C the host's transaction.
	D *Dialect
	C Conn
}

var (
	_ scheduler.TxStore    = (*TxView)(nil)
	_ scheduler.PutReader  = (*TxView)(nil)
	_ scheduler.JobCreator = (*TxView)(nil)
)

// GetCollection implements [scheduler.TxStore].
func (v *TxView) GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error) {
	return v.D.GetCollection(ctx, v.C, name)
}

// ReadForPut implements [scheduler.PutReader].
func (v *TxView) ReadForPut(ctx context.Context, collection, name string) (*scheduler.CollectionRecord, *scheduler.JobRecord, error) {
	return v.D.ReadForPut(ctx, v.C, collection, name)
}

// PutCollection implements [scheduler.TxStore]: a write that enables
// the collection wakes the schedulers when the host commits.
func (v *TxView) PutCollection(ctx context.Context, c *scheduler.CollectionRecord) error {
	_, err := v.D.PutCollection(ctx, v.C, c, true)
	return err
}

// GetJob implements [scheduler.TxStore].
func (v *TxView) GetJob(ctx context.Context, collection, name string) (*scheduler.JobRecord, error) {
	return v.D.GetJob(ctx, v.C, collection, name)
}

// PutJob implements [scheduler.TxStore].
func (v *TxView) PutJob(ctx context.Context, j *scheduler.JobRecord) error {
	return v.D.PutJob(ctx, v.C, j, true)
}

// CreateJob implements [scheduler.JobCreator].
func (v *TxView) CreateJob(ctx context.Context, col *scheduler.CollectionRecord, j *scheduler.JobRecord) error {
	row, err := v.D.EncodeRow(j)
	if err != nil {
		return err
	}
	return v.D.CreateJobOver(ctx, v.C, col, j, row, true)
}

// DeleteJob implements [scheduler.TxStore].
func (v *TxView) DeleteJob(ctx context.Context, collection, name, etag string) error {
	return v.D.DeleteJob(ctx, v.C, collection, name, etag)
}

// JobInserter is an optional capability of a [Conn]: inserting many new
// jobs in one round trip (store/postgres copies them). PutJobs uses it
// when the Conn has it, and otherwise inserts the jobs one statement at a
// time. A job that exists fails the whole insert with an error matching
// [scheduler.ErrConflict].
type JobInserter interface {
	// InsertJobs inserts jobs, with version 1, no lease, coll_enabled
	// set to enabled, job i holding place slots[i] and an incarnation of
	// NewIncarnation, which it sets in the job's Incarnation. It encodes
	// each job with d.EncodeRow as it sends it, so that the database
	// works on the rows sent while the next ones are encoded.
	InsertJobs(ctx context.Context, d *Dialect, jobs []*scheduler.JobRecord, enabled bool, slots []int64) error
}

// NewIncarnation returns the [scheduler.JobRecord.Incarnation] of a job
// that an insert creates: a random 64-bit value, never zero. Random
// rather than a count, so that the processes sharing a database need no
// sequence in common: two creates of one name draw the same one with odds
// of one in 2^64 (and are told apart by Created as well).
func NewIncarnation() int64 {
	for {
		if n := int64(rand.Uint64()); n != 0 {
			return n
		}
	}
}

// InsertArgs returns the arguments of a new job row's insert: JobCols'
// values up to due_at, then coll_enabled, then tags.
func (r *JobRow) InsertArgs(enabled bool) []any {
	return []any{r.Collection, r.Name, r.Definition, r.State, r.Status, r.Schedule, r.ETag,
		r.CreatedArg(), r.UpdatedArg(), r.DueArg(), enabled, r.TagsArg()}
}

// PutJobs implements [scheduler.BulkPutter.PutJobs] over c, which must be
// a transaction: the caller rolls it back when PutJobs fails. The
// collection row is locked ({lock}) for the rest of the transaction, which
// keeps single creates out meanwhile, so that the places the batch's
// creates take (see Places above), found in one query for the batch, stay
// free until they are inserted. Each job is encoded as it is written.
func (d *Dialect) PutJobs(ctx context.Context, c Conn, collection string, jobs []*scheduler.JobRecord) error {
	enabled, ci, err := d.collectionForPut(ctx, c, collection)
	if err != nil {
		return d.Wrap("put jobs of collection", collection, err)
	}
	var creates, replaces []*scheduler.JobRecord
	for _, j := range jobs {
		if j.Collection != collection {
			return fmt.Errorf("%s: put jobs of collection %q: job %q is of collection %q", d.Name, collection, j.Name, j.Collection)
		}
		if j.Version == 0 {
			creates = append(creates, j)
		} else {
			replaces = append(replaces, j)
		}
	}
	// The quota is decided before any write, so that a batch refused for
	// it writes nothing only to roll it back: the places are found while
	// the collection row is locked, which keeps other creates out until
	// the transaction ends, and the replaces take no place.
	var slots []int64
	if len(creates) > 0 {
		limit := int(ci.limit)
		f, err := d.freeSlots(ctx, c, placeSearch{collection: collection, limit: ci.limit, start: ci.next.Load(), need: len(creates), n: len(creates)})
		if err != nil {
			return d.Wrap("put jobs of collection", collection, err)
		}
		slots = f.slots
		if len(slots) < len(creates) {
			held := limit - len(slots)
			if !f.searched {
				held = int(f.held)
			}
			err := QuotaError(collection, limit, held).(*scheduler.QuotaError)
			err.Reason += fmt.Sprintf(", and the batch creates %d", len(creates))
			return err
		}
	}
	for _, j := range replaces {
		row, err := d.EncodeRow(j)
		if err != nil {
			return err
		}
		if err := d.ReplaceJob(ctx, c, j, row, false); err != nil {
			return err
		}
	}
	if len(creates) == 0 {
		return nil
	}
	if ins, ok := c.(JobInserter); ok {
		err = ins.InsertJobs(ctx, d, creates, enabled, slots)
	} else {
		err = d.insertEach(ctx, c, creates, enabled, slots)
	}
	if err == nil {
		err = d.countCreated(ctx, c, collection, creates)
	}
	if err == nil {
		ci.next.Store(slots[len(slots)-1] + 1)
	}
	return d.Wrap("put jobs of collection", collection, err)
}

// insertEach inserts jobs one statement at a time, job i into place
// slots[i], for PutJobs over a Conn that is no JobInserter.
func (d *Dialect) insertEach(ctx context.Context, c Conn, jobs []*scheduler.JobRecord, enabled bool, slots []int64) error {
	for i, j := range jobs {
		r, err := d.EncodeRow(j)
		if err != nil {
			return err
		}
		inc := NewIncarnation()
		n, err := c.Exec(ctx, d.sql(insertSlotSQL), append(r.InsertArgs(enabled), slots[i], inc)...)
		if err != nil {
			return d.createError(j.ID(), err)
		}
		if n == 0 { // the collection is locked: no create took the place
			return fmt.Errorf("%s: create job %q: place %d taken: %w", d.Name, j.ID(), slots[i], scheduler.ErrConflict)
		}
		j.Incarnation = inc
	}
	return nil
}

// EncodeRow encodes j for a write, its error naming the store and the job.
func (d *Dialect) EncodeRow(j *scheduler.JobRecord) (*JobRow, error) {
	row, err := EncodeJob(j)
	if err != nil {
		return nil, fmt.Errorf("%s: put job %q: %w", d.Name, j.ID(), err)
	}
	return row, nil
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
