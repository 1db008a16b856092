// Package postgres is a [scheduler.Store] in PostgreSQL, for several
// scheduler processes sharing one database. It uses pgx v5.
//
// Due jobs are claimed with SELECT ... FOR UPDATE SKIP LOCKED over an index
// on their due time, so concurrent claimers never wait for each other or
// take the same job, and a claim costs the same whatever the number of jobs
// stored (it reads past the jobs leased at the time). A claim leases the
// job to its owner until a given instant; Record checks the lease holder
// and the version and writes the job, releases the lease and appends the
// history in one statement, so it is atomic whatever happens to the
// connection.
//
// The scheduler's own work (ClaimDue, NextDue, ExtendLease,
// ExtendLeases, Record, RecordBatch) runs on a small pool of its own
// (Options.EngineConns), so that API requests holding every connection of
// the main pool never make a job late. ExtendLeases waits for the rows
// that a host's transaction holds one at a time, and on one of those
// connections at a time in the whole Store, whatever the number of calls
// under way (the lease keeper makes several at once), for no more than
// half of what the call's context leaves when it begins to wait; a lease
// whose row stayed locked is reported not extended, and the lease keeper
// tries again about a third of a lease later, while the lease has time
// left. GiveBack, the
// scheduler's return of claims it will not run, waits at most 100 ms for
// each row another transaction has locked, and tries the whole again while
// its context lasts; a context without a deadline is tried again only
// within a second of the call's start. So a give-back that meets a row held
// for ever fails rather than wait (the claim keeps its lease until it
// expires), and one that meets no lock always runs to its end.
//
// A job's create (PutJob of a new job, CreateJob) is one statement. The
// creates into one collection run in at most two groups at once: a create
// that finds a place free goes at once, alone, and one that finds none
// waits, and then runs together with the creates that waited with it:
// their statements go in one round trip and commit in one transaction
// (group commit), so puts from many goroutines share the round trips and
// the commits. When a group ends while the other runs, its place is held
// for the creates coming back until about half of those in groups and
// waiting are there, the other group ends, or the first of them has waited
// 50 ms, so that they commit together in the next flush of the WAL rather
// than the first of them alone and the others after. So a create that
// finds no place free (two groups run, or one runs and the other's place
// is held) waits beside a running group, up to 50 ms; a lone writer whose
// creates are the only ones running waits for nothing, and one beside a
// group that runs long (a create that waits for a lock) waits up to 50 ms
// once and then goes at once. When the server refuses one create of a
// group, each of the others runs again on its own: every put is written
// completely or not at all, and one put's failure is not another's. No
// create waits long behind others' locks: one that finds no group within
// 50 ms, or whose group waits 50 ms for a lock (a job of the same name
// that a host's transaction created and has not committed, say), runs on
// its own instead.
//
// It implements [scheduler.BatchRecorder], [scheduler.LeaseExtender] (many
// leases in one statement) and [scheduler.StatsReader].
// CountJobs reads counts by collection and state that triggers keep as
// jobs are created, deleted or change state (see Schema), so its cost does
// not grow with the jobs; the history counts are each one GROUP BY query
// over an index, and the recent history reads the history table
// backwards.
//
// # Schema
//
// The tables live in their own schema (Options.Schema, "jobclock" by
// default), created when missing: collections, jobs and history, with the
// definitions, status and scheduling state as json columns and what is
// queried as columns of its own with indexes (collection, name, state, due
// time). The partial index on the due time of the jobs of Enabled
// collections is what ClaimDue, NextDue and CountDue read; it leaves out
// the lease, so a claim changes no indexed column and PostgreSQL writes it
// without touching the indexes (a HOT update: table jobs keeps free space
// in its pages for that). A job without a lease is ready at its due time,
// a leased one at the later of its due time and its lease end. Times in
// columns are Unix nanoseconds; instants outside 1678–2262 are clamped in
// the index (their exact value stays in the JSON). History has no foreign
// key to jobs, so that recording an entry does not look its job up again:
// the store deletes a job's history in the transaction that deletes the
// job. Nor have jobs one to collections, so that a create (whose
// statement share-locks its collection's row) does not look the
// collection up again: the store deletes a collection's jobs in the
// transaction that deletes the collection. Each job holds a numbered place of its collection below the quota
// (a unique index), so that the quota check of a create neither counts
// the jobs nor updates a row that every create would wait for. A history
// entry's JSON (column entry) leaves out what the row's columns hold
// (collection, job, status, end time, action name, retry count), filled
// back from them when read; rows written before schema 16 hold the whole
// entry. A job's status (column status) leaves out the counts that are
// zero (executionCount, failureCount, faultedCount), which read back as
// zero; rows written before hold them, and builds of the same schema
// read both.
//
// The job counts: the changes of the counts by collection and state (+n,
// -n) go into job_count_deltas. The store's creates insert theirs in the
// statement that creates the job, or, for a bulk put, in one statement
// after its COPY (one row per state, whatever the number of jobs); the
// statements that record outcomes insert theirs too, one row per
// collection and state whose count they change (the outcomes of one-time
// jobs complete them; claims, leases and the outcomes of recurring jobs
// change no state); triggers on jobs insert those of deletes, one row per
// statement, and of other changes of state (replaces, whatever statement
// makes them that does not release a lease: migration 15), two per job
// whose state changes. Jobs inserted by SQL of one's own, not through the
// store, are not counted unless that SQL inserts their change too
// (migration 14 says how); nor are those that processes of a build older
// than schema 14 create, or the state changes of the outcomes that
// processes of a build older than schema 15 record, once a newer one
// upgraded the schema (stop them before the upgrade). [Store.Recount] repairs counts that drifted so. Inserts wait for nothing, so concurrent puts into one
// collection do not queue on a counter row, and a transaction of many
// puts does not grow one row's version chain.
// CountJobs, and Prune (which the engine runs every few minutes), fold the
// committed changes into job_counts, one fold at a time per schema; a
// count is the sum of the two tables, read in one statement, so it is
// exact.
//
// [Open] and [New] create or migrate the schema from migrations embedded in
// the binary, under an advisory lock so that processes starting together
// migrate once; table schema_version holds the version reached. A schema
// written by a newer build is refused with a [*NewerSchemaError]. An
// upgrade first takes the locks of jobclock's own tables (not those of
// another application that shares the schema), waiting at most half a
// second for all of them together, since every statement on a table
// queues behind a wait for its lock: behind a long transaction on them (a
// host's, a Recount) it gives up, letting the claims and records of
// running processes go on, and tries again after a pause (half a second,
// doubled after each try up to 8 s) until ctx ends. Each try that gives
// up is logged (Options.Logger) as a warning with how long the upgrade
// has waited; bound the wait with ctx, and the error returned when ctx
// ends says that the upgrade waited for its tables' locks.
//
// # Wake-ups
//
// A write through PutJob or PutCollection sends a notification on a
// channel named after the schema, after it commits; one that fails (a
// lost connection) is sent again until it goes through, and logged as a
// warning once when the sends start failing and once when one goes
// through (Options.Logger). [Store.Notify] returns a Go channel that
// receives a value when another process (or this one) sent one, so a
// scheduler can look for due work at once instead of at its next poll. It
// is an optional capability, found by type assertion:
//
//	type Notifier interface {
//		Notify(ctx context.Context) (<-chan struct{}, error)
//	}
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

