// Package sqlite is a [scheduler.Store] in one SQLite file, the embedded
// default wherever the scheduler runs on its own. It uses the pure-Go driver
// modernc.org/sqlite (no cgo) in WAL mode.
//
// All writes of one Store go through one connection owned by one
// goroutine, in IMMEDIATE transactions, so that the rules of
// [scheduler.Store] (versions, leases, the job-count quota) hold without
// retries. Writes that arrive while a transaction commits are committed
// together in the next one (group commit), each inside a savepoint of its
// own, so a failed write leaves the others of its group alone and many
// concurrent writes share one sync to disk. The scheduler's own writes
// (ClaimDue, ExtendLease, ExtendLeases, Record, RecordBatch) go first: a group takes
// every one of them that waits before any other write, so a burst of
// writes through the API does not delay a job's claim or the record of
// its outcome by more than the group that is committing. Reads use the other connections
// of the pool and see the last committed state. Several processes may open
// the same file: SQLite's lock serialises their writes, and a writer waits
// for it as long as the others commit, failing only when one transaction
// held it for Options.BusyTimeout. A write, once begun, runs to its end
// whatever its context does; GiveBack, the scheduler's return of claims
// it will not run, so always finishes when it meets no other process's
// lock (see Store.GiveBack).
//
// It implements [scheduler.BatchRecorder] (a batch of outcomes in one
// transaction), [scheduler.LeaseExtender] (many leases in one statement)
// and [scheduler.StatsReader]: CountJobs reads the counts by
// collection and state that triggers keep in table job_counts as jobs are
// created, deleted or change state, so its cost does not grow with the
// jobs; the history counts are each one GROUP BY query over an index, and
// the recent history reads the history table backwards.
//
// # Schema
//
// Tables collections, jobs and history hold the records; definitions,
// status and scheduling state are JSON columns, and what is queried has a
// column and an index of its own (collection, name, state, due time,
// lease). Due jobs are found through the index on jobs.ready_at, a
// generated column that is the later of the due time and the lease end, or
// NULL when the job is not due or its collection is not Enabled; so
// claiming costs the same whatever the number of jobs stored. Times in
// columns are Unix nanoseconds; instants outside 1678–2262 are clamped in
// the index (their exact value stays in the JSON). A history entry's JSON
// leaves out what the row's columns hold (collection, job, status, end
// time), filled back from them when read; rows written before schema 8
// hold the whole entry. A job's status leaves out the counts that are
// zero, which read back as zero.
//
// The schema is created and migrated by [Open] and [New], from migrations
// embedded in the binary; table schema_version holds the version reached.
// A file written by a newer build is refused with a [*NewerSchemaError]
// rather than misread, and a file of another application with an error
// that says so.
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var (
	_ scheduler.Store         = (*Store)(nil)
	_ scheduler.BatchRecorder = (*Store)(nil)
	_ scheduler.LeaseExtender = (*Store)(nil)
	_ scheduler.AheadClaimer  = (*Store)(nil)
	_ scheduler.StatsReader   = (*Store)(nil)
	_ scheduler.JobCreator    = (*Store)(nil)
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations are the schema's steps, loaded once.
var migrations = func() []sqlstore.Migration {
	m, err := sqlstore.LoadMigrations(migrationFiles, "migrations")
	if err != nil {
		panic("store/sqlite: " + err.Error())
	}
	return m
}()

// SchemaVersion is the newest schema version this build knows.
var SchemaVersion = len(migrations)

// applicationID marks files written by this package ("JCLK").
const applicationID = 0x4A434C4B

// NewerSchemaError is returned by Open and New for a database whose schema
// is newer than this build knows.
type NewerSchemaError = sqlstore.NewerSchemaError

// Defaults of Options.
const (
	// DefaultBusyTimeout is how long a write waits for another process
	// that holds the database's write lock in one transaction.
	DefaultBusyTimeout = 5 * time.Second
)

// Options configures a Store. A nil *Options means every default.
type Options struct {
	// BusyTimeout is how long a write waits for the write lock that
	// another process holds before it fails, counted from the last
	// commit of another process: a write waits its turn as long as the
	// others that hold the lock in turn commit, and fails when one of
	// them held it for BusyTimeout, or (at the latest BusyTimeout later)
	// once the write's context ended.
	// Defaults to DefaultBusyTimeout (5s).
	BusyTimeout time.Duration
	// Synchronous is SQLite's synchronous setting for writes: "FULL"
	// (every commit reaches the disk before it returns) or "NORMAL" (in
	// WAL mode, a power loss may lose the last commits but never
	// corrupts the file; a crash of the process loses nothing). Empty
	// means "FULL".
	Synchronous string
	// MaxReaders is the most connections used for reads at once by
	// Open. Defaults to 4. New leaves the host's pool settings alone.
	MaxReaders int
	// Logger receives the store's log: a warning, once, when a host's
	// transaction given to InTx keeps SQLite's temporary files on disk
	// (see Store.InTx). Nil means slog.Default(), as for the Scheduler's
	// Config.Logger.
	Logger *slog.Logger
}

func (o *Options) withDefaults() (Options, error) {
	var d Options
	if o != nil {
		d = *o
	}
	if d.BusyTimeout == 0 {
		d.BusyTimeout = DefaultBusyTimeout
	}
	if d.BusyTimeout < 0 {
		return d, errors.New("store/sqlite: Options.BusyTimeout is negative")
	}
	switch strings.ToUpper(d.Synchronous) {
	case "":
		d.Synchronous = "FULL"
	case "FULL", "NORMAL":
		d.Synchronous = strings.ToUpper(d.Synchronous)
	default:
		return d, fmt.Errorf("store/sqlite: Options.Synchronous is %q, not FULL or NORMAL", d.Synchronous)
	}
	if d.MaxReaders == 0 {
		d.MaxReaders = 4
	}
	if d.MaxReaders < 0 {
		return d, errors.New("store/sqlite: Options.MaxReaders is negative")
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return d, nil
}

// Store is a [scheduler.Store] in a SQLite database. Create one with
// [Open] or [New]; it is safe for concurrent use.
type Store struct {
	db    *sql.DB
	owned bool // Close closes db
	name  string
	opts  Options

	// Writes are handed to one goroutine, which owns the write
	// connection and commits them in groups; see write.
	reqs       chan *writeReq // writes of the API (PutJob, DeleteJob, ...)
	first      chan *writeReq // the engine's writes, which go first
	quit       chan struct{}
	writerDone chan struct{}
	w          *sql.Conn      // the write connection; the writer's
	shmPath    string         // the file of the database's wal-index; see begin
	turns      *atomic.Uint64 // the write transactions begun on it in this process; see begin
	stmts      map[string]*sql.Stmt
	reads      sync.Map // statement -> *sql.Stmt on db; see readConn
	host       hostTx   // the last host's transaction InTx was given, while it lives
	log        *slog.Logger
	// tempStoreWarned is set once InTx warned of a host's connection
	// whose temp_store is not MEMORY; tempStoreChecked counts the host's
	// transactions it checked. See checkTempStore.
	tempStoreWarned  atomic.Bool
	tempStoreChecked atomic.Int32

	d *sqlstore.Dialect // the operations shared with store/postgres

	mu     sync.Mutex
	closed bool
}

// Open opens (creating it when missing) the SQLite database file at path,
// creates or migrates its schema, and returns a Store that owns it: Close
// closes the file. opts may be nil.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if path == "" {
		return nil, errors.New("store/sqlite: Open: path is empty")
	}
	if strings.ContainsRune(path, '?') || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("store/sqlite: Open: path %q: use a plain file path without '?' or 'file:'", path)
	}
	dsn := path + fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)&_pragma=synchronous(%s)",
		o.BusyTimeout.Milliseconds(), o.Synchronous)
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store/sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(o.MaxReaders + 1)
	db.SetMaxIdleConns(o.MaxReaders + 1)
	db.SetConnMaxIdleTime(0)
	s, err := newStore(ctx, db, path, o)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// New returns a Store over db, a database opened by the host with the
