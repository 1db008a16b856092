// Command million measures a jobclock Scheduler on PostgreSQL holding many
// jobs, most of them far in the future and some due at one instant, so
// that the same figures with -jobs 10000 and with -jobs 1000000 show what
// the number of jobs costs. It is not part of CI:
//
//	eval "$(bash scripts/start-postgres.sh /tmp/pg-million)"
//	cd bench && go run ./million -postgres "$JOBCLOCK_POSTGRES_DSN" -jobs 10000
//	cd bench && go run ./million -postgres "$JOBCLOCK_POSTGRES_DSN" -jobs 1000000
//
// It puts -jobs one-time jobs with Scheduler.PutJobs (batches of -batch
// jobs of one collection; -batch 0: PutJob, one call per job) from
// -putters goroutines, spread over -collections collections, -due of them
// due at one instant a few seconds after the puts end and the others a
// year later. Then it starts
// the Scheduler (a no-op executor, MaxConcurrency 256) in this process
// and reports:
//
//	put            jobs put per second (wall clock), and the database's size after
//	claim          ClaimDue calls of the run loop while the due jobs run: p50 / p99 / max
//	run            from the due instant until the last outcome is recorded, and
//	               occurrences per second over that span
//	rss            the process's resident memory (VmRSS) once the due jobs ran,
//	               and the live heap: the puts' garbage is returned to the
//	               system before the Scheduler starts
//	list           ListJobs' first page (100 jobs) of the first collection: median of 5
//	count          JobCounts (the dashboard's counts by collection and state): the
//	               first call after the run, then the median of 5; and the pages
//	               of job_count_deltas after them, which the counts scan, and
//	               the autovacuum workers busy on the schema
//
// Each run uses a schema of its own (million_<jobs>_<random>), which it
// drops at the end unless -keep is set.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/postgres"
)

type config struct {
	dsn         string
	jobs, due   int
	collections int
	putters     int
	batch       int
	keep        bool
}

func main() {
	var c config
	flag.StringVar(&c.dsn, "postgres", os.Getenv("JOBCLOCK_POSTGRES_DSN"), "PostgreSQL `DSN` (default: $JOBCLOCK_POSTGRES_DSN)")
	flag.IntVar(&c.jobs, "jobs", 10_000, "jobs in the store")
	flag.IntVar(&c.due, "due", 10_000, "jobs among them due at one instant (at most -jobs)")
	flag.IntVar(&c.collections, "collections", 10, "collections the jobs are spread over")
	flag.IntVar(&c.putters, "putters", 8, "goroutines that put the jobs")
	flag.IntVar(&c.batch, "batch", 1000, "jobs per PutJobs call (0: PutJob, one call per job)")
	flag.BoolVar(&c.keep, "keep", false, "keep the schema at the end")
	flag.Parse()
	if c.dsn == "" {
		log.Fatal("million: no -postgres DSN and no JOBCLOCK_POSTGRES_DSN")
	}
	if c.due > c.jobs || c.due < 1 || c.collections < 1 || c.putters < 1 || c.batch < 0 {
		log.Fatal("million: -due must be 1 to -jobs; -collections and -putters at least 1; -batch at least 0")
	}
	if err := run(context.Background(), c); err != nil {
		log.Fatal("million: ", err)
	}
}

const noop action.Type = "Noop"