var (
	_ scheduler.Store         = (*Store)(nil)
	_ scheduler.BatchRecorder = (*Store)(nil)
	_ scheduler.LeaseExtender = (*Store)(nil)
	_ scheduler.AheadClaimer  = (*Store)(nil)
	_ scheduler.StatsReader   = (*Store)(nil)
	_ scheduler.PutReader     = (*Store)(nil)
	_ scheduler.JobCreator    = (*Store)(nil)
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

var migrations = func() []sqlstore.Migration {
	m, err := sqlstore.LoadMigrations(migrationFiles, "migrations")
	if err != nil {
		panic("store/postgres: " + err.Error())
	}
	return m
}()

// SchemaVersion is the newest schema version this build knows.
var SchemaVersion = len(migrations)

// NewerSchemaError is returned by Open and New for a schema newer than this
// build knows.
type NewerSchemaError = sqlstore.NewerSchemaError

// DefaultSchema is the schema that holds the tables unless Options.Schema
// says otherwise.
const DefaultSchema = "jobclock"

// DefaultEngineConns is the default of Options.EngineConns.
const DefaultEngineConns = 2

// Options configures a Store. A nil *Options means every default.
type Options struct {
	// Schema is the PostgreSQL schema that holds the store's tables; it
	// is created when missing. Defaults to DefaultSchema ("jobclock").
	Schema string
	// EngineConns is the most connections of a pool reserved for the
	// scheduler's own work: ClaimDue, NextDue, ExtendLease, ExtendLeases,
	// Record and RecordBatch use it, every other method the main pool. So requests
	// of the API that hold every connection of the main pool do not
	// delay a claim or the record of an outcome. The reserved pool has
	// the main pool's settings (the DSN's with Open, the host pool's
	// Config with New) but for its size; Close closes it. Zero means
	// DefaultEngineConns (2); a negative value reserves none, and the
	// scheduler's work shares the main pool.
	EngineConns int
	// Logger receives the store's log: a wake-up notification that
	// failed and is sent again (a warning when the sends start failing,
	// info when one goes through), a listener of Notify or NotifyWrites
	// that lost its connection (a warning when lost, info when connected
	// again), and an upgrade that waits for the locks of its tables (each try,
	// with how long it has waited). Nil means slog.Default(), as for the
	// Scheduler's Config.Logger.
	Logger *slog.Logger
}

// Store is a [scheduler.Store] in PostgreSQL. Create one with [Open] or
// [New]; it is safe for concurrent use, and several processes may use the
// same schema at once.
type Store struct {
	pool    *pgxpool.Pool
	engine  *pgxpool.Pool // the scheduler's own: see Options.EngineConns; pool when none is reserved
	owned   bool
	schema  string
	channel string // notification channel
	repl    *strings.Replacer
	queries sync.Map // statement -> its text for the schema: see sql
	log     *slog.Logger

	// hook, when set by tests, runs before each step of a multi-statement
	// transaction.
	hook func(ctx context.Context, tx pgx.Tx, step string)

	d *sqlstore.Dialect // the operations shared with store/sqlite

	// lockedRows holds a token while an ExtendLeases call waits for a row
	// that another transaction locked: one such wait at a time in the
	// Store, on one engine connection (see extendLocked).
	lockedRows chan struct{}

	creates sync.Map // collection name -> *grouper of its single creates on pool

	// vacuumOwed is when the next fold tries again a vacuum of
	// job_count_deltas still owed, in Unix nanoseconds; 0 when none is;
	// vacuumWait is how long it waited for that try, 0 when none is owed;
	// vacuumRole says whether the store's role may vacuum the table: 0
	// not known yet, 1 it may, -1 it may not (see vacuumFolded).
	vacuumOwed, vacuumWait atomic.Int64
	vacuumRole             atomic.Int32
	// unvacuumed counts the changes of the job counts that the store's
	// folds deleted since the last vacuum began (see vacuumFolded).
	unvacuumed atomic.Int64
	// vacuuming is set while a vacuum runs in the background (see
	// vacuumFolded); vacuums counts it for Close, which cancels closing,
	// the context it runs under.
	vacuuming   atomic.Bool
	vacuums     sync.WaitGroup
	closing     context.Context
	stopClosing context.CancelFunc

	mu       sync.Mutex
	closed   bool
	cancels  []context.CancelFunc // of Notify listeners
	closedCh chan struct{}
	wakes    chan struct{} // to the notifier: a write committed
	woke     woken         // what the writes that asked for a notification wrote
	wg       sync.WaitGroup
}

// Open connects to the database at dsn (a URL or key=value string as pgx
// understands it, including pgxpool's settings such as pool_max_conns),
// creates or migrates the schema, and returns a Store that owns the
// connection pool: Close closes it. opts may be nil.
func Open(ctx context.Context, dsn string, opts *Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store/postgres: open: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store/postgres: open: %w", err)
	}
	s, err := New(ctx, pool, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// New returns a Store over the host's pool, creating or migrating the
// schema, and opens the pool reserved for the scheduler's work (see
// Options.EngineConns). Close leaves the host's pool open. opts may be
// nil.
func New(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*Store, error) {
	if pool == nil {
		return nil, errors.New("store/postgres: New: pool is nil")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if len(o.Schema) > 50 {
		return nil, fmt.Errorf("store/postgres: Options.Schema %q is longer than 50 bytes", o.Schema)
	}
	if o.EngineConns == 0 {
		o.EngineConns = DefaultEngineConns
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	engine := pool
	if o.EngineConns > 0 {
		cfg := pool.Config()
		cfg.MaxConns = int32(min(o.EngineConns, 1<<20))
		cfg.MinConns = min(cfg.MinConns, cfg.MaxConns)
		cfg.MinIdleConns = min(cfg.MinIdleConns, cfg.MaxConns)
		var err error
		if engine, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
			return nil, fmt.Errorf("store/postgres: open the pool of Options.EngineConns: %w", err)
		}
	}
	q := pgx.Identifier{o.Schema}.Sanitize()
	s := &Store{
		pool: pool, engine: engine, schema: o.Schema, channel: "jobclock:" + o.Schema,
		repl:     strings.NewReplacer("{s}.", q+"."),
		log:      o.Logger.With("store", "postgres"),
		closedCh: make(chan struct{}),
		wakes:    make(chan struct{}, 1),

		lockedRows: make(chan struct{}, 1),
	}
	s.closing, s.stopClosing = context.WithCancel(context.Background())
	s.d = &sqlstore.Dialect{Name: "store/postgres", Schema: q + ".", Lock: " FOR NO KEY UPDATE", Share: " FOR SHARE", JSONAgg: "json_agg",
		Count:         countSQL,
		Wake:          " AND pg_notify('" + strings.ReplaceAll(s.channel, "'", "''") + "', '') IS NOT NULL",
		DeleteHistory: true, CountCreates: true, Unique: uniqueViolation,
		Step: func(ctx context.Context, c sqlstore.Conn, step string) {
			if pc, ok := c.(pgConn); ok {
				if tx, ok := pc.q.(pgx.Tx); ok {
					s.step(ctx, tx, step)
				}
			}
		}}
	if err := s.migrate(ctx); err != nil {
		s.stopClosing()
		s.closeEngine()
		return nil, err
	}
	s.wg.Add(1)
	go s.notifier()
	return s, nil
}

// closeEngine closes the pool reserved for the scheduler's work.
func (s *Store) closeEngine() {
	if s.engine != s.pool {
		s.engine.Close()
	}
}

// Close stops the Notify listeners, and closes the pool when Open opened
// it. Methods called after Close fail.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closedCh)
	for _, c := range s.cancels {
		c()
	}
	s.mu.Unlock()
	s.stopClosing()
	s.vacuums.Wait()
	s.wg.Wait()
	s.closeEngine()
	if s.owned {
		s.pool.Close()
	}
	return nil
}

var errClosed = errors.New("store/postgres: store is closed")

func (s *Store) live() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errClosed
	}
	return nil
}

