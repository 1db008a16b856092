package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
)

// River's settings. At its defaults River needs the number of workers of
// its queue; 100 is what its documentation shows and jobclock's
// DefaultMaxConcurrency. Tuned: what River's maintainers suggest for
// throughput.
const (
	riverWorkers       = 100
	riverTunedWorkers  = 2000
	riverTunedCooldown = 2 * time.Millisecond
	riverTunedPoll     = 20 * time.Millisecond
)

// riverNoop is a River job's arguments: the same payload as jobclock's.
type riverNoop noopArg

func (riverNoop) Kind() string { return "noop" }

// riverSide is a River client over riverpgxv5 or riversqlite, with its own
// tables (a schema of its own, or a file of its own).
type riverSide[TTx any] struct {
	env    *env
	loc    string
	tally  *tally
	client *river.Client[TTx]
	sub    sync.WaitGroup
	cancel func()

	begin    func(context.Context) (TTx, error)
	commit   func(context.Context, TTx) error
	rollback func(context.Context, TTx)
	states   func(context.Context) (map[string]int, error)
	closeDB  func()
}

func newRiver(ctx context.Context, e *env, sys system, t *tally, where string, fresh bool) (side, error) {
	if e.store == "postgres" {
		pool, err := pgxpool.New(ctx, e.dsn)
		if err != nil {
			return nil, err
		}
		r := &riverSide[pgx.Tx]{env: e, loc: where, tally: t, closeDB: pool.Close,
			begin:    func(ctx context.Context) (pgx.Tx, error) { return pool.Begin(ctx) },
			commit:   func(ctx context.Context, tx pgx.Tx) error { return tx.Commit(ctx) },
			rollback: func(ctx context.Context, tx pgx.Tx) { tx.Rollback(ctx) },
			states: func(ctx context.Context) (map[string]int, error) {
				rows, err := pool.Query(ctx, "SELECT state::text, count(*) FROM "+where+".river_job GROUP BY state")
				if err != nil {
					return nil, err
				}
				m := map[string]int{}
				var s string
				var n int
				_, err = pgx.ForEachRow(rows, []any{&s, &n}, func() error { m[s] = n; return nil })
				return m, err
			},
		}
		return r, r.init(ctx, riverpgxv5.New(pool), sys, where, fresh)
	}
	// River's SQLite driver asks for a pool of one connection.
	db, err := openSQLite(where, 1)
	if err != nil {
		return nil, err
	}
	r := &riverSide[*sql.Tx]{env: e, loc: where, tally: t, closeDB: func() { db.Close() },
		begin:    func(ctx context.Context) (*sql.Tx, error) { return db.BeginTx(ctx, nil) },
		commit:   func(_ context.Context, tx *sql.Tx) error { return tx.Commit() },
		rollback: func(_ context.Context, tx *sql.Tx) { tx.Rollback() },
		states: func(ctx context.Context) (map[string]int, error) {
			rows, err := db.QueryContext(ctx, "SELECT state, count(*) FROM river_job GROUP BY state")
			if err != nil {
				return nil, err
			}
			defer rows.Close()
			m := map[string]int{}
			for rows.Next() {
				var s string
				var n int
				if err := rows.Scan(&s, &n); err != nil {
					return nil, err
				}
				m[s] = n
			}
			return m, rows.Err()
		},
	}
	return r, r.init(ctx, riversqlite.New(db), sys, "", fresh)
}

func (r *riverSide[TTx]) init(ctx context.Context, driver riverdriver.Driver[TTx], sys system, schema string, fresh bool) error {
	if fresh {
		m, err := rivermigrate.New(driver, &rivermigrate.Config{Schema: schema, Logger: r.env.log})
		if err != nil {
			r.close()
			return err
		}
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			r.close()
			return fmt.Errorf("river: migrate: %w", err)
		}
	}
	workers := river.NewWorkers()
	t := r.tally
	river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, job *river.Job[riverNoop]) error {
		noop(t, job.Args.I)
		return nil
	}))
	cfg := &river.Config{
		Logger:  r.env.log,
		Schema:  schema,
		Workers: workers,
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: riverWorkers}},
	}
	if sys == sysRiverTuned {
		cfg.Queues[river.QueueDefault] = river.QueueConfig{MaxWorkers: riverTunedWorkers}
		cfg.FetchCooldown = riverTunedCooldown
		cfg.FetchPollInterval = riverTunedPoll
	}
	var err error
	if r.client, err = river.NewClient(driver, cfg); err != nil {
		r.close()
		return err
	}
	return nil
}

