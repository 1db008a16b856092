package engine

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/robfig/cron/v3"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/telemetry"
)

// engine is what each benchmark drives: one-shot jobs that call fire with
// their due instant when they start.
type engine interface {
	add(i int, at time.Time) error
	get(i int) bool
	remove(i int) error
	start()
	stop()
}

type fireFunc func(due time.Time)

// jobclock -------------------------------------------------------------

type jobclock struct {
	s     *scheduler.Scheduler
	ctx   context.Context
	after func() // run by stop; nil: nothing
}

const noop action.Type = "Noop"

func newJobclock(fire fireFunc, capacity int) engine {
	return newJobclockWith(fire, capacity, scheduler.Config{})
}

// newJobclockNoHistory is jobclock keeping no history
// (Config.HistoryPerJob NoHistory): the same work as robfig/cron.
func newJobclockNoHistory(fire fireFunc, capacity int) engine {
	return newJobclockWith(fire, capacity, scheduler.Config{HistoryPerJob: scheduler.NoHistory})
}

// newJobclockOtel is jobclock opted in to package telemetry with the
// OpenTelemetry SDK: every attempt traced (sampled, batched to an exporter
// that drops the spans) and measured by the Prometheus exporter, which is
// scraped once at the end.
func newJobclockOtel(fire fireFunc, capacity int) engine {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		panic(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(dropSpans{}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	obs := telemetry.New(&telemetry.Options{TracerProvider: tp, MeterProvider: mp})
	e := newJobclockWith(fire, capacity, scheduler.Config{Observer: obs}).(*jobclock)
	e.after = func() {
		if _, err := reg.Gather(); err != nil {
			panic(err)
		}
		tp.Shutdown(context.Background())
		mp.Shutdown(context.Background())
	}
	return e
}

// dropSpans is a span exporter that drops what it gets.
type dropSpans struct{}

func (dropSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (dropSpans) Shutdown(context.Context) error                             { return nil }

func newJobclockWith(fire fireFunc, capacity int, cfg scheduler.Config) engine {
	reg := &action.Registry{}
	reg.Register(noop, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		fire(req.ExpectedTime)
		return nil, nil
	}))
	cfg.Executors, cfg.MaxConcurrency, cfg.Logger = reg, 1000, slog.New(slog.DiscardHandler)
	s, err := scheduler.New(memory.New(), &cfg)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	quota := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: capacity}}}
	if _, err := s.PutCollection(ctx, "bench", quota, nil); err != nil {
		panic(err)
	}
	return &jobclock{s: s, ctx: ctx}
}

func (j *jobclock) add(i int, at time.Time) error {
	def := &scheduler.Job{StartTime: &at, Action: action.Action{Type: noop, Custom: json.RawMessage(`{}`)}}
	_, err := j.s.PutJob(j.ctx, "bench", jobName(i), def, nil)
	return err
}
func (j *jobclock) get(i int) bool {
	_, err := j.s.GetJob(j.ctx, "bench", jobName(i))
	return err == nil
}
func (j *jobclock) remove(i int) error { return j.s.DeleteJob(j.ctx, "bench", jobName(i), nil) }
func (j *jobclock) start()             { j.s.Start(j.ctx) }
func (j *jobclock) stop() {
	j.s.Stop(j.ctx)
	if j.after != nil {
		j.after()
	}
}

func jobName(i int) string { return fmt.Sprintf("j%07d", i) }

// robfig/cron v3 ---------------------------------------------------------

type robfig struct {
	c    *cron.Cron
	fire fireFunc
	mu   sync.Mutex
	ids  map[int]cron.EntryID
}

// once is a cron.Schedule that fires once, at at.
type once struct{ at time.Time }

func (o once) Next(t time.Time) time.Time {
	if t.Before(o.at) {
		return o.at
	}
	return time.Time{}
}

func newRobfig(fire fireFunc, capacity int) engine {
	return &robfig{c: cron.New(), fire: fire, ids: make(map[int]cron.EntryID, capacity)}
}

