package storetest

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// BenchmarkClaimRecord measures the store's side of running occurrences:
// each worker claims due jobs (up to 32 at a time) and records each one's
// outcome with one history entry, leaving it due again. Every store in
// stores is one instance (as another process would be) and runs workers
// goroutines; all share one database. It reports occurrences/s.
func BenchmarkClaimRecord(b *testing.B, stores []scheduler.Store, workers int) {
	ctx := context.Background()
	s0 := stores[0]
	const jobs = 2000
	c := &scheduler.CollectionRecord{Name: "bench"}
	c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: jobs}
	if err := s0.PutCollection(ctx, c); err != nil {
		b.Fatal(err)
	}
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range jobs {
		if err := s0.PutJob(ctx, newJob("bench", fmt.Sprintf("j%05d", i), base.Add(time.Duration(i)*time.Microsecond))); err != nil {
			b.Fatal(err)
		}
	}
	now := base.Add(24 * time.Hour)
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for i, s := range stores {
		for w := range workers {
			owner := fmt.Sprintf("i%d-w%d", i, w)
			wg.Go(func() {
				for left.Load() > 0 {
					got, err := s.ClaimDue(ctx, now, owner, now.Add(time.Hour), 32)
					if err != nil {
						b.Error(err)
						return
					}
					for _, j := range got {
						h := scheduler.HistoryEntry{Collection: j.Collection, Job: j.Name, ActionName: scheduler.MainAction,
							Status: scheduler.StatusCompleted, ExpectedExecutionTime: j.Schedule.DueAt, StartTime: now, EndTime: now,
							RepeatCount: j.Schedule.Occurrences + 1, Message: "Http 200 OK"}
						j.Schedule.Occurrences++
						j.Status.ExecutionCount++
						j.Schedule.DueAt = j.Schedule.DueAt.Add(time.Second)
						if err := s.Record(ctx, owner, j, []scheduler.HistoryEntry{h}); err != nil {
							b.Error(err)
							return
						}
						left.Add(-1)
					}
				}
			})
		}
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "occurrences/s")
}

// BenchmarkEngine measures occurrences per second end to end: one
// Scheduler per store in stores (all over one database), a no-op executor,
// and b.N one-time jobs created before the schedulers start. Each job runs
// once: claim, execute, record its history and final state. It reports
// occurrences/s.
func BenchmarkEngine(b *testing.B, stores []scheduler.Store) {
	ctx := context.Background()
	var done atomic.Int64
	all := make(chan struct{})
	n := int64(b.N)
	reg := &action.Registry{}
	noop := action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		return &action.Result{Message: "ok"}, nil
	})
	reg.Register(action.HTTP, noop)
	scheds := make([]*scheduler.Scheduler, len(stores))
	for i, st := range stores {
		s, err := scheduler.New(st, &scheduler.Config{
			Executors: reg, InstanceID: fmt.Sprintf("bench-%d", i), MaxConcurrency: 256,
			PollInterval: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler),
			OnHistory: func(scheduler.HistoryEntry) {
				if done.Add(1) == n {
					close(all)
				}
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		scheds[i] = s
	}
	def := &scheduler.JobCollection{}
	def.Properties.SKU = &scheduler.SKU{Name: scheduler.SKUP20Premium}
	def.Properties.Quota = &scheduler.Quota{MaxJobCount: b.N + 1}
	if _, err := scheds[0].PutCollection(ctx, "bench", def, nil); err != nil {
		b.Fatal(err)
	}
	// Create the jobs with a few writers at once.
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < n; i = next.Add(1) - 1 {
				job := &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://127.0.0.1:1/", Method: "POST"}}}
				if _, err := scheds[0].PutJob(ctx, "bench", fmt.Sprintf("j%07d", i), job, nil); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		return
	}
	b.ResetTimer()
	start := time.Now()
	for _, s := range scheds {
		if err := s.Start(ctx); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-all:
	case <-time.After(5 * time.Minute):
		b.Errorf("%d of %d occurrences ran within 5 minutes", done.Load(), n)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	for _, s := range scheds {
		s.Stop(ctx)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "occurrences/s")
}

// BenchmarkPutTx compares putting a new job through a Scheduler with
// PutJob (the store's own transaction) and with PutJobTx in a host's
// transaction on the same store (begin, PutJobTx, commit), the same
// definition in both. Each iteration does one of each, alternating which
// goes first, so that both see the same machine and the same table; it
// reports the mean of each (plain-ns/put, tx-ns/put) and their ratio
// (tx/plain).
func BenchmarkPutTx(b *testing.B, newBackend func(tb testing.TB) *TxBackend) {
	ctx := context.Background()
	job := &scheduler.Job{Action: action.Action{Type: "Tx", Custom: []byte(`{"order":"o-1"}`)}}
	be := newBackend(b)
	reg := new(action.Registry)
	reg.Register("Tx", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) { return nil, nil }))
	s, err := scheduler.New(be.Store, &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	def := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 1 << 30}}}
	if _, err := s.PutCollection(ctx, "c", def, nil); err != nil {
		b.Fatal(err)
	}
	plainPut := func(name string) {
		if _, err := s.PutJob(ctx, "c", name, job, nil); err != nil {
			b.Fatal(err)
		}
	}
	txPut := func(name string) {
		tx, err := be.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.PutJobTx(ctx, tx.Tx, "c", name, job, nil); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	var plain, inTx time.Duration
	n := 0
	for b.Loop() {
		n++
		timed := func(put func(string), name string, total *time.Duration) {
			start := time.Now()
			put(name)
			*total += time.Since(start)
		}
		if n%2 == 0 {
			timed(plainPut, fmt.Sprintf("p%d", n), &plain)
			timed(txPut, fmt.Sprintf("t%d", n), &inTx)
		} else {
			timed(txPut, fmt.Sprintf("t%d", n), &inTx)
			timed(plainPut, fmt.Sprintf("p%d", n), &plain)
		}
	}
	b.ReportMetric(float64(plain.Nanoseconds())/float64(n), "plain-ns/put")
	b.ReportMetric(float64(inTx.Nanoseconds())/float64(n), "tx-ns/put")
	b.ReportMetric(float64(inTx)/float64(plain), "tx/plain")
}

