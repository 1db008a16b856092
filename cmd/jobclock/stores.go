package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/azure"
	"github.com/jobclock/scheduler/action/servicebus"
	"github.com/jobclock/scheduler/action/storagequeue"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/store/postgres"
	"github.com/jobclock/scheduler/store/sqlite"
)

// storeSpec says which store openStore opens.
type storeSpec struct {
	dbPath      string // SQLite file
	dsn         string // PostgreSQL, first
	schema      string // PostgreSQL schema
	engineConns int    // PostgreSQL connections reserved for the scheduler; 0: the default
	log         *slog.Logger
}

// openStore opens the PostgreSQL store when spec.dsn is set, else the
// SQLite file at spec.dbPath, else, when both are empty, a memory store;
// the SQLite and PostgreSQL stores log to spec.log. The returned func
// closes the store.
func openStore(ctx context.Context, spec storeSpec) (scheduler.Store, func(), error) {
	db, err := openDatabase(ctx, spec)
	if err != nil {
		return nil, nil, err
	}
	return db.store, db.close, nil
}

// database is a store that openDatabase opened over a database of its
// own (a pool for PostgreSQL, a *sql.DB for SQLite), so that the command
// can write in a transaction of that database too (see
// scheduler.Transactional).
type database struct {
	store scheduler.Store
	// close closes the store, then the database.
	close func()
	// begin begins a transaction on the database: what the store's
	// InTx takes, and the func that ends it, committing or rolling back.
	// Nil for the memory store, which has no transactions.
	begin func(ctx context.Context) (tx any, end func(commit bool) error, err error)
}

// openDatabase is openStore, with the store's database.
func openDatabase(ctx context.Context, spec storeSpec) (*database, error) {
	switch {
	case spec.dsn != "":
		pool, err := pgxpool.New(ctx, spec.dsn)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		st, err := postgres.New(ctx, pool, &postgres.Options{Schema: spec.schema, EngineConns: spec.engineConns, Logger: spec.log})
		if err != nil {
			pool.Close()
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		return &database{store: st, close: func() { st.Close(); pool.Close() },
			begin: func(ctx context.Context) (any, func(bool) error, error) {
				tx, err := pool.Begin(ctx)
				if err != nil {
					return nil, nil, err
				}
				return tx, func(commit bool) error {
					if commit {
						return tx.Commit(ctx)
					}
					return tx.Rollback(context.WithoutCancel(ctx))
				}, nil
			}}, nil
	case spec.dbPath != "":
		db, err := openSQLite(spec.dbPath)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", spec.dbPath, err)
		}
		st, err := sqlite.New(ctx, db, &sqlite.Options{Logger: spec.log})
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("open %s: %w", spec.dbPath, err)
		}
		return &database{store: st, close: func() { st.Close(); db.Close() },
			begin: func(ctx context.Context) (any, func(bool) error, error) {
				// Its first statement, the store's InTx, takes the write
				// lock.
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					return nil, nil, err
				}
				return tx, func(commit bool) error {
					if commit {
						return tx.Commit()
					}
					return tx.Rollback()
				}, nil
			}}, nil
	default:
		return &database{store: memory.New(), close: func() {}}, nil
	}
}

// openSQLite opens the SQLite file at path, created when missing, as
// sqlite.Open does (the same busy_timeout, foreign keys, synchronous
// writes and connections), with temp_store MEMORY on every connection
// for the command's own transactions (see store/sqlite's Store.InTx).
func openSQLite(path string) (*sql.DB, error) {
	if strings.ContainsRune(path, '?') || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("path %q: use a plain file path without '?' or 'file:'", path)
	}
	db, err := sql.Open("sqlite", path+fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_pragma=temp_store(2)",
		sqlite.DefaultBusyTimeout.Milliseconds()))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(sqliteConns)
	db.SetMaxIdleConns(sqliteConns)
	db.SetConnMaxIdleTime(0)
	return db, nil
}

// sqliteConns is the size of the pool of an SQLite database: the store's
// writer and its four readers (sqlite.Options.MaxReaders).
const sqliteConns = 5

// executors returns the executors run and serve add to the Scheduler's own
// (Http and Https), so that the command runs every Azure Scheduler action
// type: StorageQueue, ServiceBusQueue and ServiceBusTopic. timeout bounds
// each send. Close the registry after the Scheduler stopped.
func executors(timeout time.Duration) *action.Registry {
	reg := new(action.Registry)
	azure.Register(reg, &azure.Options{
		StorageQueue: &storagequeue.Options{Timeout: timeout},
		ServiceBus:   &servicebus.Options{Timeout: timeout},
	})
	return reg
}