// sql returns query, one of the package's statements, with "{s}."
// replaced by the quoted schema. Each statement's text is made once and
// kept: the claim and record statements run many times a second, and a
// replace each time copied their few kilobytes. The statements are a set
// that does not grow with what the store holds (values are bound as
// arguments, never written into the text).
func (s *Store) sql(query string) string {
	if q, ok := s.queries.Load(query); ok {
		return q.(string)
	}
	q, _ := s.queries.LoadOrStore(query, s.repl.Replace(query))
	return q.(string)
}

// step runs the test hook, if any.
func (s *Store) step(ctx context.Context, tx pgx.Tx, name string) {
	if s.hook != nil {
		s.hook(ctx, tx, name)
	}
}

// inTx runs fn in a transaction and commits it, retrying a few times when
// PostgreSQL aborted it for a deadlock or a serialization failure.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if err := s.live(); err != nil {
		return err
	}
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		err = pgx.BeginFunc(ctx, s.pool, fn)
		if !retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt+1) * 5 * time.Millisecond):
		}
	}
	return err
}

// uniqueViolation reports PostgreSQL's unique_violation.
func uniqueViolation(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// migrateLockWait bounds an upgrade's wait for the locks of jobclock's
// tables, all of them together (see migrateOnce); after a wait that timed
// out, the upgrade tries again after migratePause, doubled after each try
// up to migratePauseMax.
const (
	migrateLockWait = 500 * time.Millisecond
	migratePause    = 500 * time.Millisecond
	migratePauseMax = 8 * time.Second
)

// ownTables are the tables that the migrations create (OwnTables checks
// it), in the order in which an upgrade locks those that exist. Another
// application's tables in the schema are not jobclock's to lock.
var ownTables = []string{"schema_version", "collections", "jobs", "history", "job_counts", "job_count_deltas", "limit_permits", "limit_rates"}

// errLocksBusy says that an upgrade gave up waiting for the locks of
// jobclock's tables after migrateLockWait.
var errLocksBusy = errors.New("the locks of its tables are held by other transactions")

// migrate creates or upgrades the schema, trying again while other
// transactions hold the locks of its tables (see migrateOnce) until ctx
// ends. Each try that gives up is logged as a warning with how long the
// upgrade has waited, and an upgrade done after such tries as info.
func (s *Store) migrate(ctx context.Context) error {
	start := time.Now()
	pause := migratePause
	for tries := 1; ; tries++ {
		err := s.migrateOnce(ctx)
		waited := time.Since(start).Round(time.Millisecond)
		if !errors.Is(err, errLocksBusy) {
			if err == nil && tries > 1 {
				s.log.Info("upgraded the schema after waiting for the locks of its tables", "schema", s.schema, "waited", waited, "tries", tries)
			}
			return err
		}
		s.log.Warn("upgrade the schema: other transactions hold the locks of its tables; it lets them go on and tries again",
			"schema", s.schema, "waited", waited, "tries", tries, "next_try_in", pause)
		select {
		case <-ctx.Done():
			return fmt.Errorf("store/postgres: migrate schema %q: %w (%w)", s.schema, ctx.Err(), err)
		case <-time.After(pause):
		}
		pause = min(2*pause, migratePauseMax)
	}
}

// lockOwnTables takes the locks of jobclock's tables among tables (those
// of the schema) in ACCESS EXCLUSIVE mode, in one LOCK TABLE statement in
// the order of ownTables, waiting at most migrateLockWait for all of them
// together: a transaction-local statement_timeout around the statement,
// restored after it. lock_timeout would bound the wait for each table
// instead, holding those taken while it waits for the next; LOCK TABLE
// NOWAIT would never queue, and under a steady stream of claims (each
// holding the job table's lock for a few milliseconds) would seldom find
// every lock free. A wait that timed out returns errLocksBusy.
func (s *Store) lockOwnTables(ctx context.Context, tx pgx.Tx, tables []string) error {
	var names []string
	for _, t := range ownTables {
		if slices.Contains(tables, t) {
			names = append(names, pgx.Identifier{s.schema, t}.Sanitize())
		}
	}
	var was string
	if err := tx.QueryRow(ctx, "SELECT current_setting('statement_timeout')").Scan(&was); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "SELECT set_config('statement_timeout', $1, true)", fmt.Sprintf("%dms", migrateLockWait.Milliseconds())); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE "+strings.Join(names, ", ")+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "57014" && ctx.Err() == nil { // query_canceled: the statement_timeout
			return fmt.Errorf("store/postgres: upgrade schema %q: %w (waited %v)", s.schema, errLocksBusy, migrateLockWait)
		}
		return err
	}
	_, err := tx.Exec(ctx, "SELECT set_config('statement_timeout', $1, true)", was)
	return err
}

