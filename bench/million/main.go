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
// year later. With -vacuum (the default) it vacuums and analyzes the jobs
// table after the far jobs are put, as autovacuum would soon after a bulk
// put, so that the run does not share the machine with that vacuum (10M
// jobs: a 10 GiB table). Before the due instant it claims the first 256
// due jobs 50 times (fewer when the due instant is a second away), each
// claim given back at once: the same claim of a full batch at any -jobs.
// Then it starts the Scheduler (a no-op executor, MaxConcurrency 256) in
// this process and reports:
//
//	put            jobs put per second (wall clock, without the vacuum), and the database's size after
//	vacuum         how long the vacuum took
//	claim256       the claims of 256 due jobs before the run: p50 / p99 / max, and
//	               the claim's time per job claimed
//	claim          the run loop's claims (ClaimDueBy) from its start to the last
//	               outcome: p50 / p99 / max, how many found nothing, jobs per claim
//	claim192       those of them that took 192 jobs or more
//	run            from the due instant until the last outcome is recorded, and
//	               occurrences per second over that span; the autovacuum workers
//	               busy on the schema at the due instant
//	rss            the process's resident memory (VmRSS) once the due jobs ran,
//	               and the live heap: the puts' garbage is returned to the
//	               system before the Scheduler starts
//	list           ListJobs' first page (100 jobs) of the first collection:
//	               p50, p10 and p90 of 201 calls, alternated with the counts'
//	next           the same page in the order of the jobs' next runs
//	               (ListJobsOptions.OrderBy), and in its reverse: the jobs
//	               without a next run (those that ran) first; 21 calls of
//	               each, alternated, after the list's and the count's
//	count          JobCounts (the dashboard's counts by collection and state): the
//	               first call after the run, then p50, p10 and p90 of 201 calls;
//	               and the pages of job_count_deltas after them, which the
//	               counts scan, and the autovacuum workers busy on the schema
//	full           how long a put of one more job into the first collection, full
//	               at its quota (its one-time jobs, run, are kept), takes to be
//	               refused: PutJobs, then PutJob
//
// The run loop's claims take as many jobs as it has free workers, so how
// many jobs each takes varies from run to run (at 10k, runs alternated
// claims of 241 and 15 jobs where others took 256 twenty times in a row),
// and their p50 with it: compare claim256, or claim192, between sizes.
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
	vacuum      bool
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
	flag.BoolVar(&c.vacuum, "vacuum", true, "VACUUM (ANALYZE) the jobs table after the far jobs are put, before the due ones (false: autovacuum may work on it during the run)")
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
	s, err := scheduler.New(&measured{Store: st, c: calls}, &scheduler.Config{
		Executors: reg, MaxConcurrency: 256, Logger: slog.New(slog.DiscardHandler),
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
	// Their starts are spread over a day, in an order other than their
	// names', so that the list sorted by next run reads an order of its
	// own.
	if err := putJobs(ctx, s, c, c.due, c.jobs, func(i int) time.Time { return far.Add(time.Duration(i*7919%86_400) * time.Second) }); err != nil {
		return err
	}
	farTime := time.Since(t0)
	rate := float64(c.jobs-c.due) / farTime.Seconds()
	if c.jobs == c.due {
		rate = 500 // a guess: nothing measured yet
	}
	var vacuumTime time.Duration
	if c.vacuum {
		// What autovacuum does to a table soon after a bulk put, done
		// before the run rather than during it (see -vacuum).
		t := time.Now()
		if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) "+schema+".jobs"); err != nil {
			return err
		}
		vacuumTime = time.Since(t)
	}
	// Due after the due jobs are put and the probe claims have run.
	dueAt := time.Now().Add(5*time.Second + time.Duration(1.5*float64(c.due)/rate*float64(time.Second))).Truncate(time.Second)
	t1 := time.Now()
	if err := putJobs(ctx, s, c, 0, c.due, func(int) time.Time { return dueAt }); err != nil {
		return err
	}
	putTime := time.Since(t0) - vacuumTime
	probe, err := probeClaims(ctx, st, dueAt, 50)
	if err != nil {
		return err
	}
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
	if c.vacuum {
		fmt.Printf("vacuum   %.1f s (VACUUM ANALYZE of the jobs table after the far jobs were put)\n", vacuumTime.Seconds())
	}
	fmt.Printf("claim256 %s (the first %d due jobs, claimed and given back before the run)\n", claimLine(probe), probeLimit)

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
	// Whether autovacuum works on the schema while the due jobs run.
	var autovacuumsAtDue int64
	time.Sleep(time.Until(dueAt))
	if err := pool.QueryRow(ctx, autovacuumsSQL, schema).Scan(&autovacuumsAtDue); err != nil {
		return err
	}
	select {
	case <-finished:
	case <-time.After(time.Until(dueAt) + 5*time.Minute):
		return fmt.Errorf("only %d of %d due jobs ran within 5 minutes", done.Load(), c.due)
	}
	span := time.Unix(0, last.Load()).Sub(dueAt)
	loop := calls.stop()
	fmt.Printf("claim    %s (the run loop's, from its start to the last outcome)\n", claimLine(loop))
	big := slices.DeleteFunc(slices.Clone(loop), func(c claim) bool { return c.took < probeLimit*3/4 })
	fmt.Printf("claim192 %s (those of them that took %d jobs or more)\n", claimLine(big), probeLimit*3/4)
	fmt.Printf("run      %d occurrences in %.3f s from the due instant to the last outcome: %.0f/s; %d autovacuum workers on the schema at the due instant\n",
		c.due, span.Seconds(), float64(c.due)/span.Seconds(), autovacuumsAtDue)
	fmt.Printf("rss      %s (live heap %.1f MiB at the last collection)\n", rss(), liveHeap())

	t2 := time.Now()
	if _, err := s.JobCounts(ctx); err != nil {
		return err
	}
	firstCount := time.Since(t2)
	// The list and the count take about a millisecond each, so that a
	// few calls measure the machine more than them: many calls of each,
	// alternated, so that both see the same moments of the machine. The
	// pages sorted by next run come after them, in rounds of their own:
	// at 1M each sorts the collection's 100,000 jobs for 0.3 s or more,
	// so that between them the list and the count would measure the
	// sort's wake too.
	reads := interleaved(readCalls, func() error {
		_, err := s.ListJobs(ctx, collName(0), nil)
		return err
	}, func() error {
		_, err := s.JobCounts(ctx)
		return err
	})
	list, count := reads[0], reads[1]
	sorted := interleaved(sortedCalls, func() error {
		_, err := s.ListJobs(ctx, collName(0), &scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution})
		return err
	}, func() error {
		_, err := s.ListJobs(ctx, collName(0), &scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution, Descending: true})
		return err
	})
	fmt.Printf("list     %s (first page of %s; %s)\n", ms(list.p50), collName(0), list)
	fmt.Printf("next     %s (first page of %s by next run; %s); descending %s (%s)\n", ms(sorted[0].p50), collName(0), sorted[0], ms(sorted[1].p50), sorted[1])
	// What a count scans besides the counts: the changes not folded and
	// the folded ones not vacuumed away yet (see store/postgres's
	// vacuumAfter), and whether autovacuum works on the schema meanwhile.
	var deltaPages, autovacuums int64
	if err := pool.QueryRow(ctx, "SELECT pg_relation_size($1::regclass) / 8192", schema+".job_count_deltas").Scan(&deltaPages); err != nil {
		return err
	}
	if err := pool.QueryRow(ctx, autovacuumsSQL, schema).Scan(&autovacuums); err != nil {
		return err
	}
	fmt.Printf("count    %s (JobCounts; %s; the first call after the run %s; job_count_deltas %d pages, %d autovacuum workers on the schema)\n",
		ms(count.p50), count, ms(firstCount), deltaPages, autovacuums)
	if err := putIntoFull(ctx, s, collName(0), perColl); err != nil {
		return err
	}
	stopCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return s.Stop(stopCtx)
}