func (r *robfig) add(i int, at time.Time) error {
	id := r.c.Schedule(once{at}, cron.FuncJob(func() { r.fire(at) }))
	r.mu.Lock()
	r.ids[i] = id
	r.mu.Unlock()
	return nil
}
func (r *robfig) id(i int) cron.EntryID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ids[i]
}
func (r *robfig) get(i int) bool { return r.c.Entry(r.id(i)).Valid() }
func (r *robfig) remove(i int) error {
	r.c.Remove(r.id(i))
	return nil
}
func (r *robfig) start() { r.c.Start() }
func (r *robfig) stop()  { <-r.c.Stop().Done() }

// gocron v2 --------------------------------------------------------------

type gocronEngine struct {
	s    gocron.Scheduler
	fire fireFunc
	mu   sync.Mutex
	ids  map[int]uuid.UUID
}

func newGocron(fire fireFunc, capacity int) engine {
	s, err := gocron.NewScheduler()
	if err != nil {
		panic(err)
	}
	return &gocronEngine{s: s, fire: fire, ids: make(map[int]uuid.UUID, capacity)}
}

func (g *gocronEngine) add(i int, at time.Time) error {
	j, err := g.s.NewJob(gocron.OneTimeJob(gocron.OneTimeJobStartDateTime(at)), gocron.NewTask(func() { g.fire(at) }))
	if err != nil {
		return err
	}
	g.mu.Lock()
	g.ids[i] = j.ID()
	g.mu.Unlock()
	return nil
}
func (g *gocronEngine) id(i int) uuid.UUID {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ids[i]
}
func (g *gocronEngine) get(i int) bool {
	// gocron v2 has no lookup by ID; Jobs() copies every job.
	id := g.id(i)
	for _, j := range g.s.Jobs() {
		if j.ID() == id {
			return true
		}
	}
	return false
}
func (g *gocronEngine) remove(i int) error { return g.s.RemoveJob(g.id(i)) }
func (g *gocronEngine) start()             { g.s.Start() }
func (g *gocronEngine) stop()              { g.s.Shutdown() }

type engineMaker struct {
	name string
	new  func(fire fireFunc, capacity int) engine
}

var engines = []engineMaker{
	{"jobclock", newJobclock},
	{"robfig", newRobfig},
	{"gocron", newGocron},
}

// loadEngines are the engines of the load benchmarks: the others,
// jobclock keeping no history, and jobclock with the OpenTelemetry SDK and
// the Prometheus exporter.
var loadEngines = append(slices.Clone(engines), engineMaker{"jobclock-nohistory", newJobclockNoHistory},
	engineMaker{"jobclock-otel", newJobclockOtel})

// helpers -------------------------------------------------------------------

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// threadTimes returns, summed over the process's threads, the time they
// ran on a processor and the time they waited for one while runnable
// (the run queue delay that other processes' work causes), from
// /proc/self/task/*/schedstat; zero where that is not readable. A thread
// that ends meanwhile takes its counts with it (the runtime's threads
// seldom end).
func threadTimes() (run, wait time.Duration) {
	dir, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0, 0
	}
	for _, d := range dir {
		b, err := os.ReadFile("/proc/self/task/" + d.Name() + "/schedstat")
		if err != nil {
			continue
		}
		var r, w int64
		if _, err := fmt.Sscan(string(b), &r, &w); err == nil {
			run += time.Duration(r)
			wait += time.Duration(w)
		}
	}
	return run, wait
}

// minorFaults returns the process's minor page faults so far: each is a
// page of memory touched for the first time since the kernel gave it (or
// took it back), which the kernel zeroes.
func minorFaults() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Minflt
}

// settle collects the registration's garbage and returns the memory it
// freed to the operating system, for every engine alike. The loads that
// compare engines (all but BenchmarkOpsAt1M, which measures the steady
// state) call it after registering, before the engine starts and before
// the wait for the first due instant. The load then runs on the engine's own live heap, with no spare
// pages mapped before it: neither what registering left nor what the
// engines measured before it in the process left (an engine run after
// others in one process would otherwise grow its heap into pages they
// had touched, without the page faults it takes in a process of its own).
// The runtime's scavenger would return part of that memory during the
// wait for the due instant anyway, more or less of it by chance.
func settle() { debug.FreeOSMemory() }

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// recorder collects start instants.
type recorder struct {
	n     atomic.Int64
	want  int64
	done  chan struct{}
	mu    sync.Mutex
	late  []time.Duration
	last  time.Time
	track bool
}