// BenchmarkPuts measures putting new jobs into one collection through a
// Scheduler over be.Store, one op per job, in four ways:
//
//   - one: PutJob from one goroutine;
//   - parallel8: PutJob from 8 goroutines;
//   - tx: PutJobTx, all b.N puts in one host transaction (begin, b.N
//     puts, commit); it also reports last/first, the mean time of a put in
//     the last tenth over that in the first tenth, which stays near 1 when
//     the cost of a put does not grow with the transaction;
//   - bulk: one PutJobs of b.N jobs.
//
// Each reports puts/s. Run with -benchtime 20000x for the 20,000 puts of
// the comparison with River. be.Begin may be nil (a store that is not
// Transactional): tx is then skipped. The collection's maxJobCount is
// 2^30, so that no put is refused.
func BenchmarkPuts(b *testing.B, be *TxBackend) {
	ctx := context.Background()
	reg := new(action.Registry)
	reg.Register("Tx", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) { return nil, nil }))
	s, err := scheduler.New(be.Store, &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	job := func(i int) *scheduler.Job {
		return &scheduler.Job{Action: action.Action{Type: "Tx", Custom: fmt.Appendf(nil, `{"order":"o-%d"}`, i)}}
	}
	run := 0
	collection := func(b *testing.B) string {
		run++
		name := fmt.Sprintf("puts-%d", run)
		def := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 1 << 30}}}
		if _, err := s.PutCollection(ctx, name, def, nil); err != nil {
			b.Fatal(err)
		}
		return name
	}
	rate := func(b *testing.B, start time.Time) {
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "puts/s")
	}
	b.Run("one", func(b *testing.B) {
		c := collection(b)
		start := time.Now()
		for i := 0; b.Loop(); i++ {
			if _, err := s.PutJob(ctx, c, fmt.Sprintf("j%d", i), job(i), nil); err != nil {
				b.Fatal(err)
			}
		}
		rate(b, start)
	})
	b.Run("parallel8", func(b *testing.B) {
		c := collection(b)
		var next atomic.Int64
		b.SetParallelism(max(1, 8/runtime.GOMAXPROCS(0)))
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := int(next.Add(1))
				if _, err := s.PutJob(ctx, c, fmt.Sprintf("j%d", i), job(i), nil); err != nil {
					b.Error(err)
					return
				}
			}
		})
		rate(b, start)
	})
	b.Run("tx", func(b *testing.B) {
		if be.Begin == nil {
			b.Skip("the store takes no host transaction")
		}
		c := collection(b)
		tx, err := be.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		tenth := max(1, b.N/10)
		var first, last time.Duration
		start := time.Now()
		b.ResetTimer()
		for i := range b.N {
			t := time.Now()
			if _, err := s.PutJobTx(ctx, tx.Tx, c, fmt.Sprintf("j%d", i), job(i), nil); err != nil {
				b.Fatal(err)
			}
			switch d := time.Since(t); {
			case i < tenth:
				first += d
			case i >= b.N-tenth:
				last += d
			}
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
		rate(b, start)
		b.ReportMetric(float64(last)/float64(first), "last/first")
	})
	b.Run("bulk", func(b *testing.B) {
		c := collection(b)
		batch := make([]scheduler.JobPut, b.N)
		for i := range batch {
			batch[i] = scheduler.JobPut{Name: fmt.Sprintf("j%d", i), Job: job(i)}
		}
		start := time.Now()
		b.ResetTimer()
		if _, err := s.PutJobs(ctx, c, batch, nil); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		rate(b, start)
	})
}

// BenchmarkLimiter measures what collections' limits cost an occurrence in
// the store: each iteration takes the permits of a limit of both kinds
// (maxConcurrent and a rate, one scope) for an attempt, as the Scheduler
// does before the attempt runs, and gives the concurrency permit back, as
// it does after. Holders are spread over 64 targets, so that the rate
// grants each; one goroutine calls, as one worker does. It reports the
// time per occurrence.
func BenchmarkLimiter(b *testing.B, s scheduler.Store) {
	l, ok := s.(scheduler.Limiter)
	if !ok {
		b.Skipf("the store %T is not a scheduler.Limiter", s)
	}
	ctx := context.Background()
	run := time.Now().UnixNano()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	scopes := make([]string, 64)
	for i := range scopes {
		scopes[i] = fmt.Sprintf("bench-%d|host|target%d.example", run, i)
	}
	b.ResetTimer()
	for i := range b.N {
		now = now.Add(time.Second)
		holder := fmt.Sprintf("bench|j%d|%d", i%64, i)
		g, err := l.AcquirePermits(ctx, scheduler.PermitRequest{Holder: holder, Now: now, Until: now.Add(30 * time.Second),
			Permits: []scheduler.Permit{{Scope: scopes[i%64], MaxConcurrent: 5, Interval: 500 * time.Millisecond}}})
		if err != nil || !g.Granted {
			b.Fatalf("AcquirePermits = %+v, %v", g, err)
		}
		if err := l.ReleasePermits(ctx, holder); err != nil {
			b.Fatal(err)
		}
	}
}