// putIntoFull puts one more job into collection coll, which holds its
// quota of perColl jobs, with PutJobs and with PutJob, and reports how
// long each took to be refused.
func putIntoFull(ctx context.Context, s *scheduler.Scheduler, coll string, perColl int) error {
	start := time.Now().AddDate(1, 0, 0)
	p := scheduler.JobPut{Name: "one-more", Job: &scheduler.Job{StartTime: &start, Action: action.Action{Type: noop, Custom: json.RawMessage(`{}`)}}}
	var took [2]time.Duration
	for i := range took {
		t := time.Now()
		var err error
		if i == 0 {
			_, err = s.PutJobs(ctx, coll, []scheduler.JobPut{p}, nil)
		} else {
			_, err = s.PutJob(ctx, coll, p.Name, p.Job, nil)
		}
		took[i] = time.Since(t)
		if !errors.Is(err, scheduler.ErrQuotaExceeded) {
			return fmt.Errorf("a put into the full collection %s: %v, want a quota error", coll, err)
		}
	}
	fmt.Printf("full     PutJobs %s, PutJob %s (one more job into %s, full at its quota of %d: refused)\n", ms(took[0]), ms(took[1]), coll, perColl)
	return nil
}

// autovacuumsSQL counts the autovacuum workers busy on schema $1.
const autovacuumsSQL = "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' AND query LIKE '%'||$1||'%'"

// probeLimit is the most jobs the run loop claims at once (claimBatch in
// the root package).
const probeLimit = 256

