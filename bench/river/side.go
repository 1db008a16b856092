package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// system is one side of a comparison.
type system string

const (
	sysJobclock   system = "jobclock"
	sysRiver      system = "river"       // River at its defaults
	sysRiverTuned system = "river-tuned" // River tuned for throughput
)

var systems = []system{sysJobclock, sysRiver, sysRiverTuned}

// putMode is how a side puts its jobs.
type putMode string

const (
	putSetup    putMode = "setup"     // the quickest way each side has, before a firing scenario
	putOne      putMode = "one"       // one at a time from one goroutine
	putEight    putMode = "eight"     // one at a time from 8 goroutines
	putTx       putMode = "tx"        // one at a time inside one host transaction
	putBulk     putMode = "bulk"      // River InsertMany; jobclock's bulk put
	putBulkFast putMode = "bulk-fast" // River InsertManyFast (COPY on PostgreSQL)
)

// errNotAvailable marks a put mode a side does not have: jobclock has one
// bulk put (PutJobs, which copies on PostgreSQL), River two.
var errNotAvailable = errors.New("no such mode")

// side is one scheduler over its own fresh tables: a jobclock Scheduler or
// a River client. Each job i runs the same no-op function, which notes its
// start in the tally; the side notes in the tally when its outcome has been
// recorded in the database.
type side interface {
	// put puts one job per element of due, job i due at due[i]. With
	// putOne and putTx, probe (when not nil) is called before job i is
	// put and with len(due) after the last one (before the commit).
	put(ctx context.Context, how putMode, due []time.Time, probe func(i int)) error
	// start starts working the jobs.
	start(ctx context.Context) error
	// stop stops, waiting for work in flight.
	stop(ctx context.Context) error
	// verify checks in the database that exactly n jobs are stored, all
	// of them completed (done) or all waiting for their due time.
	verify(ctx context.Context, n int, done bool) error
	// where names the side's tables, for another process to attach.
	where() string
	// close releases the side's connections.
	close()
}

// env is the database both sides of a run use.
type env struct {
	store string        // "postgres" or "sqlite"
	dsn   string        // PostgreSQL
	dir   string        // SQLite: the directory of the files
	admin *pgxpool.Pool // PostgreSQL: creates and drops schemas
	meter meter
	log   *slog.Logger
	// firingWindow is jobclock's Config.FiringWindow (-firing-window).
	firingWindow time.Duration
	// setupPerJob is what each side's last setup took per job.
	setupPerJob map[system]time.Duration
}

func newEnv(ctx context.Context, store, dsn, dir string) (*env, error) {
	e := &env{store: store, dsn: dsn, dir: dir, setupPerJob: map[system]time.Duration{},
		log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))}
	switch store {
	case "postgres":
		if dsn == "" {
			return nil, fmt.Errorf("-store postgres needs -dsn (or JOBCLOCK_POSTGRES_DSN)")
		}
		pool, err := pgxpool.New(ctx, dsn)
		if err != nil {
			return nil, fmt.Errorf("-dsn: %w", err)
		}
		if err := pool.Ping(ctx); err != nil {
			pool.Close()
			return nil, fmt.Errorf("-dsn: %w", err)
		}
		e.admin = pool
		e.meter.server = newServerCPU(ctx, pool)
	case "sqlite":
		if dir == "" {
			return nil, fmt.Errorf("-store sqlite needs a directory for its files")
		}
	default:
		return nil, fmt.Errorf("-store: %q is neither postgres nor sqlite", store)
	}
	return e, nil
}

func (e *env) close() {
	if e.admin != nil {
		e.admin.Close()
	}
}

// settings describes the server's durability settings.
func (e *env) settings(ctx context.Context) string {
	if e.store == "sqlite" {
		return "SQLite, WAL, synchronous=FULL, temp_store MEMORY on both sides (in the process: its CPU is in the process figures), files in " + e.dir
	}
	var version, fsync, syncCommit, fpw string
	err := e.admin.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('fsync'),
		current_setting('synchronous_commit'), current_setting('full_page_writes')`).Scan(&version, &fsync, &syncCommit, &fpw)
	if err != nil {
		return "PostgreSQL (settings unreadable: " + err.Error() + ")"
	}
	cpu := "server CPU from /proc"
	if e.meter.server == nil {
		cpu = "server CPU not readable (not a local server)"
	}
	return fmt.Sprintf("PostgreSQL %s, fsync=%s synchronous_commit=%s full_page_writes=%s; %s", version, fsync, syncCommit, fpw, cpu)
}

// newName returns a fresh name for a side's schema or file.
func newName(sys system) string {
	b := make([]byte, 4)
	rand.Read(b)
	return fmt.Sprintf("bench_%s_%s", map[system]string{sysJobclock: "jc", sysRiver: "rv", sysRiverTuned: "rvt"}[sys], hex.EncodeToString(b))
}

// newSide opens sys over fresh tables, or, with where set, over the
// tables another process made.
func newSide(ctx context.Context, e *env, sys system, t *tally, where string) (side, error) {
	fresh := where == ""
	if fresh {
		where = newName(sys)
		if e.store == "postgres" {
			if _, err := e.admin.Exec(ctx, "CREATE SCHEMA "+where); err != nil {
				return nil, err
			}
		} else {
			where = filepath.Join(e.dir, where+".db")
		}
	}
	if sys == sysJobclock {
		return newJobclock(ctx, e, t, where)
	}
	return newRiver(ctx, e, sys, t, where, fresh)
}

// drop removes a side's tables.
func (e *env) drop(ctx context.Context, where string) {
	if e.store == "postgres" {
		if _, err := e.admin.Exec(ctx, "DROP SCHEMA "+where+" CASCADE"); err != nil {
			e.log.Error("drop schema", "schema", where, "err", err)
		}
		return
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(where + suffix)
	}
}

// writers is how many goroutines put at once in putEight and putSetup.
const writers = 8

// parallel calls put(i) for every i in [0,n) from 8 goroutines, goroutine
// w taking w, w+8, ..., and returns the first error of each.
func parallel(n int, put func(w, i int) error) error {
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := w; i < n; i += writers {
				if err := put(w, i); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// openSQLite opens a SQLite file as both sides do: WAL, synchronous=FULL,
// a busy timeout, temp_store MEMORY (as store/sqlite's InTx asks of a
// host's transactions: without it the puts of a long transaction write
// their statement journals to a file once one has gone past 64 KiB), and
// at most conns connections.
func openSQLite(path string, conns int) (*sql.DB, error) {
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=temp_store(2)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxIdleTime(0)
	return db, nil
}