// "sqlite" driver of modernc.org/sqlite on a file (an in-memory database
// gives each connection a database of its own, which does not work). It
// creates or migrates the schema. Close leaves db open. opts may be nil;
// the Store sets busy_timeout, foreign_keys and synchronous on the one
// connection it writes with and leaves the host's pool settings alone.
func New(ctx context.Context, db *sql.DB, opts *Options) (*Store, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if db == nil {
		return nil, errors.New("store/sqlite: New: db is nil")
	}
	return newStore(ctx, db, "database", o)
}

func newStore(ctx context.Context, db *sql.DB, name string, o Options) (*Store, error) {
	s := &Store{db: db, name: name, opts: o, log: o.Logger.With("store", "sqlite"), stmts: make(map[string]*sql.Stmt), d: &sqlstore.Dialect{Name: "store/sqlite", JSONAgg: "json_group_array", Unique: uniqueViolation,
		Count: "SELECT COALESCE(sum(n), 0) FROM job_counts WHERE collection = $1"},
		reqs: make(chan *writeReq), first: make(chan *writeReq), quit: make(chan struct{}), writerDone: make(chan struct{})}
	if err := s.connect(ctx); err != nil {
		return nil, s.openError(err)
	}
	go s.writer()
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, s.openError(err)
	}
	return s, nil
}