func (r *riverSide[TTx]) params(due []time.Time) []river.InsertManyParams {
	p := make([]river.InsertManyParams, len(due))
	for i, d := range due {
		p[i] = river.InsertManyParams{Args: riverNoop{I: i}, InsertOpts: &river.InsertOpts{ScheduledAt: d}}
	}
	return p
}

func (r *riverSide[TTx]) put(ctx context.Context, how putMode, due []time.Time, probe func(int)) error {
	if probe == nil {
		probe = func(int) {}
	}
	switch how {
	case putOne:
		for i, d := range due {
			probe(i)
			if _, err := r.client.Insert(ctx, riverNoop{I: i}, &river.InsertOpts{ScheduledAt: d}); err != nil {
				return fmt.Errorf("river: insert job %d: %w", i, err)
			}
		}
		probe(len(due))
		return nil
	case putEight:
		return parallel(len(due), func(_, i int) error {
			if _, err := r.client.Insert(ctx, riverNoop{I: i}, &river.InsertOpts{ScheduledAt: due[i]}); err != nil {
				return fmt.Errorf("river: insert job %d: %w", i, err)
			}
			return nil
		})
	case putTx:
		tx, err := r.begin(ctx)
		if err != nil {
			return err
		}
		defer r.rollback(ctx, tx)
		for i, d := range due {
			probe(i)
			if _, err := r.client.InsertTx(ctx, tx, riverNoop{I: i}, &river.InsertOpts{ScheduledAt: d}); err != nil {
				return fmt.Errorf("river: insert job %d in a transaction: %w", i, err)
			}
		}
		probe(len(due))
		return r.commit(ctx, tx)
	case putSetup, putBulk:
		res, err := r.client.InsertMany(ctx, r.params(due))
		if err == nil && len(res) != len(due) {
			err = fmt.Errorf("%d jobs inserted, want %d", len(res), len(due))
		}
		if err != nil {
			return fmt.Errorf("river: InsertMany: %w", err)
		}
		return nil
	case putBulkFast:
		n, err := r.client.InsertManyFast(ctx, r.params(due))
		if err == nil && n != len(due) {
			err = fmt.Errorf("%d jobs inserted, want %d", n, len(due))
		}
		if err != nil {
			return fmt.Errorf("river: InsertManyFast: %w", err)
		}
		return nil
	}
	return fmt.Errorf("river: unknown put mode %q", how)
}

// start subscribes to the outcomes River has recorded (it sends them once
// the completer's batch is written) and starts the client.
func (r *riverSide[TTx]) start(ctx context.Context) error {
	ch, cancel := r.client.SubscribeConfig(&river.SubscribeConfig{
		Kinds:    []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled, river.EventKindJobSnoozed},
		ChanSize: r.tally.n + 1000, // never drops an event
	})
	r.cancel = cancel
	r.sub.Go(func() {
		for ev := range ch {
			now := time.Now()
			i, ok := argIndex(ev.Job.EncodedArgs)
			switch {
			case !ok:
				r.tally.fail(fmt.Errorf("river: job %d has arguments %s", ev.Job.ID, ev.Job.EncodedArgs))
			case ev.Kind != river.EventKindJobCompleted:
				r.tally.fail(fmt.Errorf("river: job %d: %s", i, ev.Kind))
			default:
				r.tally.record(i, now)
			}
		}
	})
	if err := r.client.Start(ctx); err != nil {
		cancel()
		return err
	}
	return nil
}

// argIndex reads i out of the arguments {"i": N} without a JSON decoder.
func argIndex(b []byte) (int, bool) {
	s := strings.TrimSpace(string(b))
	s, ok := strings.CutPrefix(s, `{"i":`)
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(strings.TrimSpace(s), "}")
	if !ok {
		return 0, false
	}
	n := 0
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func (r *riverSide[TTx]) stop(ctx context.Context) error {
	err := r.client.Stop(ctx)
	if r.cancel != nil {
		r.cancel()
		r.sub.Wait()
	}
	return err
}

func (r *riverSide[TTx]) verify(ctx context.Context, n int, done bool) error {
	want := "scheduled"
	if done {
		want = "completed"
	}
	m, err := r.states(ctx)
	if err != nil {
		return err
	}
	for state, c := range m {
		if state != want {
			return fmt.Errorf("river: %d jobs are %s, want %s", c, state, want)
		}
	}
	if m[want] != n {
		return fmt.Errorf("river: %d jobs %s, want %d", m[want], want, n)
	}
	return nil
}

func (r *riverSide[TTx]) where() string { return r.loc }

func (r *riverSide[TTx]) close() {
	if r.closeDB != nil {
		r.closeDB()
	}
}