func newRecorder(want int, track bool) *recorder {
	r := &recorder{want: int64(want), done: make(chan struct{}), track: track}
	if track {
		r.late = make([]time.Duration, 0, want)
	}
	return r
}

func (r *recorder) fire(due time.Time) {
	now := time.Now()
	r.mu.Lock()
	if r.track {
		r.late = append(r.late, now.Sub(due))
	}
	if now.After(r.last) {
		r.last = now
	}
	r.mu.Unlock()
	if r.n.Add(1) == r.want {
		close(r.done)
	}
}

// wait waits until every job has fired or the deadline passes.
func (r *recorder) wait(deadline time.Time) {
	select {
	case <-r.done:
	case <-time.After(time.Until(deadline)):
	}
}

// benchmarks ------------------------------------------------------------------

func BenchmarkRegister(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		for _, e := range engines {
			b.Run(fmt.Sprintf("%s/%d", e.name, n), func(b *testing.B) {
				far := time.Now().Add(24 * time.Hour)
				for b.Loop() {
					before := liveHeap()
					eng := e.new(func(time.Time) {}, n)
					t0 := time.Now()
					for i := range n {
						if err := eng.add(i, far.Add(time.Duration(i)*time.Millisecond)); err != nil {
							b.Fatal(err)
						}
					}
					elapsed := time.Since(t0)
					after := liveHeap()
					b.ReportMetric(float64(elapsed.Nanoseconds())/float64(n), "ns/job")
					b.ReportMetric(float64(after-before)/float64(n), "B/job")
					// The heap in use that the engine and its n jobs
					// account for, after a collection: what the process
					// holds with them less what it held before.
					b.ReportMetric(float64(after-before)/(1<<20), "heap-MiB")
					runtime.KeepAlive(eng)
				}
			})
		}
	}
}

// burstProfile names the files that profile the burst alone: the CPU
// profile from the due instant until every occurrence started, and the
// allocations made meanwhile.
var burstProfile = flag.String("burstprofile", "", "write `prefix`-<engine>.cpu and prefix-<engine>.allocs: profiles of BenchmarkBurst100k's burst alone")

// profileBurst starts profiling the burst of the named engine, when asked
// to, and returns the function that ends it.
func profileBurst(b *testing.B, name string) (stop func()) {
	if *burstProfile == "" {
		return func() {}
	}
	base := *burstProfile + "-" + name
	cpu, err := os.Create(base + ".cpu")
	if err != nil {
		b.Fatal(err)
	}
	// Count allocations from here on only: the heap profile's alloc_*
	// figures are cumulative, so take them as a difference with -base.
	runtime.MemProfileRate = 4096
	writeHeap(b, base+".allocs0")
	if err := pprof.StartCPUProfile(cpu); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		cpu.Close()
		writeHeap(b, base+".allocs")
	}
}

// burstTrace names the execution trace of the burst alone.
var burstTrace = flag.String("bursttrace", "", "write `prefix`-<engine>.trace: an execution trace of BenchmarkBurst100k's burst alone")

// traceBurst starts tracing the burst of the named engine, when asked to,
// and returns the function that ends it.
func traceBurst(b *testing.B, name string) (stop func()) {
	if *burstTrace == "" {
		return func() {}
	}
	f, err := os.Create(*burstTrace + "-" + name + ".trace")
	if err != nil {
		b.Fatal(err)
	}
	if err := trace.Start(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		trace.Stop()
		f.Close()
	}
}