// migrateOnce creates or upgrades the schema in one transaction, under an
// advisory lock. An upgrade first takes the locks of jobclock's tables
// (lockOwnTables), which the migrations would take one at a time (most
// alter the job table), waiting at most migrateLockWait for all of them:
// while it waits, every statement of other processes on those tables
// queues behind it, so behind a long transaction it gives up
// (errLocksBusy) rather than hold up every claim until that transaction
// ends, and it gives up before doing any work, which a try again would
// repeat.
func (s *Store) migrateOnce(ctx context.Context) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "jobclock migrate "+s.schema); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{s.schema}.Sanitize()); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, "SELECT tablename FROM pg_tables WHERE schemaname = $1 ORDER BY tablename", s.schema)
		if err != nil {
			return err
		}
		tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		version := 0
		has := false
		for _, t := range tables {
			has = has || t == "schema_version"
		}
		if !has {
			if len(tables) > 0 {
				return fmt.Errorf("store/postgres: schema %q holds tables of another application (%s) and no jobclock schema; use another Options.Schema",
					s.schema, strings.Join(tables, ", "))
			}
			if _, err := tx.Exec(ctx, s.sql("CREATE TABLE {s}.schema_version (version integer NOT NULL)")); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, s.sql("INSERT INTO {s}.schema_version (version) VALUES (0)")); err != nil {
				return err
			}
		} else if err := tx.QueryRow(ctx, s.sql("SELECT version FROM {s}.schema_version")).Scan(&version); err != nil {
			return fmt.Errorf("store/postgres: read schema version: %w", err)
		}
		if version > len(migrations) {
			return &NewerSchemaError{Backend: "store/postgres", Found: version, Known: len(migrations)}
		}
		if version == len(migrations) {
			return nil
		}
		if has {
			if err := s.lockOwnTables(ctx, tx, tables); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, "SELECT set_config('search_path', $1, true)", pgx.Identifier{s.schema}.Sanitize()); err != nil {
			return err
		}
		for _, m := range migrations[version:] {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("store/postgres: migration %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, s.sql("UPDATE {s}.schema_version SET version = $1"), m.Version); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		return nil
	}
	var ns *NewerSchemaError
	if errors.As(err, &ns) || strings.HasPrefix(err.Error(), "store/postgres:") {
		return err
	}
	return fmt.Errorf("store/postgres: create or migrate schema %q: %w", s.schema, err)
}