// openError explains the errors of a file that is not a database.
func (s *Store) openError(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("store/sqlite: open %s: not a SQLite database, or a corrupt one: %w", s.name, err)
		}
	}
	if strings.HasPrefix(err.Error(), "store/sqlite:") {
		return err
	}
	var ns *NewerSchemaError
	if errors.As(err, &ns) {
		return err
	}
	return fmt.Errorf("store/sqlite: open %s: %w", s.name, err)
}

// connect takes the write connection from the pool and sets it up.
func (s *Store) connect(ctx context.Context) error {
	c, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	for _, p := range []string{
		fmt.Sprintf("PRAGMA busy_timeout = %d", s.opts.BusyTimeout.Milliseconds()),
		"PRAGMA foreign_keys = ON",
		"PRAGMA synchronous = " + s.opts.Synchronous,
		// A statement journal in memory: every write statement that fires
		// a trigger (the job counts' do) keeps the pages it changes there
		// until it ends, which in a file cost a write system call a page.
		"PRAGMA temp_store = MEMORY",
	} {
		if _, err := c.ExecContext(ctx, p); err != nil {
			c.Close()
			return err
		}
	}
	if err := s.setWAL(ctx, c); err != nil {
		c.Close()
		return err
	}
	var seq int
	var schema, file string
	if err := c.QueryRowContext(ctx, "PRAGMA database_list").Scan(&seq, &schema, &file); err != nil {
		c.Close()
		return err
	}
	if file != "" {
		s.shmPath = file + "-shm"
		t, _ := writeTurns.LoadOrStore(s.shmPath, new(atomic.Uint64))
		s.turns = t.(*atomic.Uint64)
	}
	s.w = c
	clear(s.stmts)
	return nil
}