func run(ctx context.Context, c config) error {
	pool, err := pgxpool.New(ctx, c.dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	schema := fmt.Sprintf("million_%d_%08x", c.jobs, rand.Uint32())
	st, err := postgres.New(ctx, pool, &postgres.Options{Schema: schema})
	if err != nil {
		return err
	}
	if !c.keep {
		defer pool.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
	}

	var done atomic.Int64
	finished := make(chan struct{})
	var last atomic.Int64 // the instant the last outcome was recorded, Unix ns
	calls := &claims{}
	reg := &action.Registry{}
	reg.Register(noop, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		return nil, nil
	}))
	s, err := scheduler.New(st, &scheduler.Config{
		Executors: reg, MaxConcurrency: 256, Logger: slog.New(slog.DiscardHandler), Observer: calls,
		OnHistory: func(scheduler.HistoryEntry) {
			last.Store(time.Now().UnixNano())
			if done.Add(1) == int64(c.due) {
				close(finished)
			}
		},
	})
	if err != nil {
		return err
	}
	perColl := (c.jobs + c.collections - 1) / c.collections
	quota := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: perColl}}}
	for k := range c.collections {
		if _, err := s.PutCollection(ctx, collName(k), quota, nil); err != nil {
			return err
		}
	}

	// The far jobs first, then the due ones, due a few seconds after they
	// are expected to be put at the rate the far ones were.
	far := time.Now().AddDate(1, 0, 0)
	t0 := time.Now()
	if err := putJobs(ctx, s, c, c.due, c.jobs, func(int) time.Time { return far }); err != nil {
		return err
	}
	farTime := time.Since(t0)
	rate := float64(c.jobs-c.due) / farTime.Seconds()
	if c.jobs == c.due {
		rate = 500 // a guess: nothing measured yet
	}
	dueAt := time.Now().Add(3*time.Second + time.Duration(1.5*float64(c.due)/rate*float64(time.Second))).Truncate(time.Second)
	t1 := time.Now()
	if err := putJobs(ctx, s, c, 0, c.due, func(int) time.Time { return dueAt }); err != nil {
		return err
	}
	putTime := time.Since(t0)
	if time.Now().After(dueAt) {
		return fmt.Errorf("putting the %d due jobs took %v, past their due time", c.due, time.Since(t1))
	}
	var dbSize int64
	if err := pool.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&dbSize); err != nil {
		return err
	}
	var schemaSize int64
	if err := pool.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')`, schema).Scan(&schemaSize); err != nil {
		return err
	}
	how := fmt.Sprintf("PutJobs, %d jobs per call", c.batch)
	if c.batch == 0 {
		how = "PutJob, one per job"
	}
	fmt.Printf("jobs %d (%d due), %d collections, %d putters\n", c.jobs, c.due, c.collections, c.putters)
	fmt.Printf("put      %.0f jobs/s (%d jobs in %.1f s; %s); schema %.1f MiB, database %.1f MiB\n",
		float64(c.jobs)/putTime.Seconds(), c.jobs, putTime.Seconds(), how, float64(schemaSize)/(1<<20), float64(dbSize)/(1<<20))

	// The puts are a client's work, not the Scheduler's: what their
	// garbage left mapped (about as much at 10k jobs as at 1M, but more
	// or less of it returned to the system by the time of the reading)
	// goes back before the Scheduler starts, so that rss is what serving
	// the jobs keeps.
	debug.FreeOSMemory()
	if err := s.Start(ctx); err != nil {
		return err
	}
	calls.start()
	select {
	case <-finished:
	case <-time.After(time.Until(dueAt) + 5*time.Minute):
		return fmt.Errorf("only %d of %d due jobs ran within 5 minutes", done.Load(), c.due)
	}
	span := time.Unix(0, last.Load()).Sub(dueAt)
	p50, p99, pmax := calls.stop()
	fmt.Printf("claim    p50 %s, p99 %s, max %s (%d ClaimDue calls while the due jobs ran)\n", ms(p50), ms(p99), ms(pmax), calls.n())
	fmt.Printf("run      %d occurrences in %.3f s from the due instant to the last outcome: %.0f/s\n", c.due, span.Seconds(), float64(c.due)/span.Seconds())
	fmt.Printf("rss      %s (live heap %.1f MiB at the last collection)\n", rss(), liveHeap())

	t2 := time.Now()
	if _, err := s.JobCounts(ctx); err != nil {
		return err
	}
	firstCount := time.Since(t2)
	list := median(5, func() error {
		_, err := s.ListJobs(ctx, collName(0), nil)
		return err
	})
	count := median(5, func() error {
		_, err := s.JobCounts(ctx)
		return err
	})
	fmt.Printf("list     %s (first page of %s)\n", ms(list), collName(0))
	// What a count scans besides the counts: the changes not folded and
	// the folded ones not vacuumed away yet (see store/postgres's
	// vacuumAfter), and whether autovacuum works on the schema meanwhile.
	var deltaPages, autovacuums int64
	if err := pool.QueryRow(ctx, "SELECT pg_relation_size($1::regclass) / 8192", schema+".job_count_deltas").Scan(&deltaPages); err != nil {
		return err
	}
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' AND query LIKE '%'||$1||'%'", schema).Scan(&autovacuums); err != nil {
		return err
	}
	fmt.Printf("count    %s (JobCounts; the first call after the run %s; job_count_deltas %d pages, %d autovacuum workers on the schema)\n",
		ms(count), ms(firstCount), deltaPages, autovacuums)
	stopCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return s.Stop(stopCtx)
}

func collName(k int) string { return fmt.Sprintf("c%03d", k) }