// probeClaims claims the first probeLimit jobs due by dueBy n times, as
// the run loop would claim them ahead, and gives each claim back at once,
// so that every claim takes the same jobs and the store is left as it
// was. It returns the claims' durations: the claim of a full batch,
// without the run loop's other work beside it. It stops early a second
// before dueBy (a slow put of the due jobs).
func probeClaims(ctx context.Context, st *postgres.Store, dueBy time.Time, n int) ([]claim, error) {
	const owner = "million-probe"
	var out []claim
	for range n {
		now := time.Now()
		if dueBy.Sub(now) < time.Second {
			break // the run loop starts to claim ahead of dueBy
		}
		jobs, err := st.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: now, DueBy: dueBy, Owner: owner, LeaseUntil: dueBy.Add(time.Minute), Limit: probeLimit})
		d := time.Since(now)
		if err != nil {
			return nil, err
		}
		for i, err := range st.GiveBack(ctx, owner, jobs) {
			if err != nil {
				return nil, fmt.Errorf("give back %s: %w", jobs[i].ID(), err)
			}
		}
		out = append(out, claim{d, probeLimit, len(jobs)})
	}
	return out, nil
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

// readCalls is how many times the list and the count are each called;
// sortedCalls, the pages sorted by next run, which take 0.3 s or more
// each at 1M jobs.
const (
	readCalls   = 201
	sortedCalls = 21
)

// spread is the p10, p50 and p90 of n calls' durations.
type spread struct {
	n             int
	p10, p50, p90 time.Duration
}

func (s spread) String() string {
	return fmt.Sprintf("p50 of %d calls, p10 %s, p90 %s", s.n, ms(s.p10), ms(s.p90))
}

// interleaved calls each of fs n times, in turns, and returns the spread
// of the durations of each.
func interleaved(n int, fs ...func() error) []spread {
	d := make([][]time.Duration, len(fs))
	for k := range d {
		d[k] = make([]time.Duration, n)
	}
	timed := func(f func() error) time.Duration {
		t := time.Now()
		if err := f(); err != nil {
			log.Fatal("million: ", err)
		}
		return time.Since(t)
	}
	for i := range n {
		for k, f := range fs {
			d[k][i] = timed(f)
		}
	}
	out := make([]spread, len(fs))
	for k := range d {
		out[k] = spreadOf(d[k])
	}
	return out
}

// spreadOf returns the spread of d, which it sorts.
func spreadOf(d []time.Duration) spread {
	slices.Sort(d)
	return spread{len(d), quantile(d, 0.1), quantile(d, 0.5), quantile(d, 0.9)}
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

// claims keeps the durations of the run loop's claims between start and
// stop, with how many jobs each asked for and took.
type claims struct {
	mu    sync.Mutex
	on    bool
	calls []claim
}

type claim struct {
	d           time.Duration
	limit, took int
}

func (c *claims) start() { c.mu.Lock(); c.on = true; c.mu.Unlock() }

func (c *claims) add(d time.Duration, limit, took int) {
	c.mu.Lock()
	if c.on {
		c.calls = append(c.calls, claim{d, limit, took})
	}
	c.mu.Unlock()
}

// stop ends the measurement and returns the claims made meanwhile.
func (c *claims) stop() []claim {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.on = false
	return c.calls
}

// quantiles returns the p50, p99 and max of d, which it sorts.
func quantiles(d []time.Duration) (p50, p99, pmax time.Duration) {
	if len(d) == 0 {
		return 0, 0, 0
	}
	slices.Sort(d)
	return quantile(d, 0.5), quantile(d, 0.99), d[len(d)-1]
}

// quantile returns the p quantile of d, which is sorted and not empty.
func quantile(d []time.Duration, p float64) time.Duration { return d[int(p*float64(len(d)-1))] }

// claimLine describes claims: their p50, p99 and max, and how many jobs
// they took.
func claimLine(calls []claim) string {
	d := make([]time.Duration, len(calls))
	var took, empty int
	var sum time.Duration
	for i, c := range calls {
		d[i] = c.d
		took += c.took
		sum += c.d
		if c.took == 0 {
			empty++
		}
	}
	p50, p99, pmax := quantiles(d)
	per := 0.0
	if took > 0 {
		per = float64(sum) / float64(took) / float64(time.Microsecond)
	}
	return fmt.Sprintf("p50 %s, p99 %s, max %s; %d calls, %d empty, %.1f jobs per call, %.1f µs per job claimed",
		ms(p50), ms(p99), ms(pmax), len(calls), empty, float64(took)/float64(max(len(calls), 1)), per)
}

// measured is the store the Scheduler runs on: the PostgreSQL store, whose
// claims it times and counts (the Scheduler's Observer reports a claim's
// duration, not how many jobs it took).
type measured struct {
	*postgres.Store
	c *claims
}

func (m *measured) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*scheduler.JobRecord, error) {
	return m.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: now, DueBy: now, Owner: owner, LeaseUntil: leaseUntil, Limit: limit})
}

func (m *measured) ClaimDueBy(ctx context.Context, r scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	t := time.Now()
	jobs, err := m.Store.ClaimDueBy(ctx, r)
	m.c.add(time.Since(t), r.Limit, len(jobs))
	return jobs, err
}