// setWAL puts the database of c in WAL mode, waiting up to
// Options.BusyTimeout while another connection holds a lock that the
// switch needs. The switch of a file in rollback mode (a new file) reads
// its header, then takes the write lock to change it; SQLite does not call
// its busy handler for that upgrade of a read lock, so that two processes
// that open a new file at once would see SQLITE_BUSY at once. Once another
// connection made the switch, the file is in WAL mode and the pragma
// needs no write lock.
func (s *Store) setWAL(ctx context.Context, c *sql.Conn) error {
	deadline := time.Now().Add(s.opts.BusyTimeout)
	pause := time.Millisecond
	for {
		var mode string
		err := c.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
		if !busy(err) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// migrate creates or upgrades the schema in one transaction.
func (s *Store) migrate(ctx context.Context) error {
	return s.write(ctx, func(tx *wtx) error {
		var app int64
		if err := tx.c.QueryRowContext(ctx, "PRAGMA application_id").Scan(&app); err != nil {
			return err
		}
		if app != 0 && app != applicationID {
			return fmt.Errorf("store/sqlite: open %s: the file belongs to another application (application_id %#x)", s.name, app)
		}
		rows, err := tx.c.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
		if err != nil {
			return err
		}
		var tables []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return err
			}
			tables = append(tables, n)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		version := 0
		if !slices.Contains(tables, "schema_version") {
			if len(tables) > 0 {
				return fmt.Errorf("store/sqlite: open %s: the database holds tables of another application (%s) and no jobclock schema; use a new file",
					s.name, strings.Join(tables, ", "))
			}
			if _, err := tx.c.ExecContext(ctx, "CREATE TABLE schema_version (version INTEGER NOT NULL)"); err != nil {
				return err
			}
			if _, err := tx.c.ExecContext(ctx, "INSERT INTO schema_version (version) VALUES (0)"); err != nil {
				return err
			}
		} else if err := tx.c.QueryRowContext(ctx, "SELECT version FROM schema_version").Scan(&version); err != nil {
			return fmt.Errorf("store/sqlite: open %s: read schema version: %w", s.name, err)
		}
		if version > len(migrations) {
			return &NewerSchemaError{Backend: "store/sqlite", Found: version, Known: len(migrations)}
		}
		for _, m := range migrations[version:] {
			if _, err := tx.c.ExecContext(ctx, m.SQL); err != nil {
				return fmt.Errorf("store/sqlite: migration %s: %w", m.Name, err)
			}
			if _, err := tx.c.ExecContext(ctx, "UPDATE schema_version SET version = ?", m.Version); err != nil {
				return err
			}
		}
		if app == 0 {
			if _, err := tx.c.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", applicationID)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Close waits for the writes under way, releases the write connection,
// and closes the database when Open opened it. Methods called after Close
// fail.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.quit)
	s.mu.Unlock()
	<-s.writerDone
	s.host.mu.Lock()
	s.host.conn, s.host.view = nil, nil
	s.host.mu.Unlock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.reads.Range(func(_, st any) bool {
		st.(*sql.Stmt).Close()
		return true
	})
	var err error
	if s.w != nil {
		err = s.w.Close()
		s.w = nil
	}
	if s.owned {
		err = errors.Join(err, s.db.Close())
	}
	return err
}

var errClosed = errors.New("store/sqlite: store is closed")

// wtx is a write transaction on the write connection.
type wtx struct {
	s   *Store
	c   *sql.Conn
	ctx context.Context
}

// stmt returns the prepared statement of query on the write connection.
func (t *wtx) stmt(query string) (*sql.Stmt, error) {
	if st := t.s.stmts[query]; st != nil {
		return st, nil
	}
	st, err := t.c.PrepareContext(t.ctx, query)
	if err != nil {
		return nil, err
	}
	t.s.stmts[query] = st
	return st, nil
}

func (t *wtx) exec(query string, args ...any) (int64, error) {
	st, err := t.stmt(query)
	if err != nil {
		return 0, err
	}
	res, err := st.ExecContext(t.ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t *wtx) queryRow(query string, args ...any) *sql.Row {
	st, err := t.stmt(query)
	if err != nil {
		// Let Scan report the error.
		return t.c.QueryRowContext(t.ctx, query, args...)
	}
	return st.QueryRowContext(t.ctx, args...)
}

// Exec implements sqlstore.Conn on the write connection.
func (t *wtx) Exec(_ context.Context, query string, args ...any) (int64, error) {
	return t.exec(query, args...)
}

// QueryRow implements sqlstore.Conn on the write connection.
func (t *wtx) QueryRow(_ context.Context, query string, args ...any) sqlstore.Row {
	return sqlRow{t.queryRow(query, args...)}
}

func (t *wtx) query(query string, args ...any) (*sql.Rows, error) {
	st, err := t.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(t.ctx, args...)
}

// writeReq is a write waiting for the writer.
type writeReq struct {
	ctx  context.Context
	fn   func(*wtx) error
	done chan error
}

// maxGroup is the most writes committed in one transaction.
const maxGroup = 128

// write runs fn in a write transaction and returns once it committed, or
// failed and changed nothing. Writes are serialised through one goroutine
// that commits the writes waiting at the same time in one transaction
// (group commit), each inside a savepoint of its own so that a failed one
// leaves the others alone; one commit, one sync, for the whole group.
// Once a write has started it runs to its end even when ctx ends meanwhile
// (an interrupted statement would roll back the whole group).
func (s *Store) write(ctx context.Context, fn func(*wtx) error) error {
	return s.queue(ctx, s.reqs, fn)
}

// writeFirst is write for the engine's writes (claims, leases, records):
// the writer takes those that wait before any other.
func (s *Store) writeFirst(ctx context.Context, fn func(*wtx) error) error {
	return s.queue(ctx, s.first, fn)
}

// queue hands fn to the writer through q and waits for its answer.
func (s *Store) queue(ctx context.Context, q chan<- *writeReq, fn func(*wtx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	req := &writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case q <- req:
	case <-s.quit:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	return <-req.done
}

// writer runs groups of writes until Close. A group starts with the
// engine's writes that wait, then takes the others that wait, up to
// maxGroup in all.
func (s *Store) writer() {
	defer close(s.writerDone)
	batch := make([]*writeReq, 0, maxGroup)
	for {
		select {
		case r := <-s.first:
			batch = append(batch[:0], r)
		default:
			select {
			case r := <-s.first:
				batch = append(batch[:0], r)
			case r := <-s.reqs:
				batch = append(batch[:0], r)
			case <-s.quit:
				return
			}
		}
		batch = drain(batch, s.first)
		batch = drain(batch, s.reqs)
		s.runGroup(batch)
		clear(batch)
	}
}

// drain appends to batch the requests that wait in q, up to maxGroup in
// all.
func drain(batch []*writeReq, q <-chan *writeReq) []*writeReq {
	for len(batch) < maxGroup {
		select {
		case r := <-q:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// ErrFull is joined to the error of a write that failed because the
// database is full: its disk has no room left, or the file reached its
// max_page_count. The write changed nothing; writes succeed again once
// there is room (deleting jobs or history frees pages inside the file, which
// later writes reuse). A Scheduler keeps trying to record the outcomes of
// the attempts that ended meanwhile.
var ErrFull = errors.New("store/sqlite: the database is full (no room left on its disk, or its max_page_count reached); writes succeed again once there is room")

// fullError returns err joined with ErrFull when SQLite reported a full
// database (SQLITE_FULL) and err does not say so yet, else err.
func fullError(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL && !errors.Is(err, ErrFull) {
		return fmt.Errorf("%w; %w", err, ErrFull)
	}
	return err
}

// uniqueViolation reports SQLite's SQLITE_CONSTRAINT_PRIMARYKEY and
// SQLITE_CONSTRAINT_UNIQUE.
func uniqueViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE)
}

// runGroup runs the writes of batch in one transaction and answers each.
func (s *Store) runGroup(batch []*writeReq) {
	ctx := context.Background()
	errs := make([]error, len(batch))
	live := answerEnded(batch, errs)
	answer := func() {
		for i, r := range batch {
			if r != nil {
				r.done <- fullError(errs[i])
			}
		}
	}
	failAll := func(err error) {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		answer()
	}
	if live == 0 {
		answer()
		return
	}
	if s.w == nil {
		if err := s.connect(ctx); err != nil {
			failAll(fmt.Errorf("store/sqlite: reconnect: %w", err))
			return
		}
	}
	if err := s.begin(ctx, batch, errs); err != nil {
		s.reset()
		failAll(err)
		return
	}
	if live = countLive(errs); live == 0 {
		answer()
		return
	}
	exec := func(q string) error {
		st, err := (&wtx{s: s, c: s.w, ctx: ctx}).stmt(q)
		if err == nil {
			_, err = st.ExecContext(ctx)
		}
		return err
	}
	rollback := func() {
		if _, err := s.w.ExecContext(ctx, "ROLLBACK"); err != nil && !strings.Contains(err.Error(), "no transaction") {
			s.reset()
		}
	}
	single := live == 1
	for i, r := range batch {
		if errs[i] != nil {
			continue
		}
		if !single {
			if err := exec("SAVEPOINT w"); err != nil {
				rollback()
				failAll(err)
				return
			}
		}
		err := r.fn(&wtx{s: s, c: s.w, ctx: context.WithoutCancel(r.ctx)})
		switch {
		case err != nil && single:
			rollback()
			errs[i] = err
			answer()
			return
		case err != nil:
			errs[i] = err
			if rerr := errors.Join(exec("ROLLBACK TO w"), exec("RELEASE w")); rerr != nil {
				// SQLite may have rolled the whole transaction back
				// itself (it can after SQLITE_FULL, SQLITE_IOERR or
				// SQLITE_NOMEM), so the savepoint is gone: the other
				// writes of the group are undone for this write's
				// reason, which their callers need to see (a full
				// database, say), not only the missing savepoint.
				rollback()
				failAll(fmt.Errorf("store/sqlite: undone with another write of the same transaction, which failed: %w (undoing that write alone: %w)", err, rerr))
				return
			}
		case !single:
			if err := exec("RELEASE w"); err != nil {
				rollback()
				failAll(err)
				return
			}
		}
	}
	if _, err := s.w.ExecContext(ctx, "COMMIT"); err != nil {
		rollback()
		failAll(err)
		return
	}
	answer()
}

// writeTurns holds, by the path of a database's wal-index, an
// *atomic.Uint64 that counts the write transactions the Stores of this
// process began on that database; see begin.
var writeTurns sync.Map

// begin begins the write transaction of a group, waiting for SQLite's
// write lock while another connection holds it. SQLite's busy handler
// looks for the lock now and then, up to Options.BusyTimeout; connections
// that write without pause take the lock again as soon as they ended
// their transaction, so that the handler may find it taken each time
// although each transaction holds it briefly (other processes on the
// file, or other Stores in this one). So begin tries again as long as
// another transaction than the one it found took the lock while it
// waited: one that committed, which changes the header of the file's
// wal-index (a transaction that writes its pages to the write-ahead log
// before it commits does not), or one that another Store of this process
// began (writeTurns), which tells of transactions that roll back too, as
// the writes a Store refuses do (a create over a full quota, a delete of
// what does not exist): they leave the file as it was. A group fails for
// the lock only when it saw neither for BusyTimeout, which is one
// transaction held that long (or another process's transactions that all
// rolled back, which the file does not show), or when the contexts of
// all its writes ended meanwhile. Each write whose context ended is
// answered as soon as begin finds it (answerEnded); when none is left,
// begin returns nil without a transaction. (PRAGMA data_version does not
// tell: a wait that failed leaves it as it was although others
// committed.)
func (s *Store) begin(ctx context.Context, batch []*writeReq, errs []error) error {
	seen := s.lockProgress()
	for {
		_, err := s.w.ExecContext(ctx, "BEGIN IMMEDIATE")
		if err == nil && s.turns != nil {
			s.turns.Add(1)
		}
		if !busy(err) {
			return err
		}
		now := s.lockProgress()
		if now.wal == (walState{}) || now == seen {
			return err
		}
		seen = now
		if answerEnded(batch, errs) == 0 {
			return nil
		}
	}
}

// lockProgress is what begin looks at to tell whether other transactions
// took the write lock while it waited.
type lockProgress struct {
	wal   walState // the wal-index header, which a commit changes
	turns uint64   // the write transactions begun by this process's Stores
}

// lockProgress returns the write connection's lockProgress; its wal is
// zero when it cannot tell.
func (s *Store) lockProgress() lockProgress {
	p := lockProgress{wal: s.walState()}
	if s.turns != nil {
		p.turns = s.turns.Load()
	}
	return p
}

// walState is the header of a database's wal-index (the first 48 bytes
// of its "-shm" file), which a commit changes (its change counter and the
// log's last committed frame) and nothing else does: a transaction whose
// pages spill into the write-ahead log before its commit grows the log
// but leaves the header alone.
type walState [48]byte

// walState returns the wal-index header of the write connection's
// database, or the zero walState when it cannot tell.
func (s *Store) walState() walState {
	var h walState
	if s.shmPath == "" {
		return h
	}
	f, err := os.Open(s.shmPath)
	if err != nil {
		return h
	}
	defer f.Close()
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return walState{}
	}
	return h
}

// busy reports SQLite's SQLITE_BUSY.
func busy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// answerEnded answers, with their context's error, the writes of a group
// still to run whose context ended, and marks them in errs and as
// answered in batch (nil), so that they need not wait for the rest of
// their group. It returns how many writes are left to run.
func answerEnded(batch []*writeReq, errs []error) int {
	for i, r := range batch {
		if errs[i] != nil {
			continue
		}
		if errs[i] = r.ctx.Err(); errs[i] != nil {
			r.done <- errs[i]
			batch[i] = nil
		}
	}
	return countLive(errs)
}

// countLive returns how many of errs are nil: the writes of a group still
// to run.
func countLive(errs []error) int {
	n := 0
	for _, err := range errs {
		if err == nil {
			n++
		}
	}
	return n
}

// reset drops the write connection after an error that may have left it
// unusable; the next write opens another.
func (s *Store) reset() {
	for _, st := range s.stmts {
		st.Close()
	}
	clear(s.stmts)
	if s.w != nil {
		s.w.Raw(func(any) error { return driver.ErrBadConn }) // discard it
		s.w.Close()
		s.w = nil
	}
}

func (s *Store) readable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	return nil
}