func writeHeap(b *testing.B, name string) {
	runtime.GC()
	f, err := os.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkBurst100k(b *testing.B) {
	const n = 100_000
	for _, e := range loadEngines {
		b.Run(e.name, func(b *testing.B) {
			for b.Loop() {
				rec := newRecorder(n, false)
				eng := e.new(rec.fire, n)
				// Register with a due time far enough ahead for the slowest
				// engine, then start.
				t0 := time.Now()
				due := t0.Add(20 * time.Second).Truncate(time.Second)
				for i := range n {
					if err := eng.add(i, due); err != nil {
						b.Fatal(err)
					}
				}
				settle()
				if time.Now().After(due) {
					b.Skipf("registering %d jobs took %v, past the due time", n, time.Since(t0))
				}
				eng.start()
				time.Sleep(time.Until(due))
				stopProfile := profileBurst(b, e.name)
				stopTrace := traceBurst(b, e.name)
				var ms0, ms1 runtime.MemStats
				runtime.ReadMemStats(&ms0)
				faults0 := minorFaults()
				run0, wait0 := threadTimes()
				t1 := time.Now()
				cpu0 := cpuTime()
				rec.wait(due.Add(60 * time.Second))
				cpu := cpuTime() - cpu0
				run1, wait1 := threadTimes()
				window := time.Since(t1)
				faults := minorFaults() - faults0
				runtime.ReadMemStats(&ms1)
				stopTrace()
				stopProfile()
				fired := rec.n.Load()
				rec.mu.Lock()
				last := rec.last
				rec.mu.Unlock()
				eng.stop() // waits for the jobs' bookkeeping (jobclock: outcomes and history stored)
				cpuAll := cpuTime() - cpu0
				b.ReportMetric(last.Sub(due).Seconds(), "burst-s")
				b.ReportMetric(float64(cpu.Microseconds())/float64(max(fired, 1)), "cpu-us/occ")
				b.ReportMetric(float64(cpuAll.Microseconds())/float64(max(fired, 1)), "cpu-stop-us/occ")
				b.ReportMetric(float64(n-fired), "lost")
				b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(max(fired, 1)), "allocs/occ")
				b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(max(fired, 1)), "B/occ")
				b.ReportMetric(float64(ms1.NumGC-ms0.NumGC), "gc")
				b.ReportMetric(float64(faults)/float64(max(fired, 1)), "faults/occ")
				b.ReportMetric(float64(run1-run0)/float64(window), "procs")
				b.ReportMetric(float64(wait1-wait0)/float64(window), "procs-waited")
			}
		})
	}
}

func BenchmarkSteady10kPerSecond(b *testing.B) {
	const rate, seconds = 10_000, 3
	const n = rate * seconds
	for _, e := range loadEngines {
		b.Run(e.name, func(b *testing.B) {
			for b.Loop() {
				rec := newRecorder(n, true)
				eng := e.new(rec.fire, n)
				t0 := time.Now().Add(10 * time.Second).Truncate(time.Second)
				step := time.Second / rate
				for i := range n {
					if err := eng.add(i, t0.Add(time.Duration(i)*step)); err != nil {
						b.Fatal(err)
					}
				}
				settle()
				if time.Now().After(t0) {
					b.Skipf("registering took past the start of the load")
				}
				eng.start()
				time.Sleep(time.Until(t0))
				cpu0 := cpuTime()
				rec.wait(t0.Add(seconds*time.Second + 10*time.Second))
				cpu := cpuTime() - cpu0
				eng.stop()
				reportLateness(b, rec, n, cpu)
			}
		})
	}
}