// putJobs puts jobs from to to (exclusive), job i in collection i mod
// c.collections, due at at(i), from c.putters goroutines: with
// Scheduler.PutJobs in batches of c.batch jobs of one collection, or with
// PutJob one job at a time when c.batch is 0.
func putJobs(ctx context.Context, s *scheduler.Scheduler, c config, from, to int, at func(int) time.Time) error {
	next := make(chan []int)
	var mu sync.Mutex
	var first error
	fail := func(err error) {
		mu.Lock()
		first = errors.Join(first, err)
		mu.Unlock()
	}
	put := func(i int) scheduler.JobPut {
		start := at(i)
		return scheduler.JobPut{Name: fmt.Sprintf("j%08d", i), Job: &scheduler.Job{StartTime: &start, Action: action.Action{Type: noop, Custom: json.RawMessage(`{}`)}}}
	}
	var wg sync.WaitGroup
	for range c.putters {
		wg.Go(func() {
			for batch := range next {
				coll := collName(batch[0] % c.collections)
				if c.batch == 0 {
					p := put(batch[0])
					if _, err := s.PutJob(ctx, coll, p.Name, p.Job, nil); err != nil {
						fail(err)
					}
					continue
				}
				jobs := make([]scheduler.JobPut, len(batch))
				for k, i := range batch {
					jobs[k] = put(i)
				}
				if _, err := s.PutJobs(ctx, coll, jobs, nil); err != nil {
					fail(err)
				}
			}
		})
	}
	size := max(c.batch, 1)
	sent := 0
	for k := range c.collections {
		var batch []int
		for i := from + (k-from%c.collections+c.collections)%c.collections; i < to; i += c.collections {
			if batch = append(batch, i); len(batch) == size {
				next <- batch
				batch = nil
			}
			if sent++; sent%100_000 == 0 {
				fmt.Fprintf(os.Stderr, "million: %d jobs put\n", sent)
			}
		}
		if len(batch) > 0 {
			next <- batch
		}
	}
	close(next)
	wg.Wait()
	return first
}

// median runs f n times and returns the median of its durations.
func median(n int, f func() error) time.Duration {
	d := make([]time.Duration, n)
	for i := range d {
		t := time.Now()
		if err := f(); err != nil {
			log.Fatal("million: ", err)
		}
		d[i] = time.Since(t)
	}
	slices.Sort(d)
	return d[n/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// rss returns the VmRSS line of /proc/self/status.
func rss() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown: " + err.Error()
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// liveHeap returns the heap that the last garbage collection found live,
// in MiB.
func liveHeap() float64 {
	m := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(m)
	return float64(m[0].Value.Uint64()) / (1 << 20)
}

// claims is a scheduler.Observer that keeps the durations of the run
// loop's ClaimDue calls between start and stop, and observes nothing else.
type claims struct {
	mu     sync.Mutex
	on     bool
	d      []time.Duration
	called int
}

func (c *claims) start() { c.mu.Lock(); c.on = true; c.mu.Unlock() }

func (c *claims) n() int { c.mu.Lock(); defer c.mu.Unlock(); return c.called }

// stop ends the measurement and returns the p50, p99 and max.
func (c *claims) stop() (p50, p99, pmax time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.on = false
	if len(c.d) == 0 {
		return 0, 0, 0
	}
	slices.Sort(c.d)
	q := func(p float64) time.Duration { return c.d[int(p*float64(len(c.d)-1))] }
	return q(0.5), q(0.99), c.d[len(c.d)-1]
}

func (c *claims) StoreCalled(sc scheduler.StoreCall) {
	if sc.Op != "ClaimDue" {
		return
	}
	c.mu.Lock()
	if c.on {
		c.d = append(c.d, sc.Duration)
		c.called++
	}
	c.mu.Unlock()
}

func (c *claims) Attach(*scheduler.Scheduler) func() { return func() {} }
func (c *claims) StartAttempt(ctx context.Context, _ scheduler.Attempt) context.Context {
	return ctx
}
func (c *claims) EndAttempt(context.Context, scheduler.AttemptEnd)             {}
func (c *claims) HistoryStored(scheduler.StoredHistory)                        {}
func (c *claims) Missed(scheduler.Misfire)                                     {}
func (c *claims) TookOver(scheduler.Takeover)                                  {}
func (c *claims) Pruned(int)                                                   {}
func (c *claims) TraceParent(context.Context) (traceparent, tracestate string) { return "", "" }
