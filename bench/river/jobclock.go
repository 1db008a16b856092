package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/postgres"
	"github.com/jobclock/scheduler/store/sqlite"
)

// noopArg is the payload of a job on both sides: the job's index.
type noopArg struct {
	I int `json:"i"`
}

// noop is the function every job runs, on both sides.
func noop(t *tally, i int) { t.run(i, time.Now()) }

// collections is how many collections the setup of a firing scenario
// spreads jobclock's jobs over (its 8 writers each have their own); the
// put scenarios use one.
const collections = 8

// jobclockSide is a jobclock Scheduler at its defaults (Config.MaxConcurrency
// DefaultMaxConcurrency; Config.FiringWindow the -firing-window flag's)
// over store/postgres or store/sqlite.
type jobclockSide struct {
	env  *env
	loc  string
	s    *scheduler.Scheduler
	noop *action.Handler[noopArg]
	st   interface {
		scheduler.StatsReader
		Close() error
	}
	pool  *pgxpool.Pool // PostgreSQL
	db    *sql.DB       // SQLite
	tally *tally
}

func newJobclock(ctx context.Context, e *env, t *tally, where string) (*jobclockSide, error) {
	j := &jobclockSide{env: e, loc: where, tally: t}
	var st scheduler.Store
	var err error
	if e.store == "postgres" {
		if j.pool, err = pgxpool.New(ctx, e.dsn); err != nil {
			return nil, err
		}
		st, err = postgres.New(ctx, j.pool, &postgres.Options{Schema: where})
	} else {
		// As sqlite.Open opens it (one writer and 4 readers), over a
		// *sql.DB of our own for PutJobTx.
		if j.db, err = openSQLite(where, 5); err != nil {
			return nil, err
		}
		st, err = sqlite.New(ctx, j.db, nil)
	}
	if err != nil {
		j.close()
		return nil, err
	}
	j.st = st.(interface {
		scheduler.StatsReader
		Close() error
	})
	reg := new(action.Registry)
	j.noop = action.Handle(reg, "Noop", func(ctx context.Context, req *action.Request, a noopArg) error {
		noop(t, a.I)
		return nil
	})
	log := slog.New(failOnError{e.log.Handler(), t})
	j.s, err = scheduler.New(st, &scheduler.Config{Executors: reg, Logger: log, OnHistory: j.onHistory,
		FiringWindow: e.firingWindow})
	if err != nil {
		j.close()
		return nil, err
	}
	return j, nil
}

// failOnError is the engine's log: a record at level Error (a claim or a
// record the store refused, a job it could not time) fails the run at
// once, instead of the run waiting out its timeout for outcomes that
// never come. The engine recovers from some of these (an outage of the
// store, a retention pass that failed), but a run that had one measured
// the failure, not the work: it fails too.
type failOnError struct {
	slog.Handler
	t *tally
}

func (h failOnError) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		var b strings.Builder
		b.WriteString(r.Message)
		r.Attrs(func(a slog.Attr) bool {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
			return true
		})
		h.t.fail(fmt.Errorf("jobclock logged: %s", b.String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h failOnError) WithAttrs(as []slog.Attr) slog.Handler {
	return failOnError{h.Handler.WithAttrs(as), h.t}
}

func (h failOnError) WithGroup(name string) slog.Handler {
	return failOnError{h.Handler.WithGroup(name), h.t}
}

// onHistory notes each outcome recorded: the history entry is stored in
// the transaction that records the job's outcome.
func (j *jobclockSide) onHistory(h scheduler.HistoryEntry) {
	now := time.Now()
	i, err := strconv.Atoi(strings.TrimPrefix(h.Job, "j"))
	if err != nil {
		j.tally.fail(fmt.Errorf("history of an unknown job %q", h.Job))
		return
	}
	if h.Status != scheduler.StatusCompleted {
		j.tally.fail(fmt.Errorf("job %d: %s: %s", i, h.Status, h.Message))
		return
	}
	j.tally.record(i, now)
}

func jobName(i int) string { return "j" + strconv.Itoa(i) }

func (j *jobclockSide) job(i int, due time.Time) *scheduler.Job {
	return &scheduler.Job{StartTime: &due, Action: j.noop.Action(noopArg{I: i})}
}

func (j *jobclockSide) put(ctx context.Context, how putMode, due []time.Time, probe func(int)) error {
	quota := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
		Quota: &scheduler.Quota{MaxJobCount: max(len(due), 1)}}}
	colls := 1
	if how == putSetup {
		colls = collections
	}
	for c := range colls {
		if _, err := j.s.PutCollection(ctx, "c"+strconv.Itoa(c), quota, nil); err != nil {
			return err
		}
	}
	return putJobclock(ctx, j, how, due, probe)
}

func (j *jobclockSide) start(ctx context.Context) error { return j.s.Start(ctx) }

func (j *jobclockSide) stop(ctx context.Context) error {
	err := j.s.Stop(ctx)
	if errors.Is(err, scheduler.ErrStopped) {
		return nil
	}
	return err
}

func (j *jobclockSide) verify(ctx context.Context, n int, done bool) error {
	want := scheduler.JobEnabled
	if done {
		want = scheduler.JobCompleted
	}
	// Read from the store: a stopped Scheduler answers nothing.
	counts, err := j.st.CountJobs(ctx)
	if err != nil {
		return err
	}
	total := 0
	for _, c := range counts {
		if c.State != want {
			return fmt.Errorf("jobclock: %d jobs of collection %s are %s, want %s", c.Jobs, c.Collection, c.State, want)
		}
		total += c.Jobs
	}
	if total != n {
		return fmt.Errorf("jobclock: %d jobs %s, want %d", total, want, n)
	}
	return nil
}

func (j *jobclockSide) where() string { return j.loc }

func (j *jobclockSide) close() {
	if j.st != nil {
		j.st.Close()
	}
	if j.pool != nil {
		j.pool.Close()
	}
	if j.db != nil {
		j.db.Close()
	}
}