// addMinRetryFlag defines -min-retry-interval: the scheduler's
// Config.MinRetryInterval for run, and the minimum against which validate
// and next read the jobs of a file, as run does.
func addMinRetryFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("min-retry-interval", scheduler.DefaultMinRetryInterval,
		"smallest retryInterval a job may ask for (validate and next read jobs as run does with it); lower it for demonstrations (e.g. 1s)")
}

// addLeaseFlag defines -lease, the scheduler's Config.LeaseDuration.
func addLeaseFlag(fs *flag.FlagSet) *time.Duration {
	return fs.Duration("lease", scheduler.DefaultLeaseDuration,
		"how long a claimed job stays leased without a heartbeat (at least 1s): when a process sharing the\n"+
			"store dies, another takes its jobs over within this long; raise it when the store may stall for seconds")
}

// optionalDuration is a duration flag that knows whether it was given.
type optionalDuration struct {
	d   time.Duration
	set bool
}

func (c *optionalDuration) String() string {
	if c == nil || !c.set {
		return ""
	}
	return c.d.String()
}

func (c *optionalDuration) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return err
	}
	c.d, c.set = d, true
	return nil
}

// claimAheadFlag is -claim-ahead, the scheduler's Config.ClaimAhead:
// unset leaves the scheduler's default, 0 turns claiming ahead off.
type claimAheadFlag struct{ optionalDuration }

// addClaimAheadFlag defines -claim-ahead.
func addClaimAheadFlag(fs *flag.FlagSet) *claimAheadFlag {
	c := &claimAheadFlag{}
	fs.Var(c, "claim-ahead", "how far ahead of its due instant a job may be claimed, to start from memory on time (at most a\n"+
		"tenth of -lease; 0 claims each job once it is due); default: the scheduler's (see README)")
	return c
}

// config returns the Config.ClaimAhead of the flag, or an error naming
// it when its value does not fit lease.
func (c *claimAheadFlag) config(lease time.Duration) (time.Duration, error) {
	switch {
	case !c.set:
		return 0, nil
	case c.d < 0:
		return 0, fmt.Errorf("-claim-ahead %s is negative", c.d)
	case c.d == 0:
		return scheduler.NoClaimAhead, nil
	case c.d > lease/10:
		return 0, fmt.Errorf("-claim-ahead %s is longer than a tenth of -lease (%s)", c.d, lease)
	}
	return c.d, nil
}

// firingWindowFlag is -firing-window, the scheduler's Config.FiringWindow:
// unset leaves the scheduler's default, 0 starts each job claimed ahead
// at its own instant.
type firingWindowFlag struct{ optionalDuration }

// addFiringWindowFlag defines -firing-window.
func addFiringWindowFlag(fs *flag.FlagSet) *firingWindowFlag {
	f := &firingWindowFlag{}
	fs.Var(f, "firing-window", "how much later than its due instant a job claimed ahead may start, so that the jobs due that close\n"+
		"together start from one wake-up (at most -claim-ahead; 0 starts each at its own instant);\n"+
		"default: the scheduler's, 2ms (see README)")
	return f
}

// config returns the Config.FiringWindow of the flag, or an error naming
// it when its value does not fit claimAhead, the Config.ClaimAhead of
// -claim-ahead.
func (f *firingWindowFlag) config(claimAhead time.Duration) (time.Duration, error) {
	if claimAhead == 0 {
		claimAhead = scheduler.DefaultClaimAhead
	}
	switch {
	case !f.set:
		return 0, nil
	case f.d < 0:
		return 0, fmt.Errorf("-firing-window %s is negative", f.d)
	case claimAhead < 0:
		return 0, fmt.Errorf("-firing-window %s applies to jobs claimed ahead, and -claim-ahead 0 claims none ahead", f.d)
	case f.d == 0:
		return scheduler.NoFiringWindow, nil
	case f.d > claimAhead:
		return 0, fmt.Errorf("-firing-window %s is longer than -claim-ahead (%s)", f.d, claimAhead)
	}
	return f.d, nil
}

// checkLease checks the value of -lease.
func checkLease(d time.Duration) error {
	if d < time.Second {
		return fmt.Errorf("-lease %s is shorter than 1s", d)
	}
	return nil
}