// reportLateness reports the lateness p50-ms and p99-ms of what rec
// recorded, cpu-us/occ for cpu, and how many of n occurrences were lost.
func reportLateness(b *testing.B, rec *recorder, n int, cpu time.Duration) {
	rec.mu.Lock()
	late := slices.Clone(rec.late)
	rec.mu.Unlock()
	slices.Sort(late)
	pct := func(p float64) float64 {
		if len(late) == 0 {
			return 0
		}
		return float64(late[int(p*float64(len(late)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(cpu.Microseconds())/float64(max(len(late), 1)), "cpu-us/occ")
	b.ReportMetric(float64(n-min(len(late), n)), "lost")
}

func BenchmarkOpsAt1M(b *testing.B) {
	const n, ops = 1_000_000, 1000
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			for b.Loop() {
				eng := e.new(func(time.Time) {}, n+ops)
				far := time.Now().Add(24 * time.Hour)
				for i := range n {
					if err := eng.add(i, far.Add(time.Duration(i)*time.Millisecond)); err != nil {
						b.Fatal(err)
					}
				}
				eng.start()
				// Measure the steady state, not the collection of the
				// registration's garbage or start-up work; the heap
				// stays mapped, as in a long-running process (see the
				// package doc).
				runtime.GC()
				time.Sleep(2 * time.Second)
				ops := ops
				switch e.name {
				case "robfig":
					ops = 100 // every operation scans or copies every job
				case "gocron":
					ops = 10 // the same, and slower still
				}
				measure := func(f func(i int)) float64 {
					t0 := time.Now()
					for i := n; i < n+ops; i++ {
						f(i)
					}
					return float64(time.Since(t0).Microseconds()) / float64(ops)
				}
				add := measure(func(i int) {
					if err := eng.add(i, far.Add(-time.Hour)); err != nil {
						b.Fatal(err)
					}
				})
				get := measure(func(i int) {
					if !eng.get(i) {
						b.Fatalf("job %d not found", i)
					}
				})
				remove := measure(func(i int) {
					if err := eng.remove(i); err != nil {
						b.Fatal(err)
					}
				})
				eng.stop()
				b.ReportMetric(add, "add-us")
				b.ReportMetric(get, "get-us")
				b.ReportMetric(remove, "remove-us")
			}
		})
	}
}

// BenchmarkEverySecond1k runs 1,000 jobs every second for 10 seconds
// (10,000 occurrences) from a memory store: jobclock with frequency Second
// in a collection whose quota allows it, robfig/cron with "@every 1s".
// Metrics: lateness p50-ms and p99-ms, cpu-us/occ over the 10 seconds,
// lost occurrences.
func BenchmarkEverySecond1k(b *testing.B) {
	const jobs, seconds = 1000, 10
	const n = jobs * seconds
	for _, name := range []string{"jobclock", "robfig"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				rec := newRecorder(n, true)
				t0 := time.Now().Add(3 * time.Second).Truncate(time.Second)
				var eng engine
				switch name {
				case "jobclock":
					eng = everySecondJobclock(b, rec.fire, jobs, seconds, t0)
				case "robfig":
					eng = everySecondRobfig(b, rec.fire, jobs, t0)
				}
				settle()
				eng.start()
				time.Sleep(time.Until(t0))
				cpu0 := cpuTime()
				rec.wait(t0.Add(seconds*time.Second + 5*time.Second))
				cpu := cpuTime() - cpu0
				eng.stop()
				reportLateness(b, rec, n, cpu)
			}
		})
	}
}

// everySecondJobclock returns a jobclock scheduler, not started, whose
// jobs run every second from t0, count times each.
func everySecondJobclock(b *testing.B, fire fireFunc, jobs, count int, t0 time.Time) engine {
	e := newJobclock(fire, jobs).(*jobclock)
	quota := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: jobs,
		MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Second, Interval: 1}}}}
	if _, err := e.s.PutCollection(e.ctx, "bench", quota, nil); err != nil {
		b.Fatal(err)
	}
	for i := range jobs {
		def := &scheduler.Job{StartTime: &t0, Action: action.Action{Type: noop, Custom: json.RawMessage(`{}`)},
			Recurrence: &recurrence.Recurrence{Frequency: recurrence.Second, Count: int32(count)}}
		if _, err := e.s.PutJob(e.ctx, "bench", jobName(i), def, nil); err != nil {
			b.Fatal(err)
		}
	}
	return e
}

// everySecondRobfig returns robfig/cron, not started, with jobs entries
// "@every 1s" added shortly before t0 (it runs them on whole seconds). A
// job's due instant is the whole second it started in.
func everySecondRobfig(b *testing.B, fire fireFunc, jobs int, t0 time.Time) engine {
	c := cron.New(cron.WithSeconds())
	time.Sleep(time.Until(t0.Add(-500 * time.Millisecond)))
	for range jobs {
		if _, err := c.AddFunc("@every 1s", func() { fire(time.Now().Truncate(time.Second)) }); err != nil {
			b.Fatal(err)
		}
	}
	return &robfig{c: c}
}
