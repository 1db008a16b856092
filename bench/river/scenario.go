package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"time"
)

var nan = math.NaN()

// config is what every scenario of a run shares.
type config struct {
	n          int           // jobs of a burst or a put scenario
	rate       int           // steady: occurrences per second
	window     time.Duration // steady: how long
	lead       time.Duration // steady: from the setup's start to the first due time; 0 estimates it
	timeout    time.Duration // the longest a firing scenario may take
	cpuprofile string        // prefix of CPU profiles of the measured windows
	memprofile string        // prefix of heap profiles taken at the end of the windows
	trace      string        // prefix of execution traces of the measured windows
	label      string        // names the profiles of this run
}

// result is what one run of a scenario on one side measured, by metric.
type result struct {
	v    map[string]float64
	note map[string]string // a metric a side cannot measure, and why
}

func newResult() result { return result{v: map[string]float64{}, note: map[string]string{}} }

// scenario runs on one side over fresh tables and returns its figures.
type scenario struct {
	name     string
	postgres bool // PostgreSQL only
	puts     bool // tuning River does not change a put: River runs once
	run      func(ctx context.Context, e *env, sys system, c config) (result, error)
}

var scenarios = []scenario{
	{name: "burst", run: burst},
	{name: "steady", run: steady},
	{name: "instances", postgres: true, run: instances},
	{name: "put-one", puts: true, run: putScenario(putOne)},
	{name: "put-eight", puts: true, run: putScenario(putEight)},
	{name: "put-tx", puts: true, run: putScenario(putTx)},
	{name: "put-bulk", puts: true, run: putScenario(putBulk, putBulkFast)},
}

// profile starts the CPU profile of a measured window and writes the
// allocation profile so far (PREFIX.SCENARIO.SIDE.RUN.start.heap, for
// pprof's -base); the function it returns stops the CPU profile and writes
// the allocation profile at the end of the window. With a trace prefix, it
// also traces the window (PREFIX.SCENARIO.SIDE.RUN.trace).
func (c config) profile(name string, sys system) func() error {
	base := fmt.Sprintf("%s.%s.%s", name, sys, c.label)
	tr := startTo(c.trace, base+".trace", trace.Start)
	cpu := startTo(c.cpuprofile, base+".cpu", pprof.StartCPUProfile)
	if c.memprofile != "" {
		// The allocations before the window, for pprof's -base.
		if f, err := os.Create(c.memprofile + "." + base + ".start.heap"); err == nil {
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
	return func() error {
		var errs []error
		if tr != nil {
			trace.Stop()
			errs = append(errs, tr.Close())
		}
		if cpu != nil {
			pprof.StopCPUProfile()
			errs = append(errs, cpu.Close())
		}
		if c.memprofile != "" {
			f, err := os.Create(c.memprofile + "." + base + ".heap")
			if err != nil {
				return err
			}
			runtime.GC()
			errs = append(errs, pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
		}
		return errors.Join(errs...)
	}
}

// startTo creates PREFIX.name, when prefix is set, and starts start (a
// trace, a CPU profile) writing to it; it returns the file, or nil when
// prefix is empty or either step failed.
func startTo(prefix, name string, start func(io.Writer) error) *os.File {
	if prefix == "" {
		return nil
	}
	f, err := os.Create(prefix + "." + name)
	if err != nil {
		return nil
	}
	if start(f) != nil {
		f.Close()
		return nil
	}
	return f
}

// fire opens sys over fresh tables, puts jobs due at due with its quickest
// put, and measures from ready (which returns the start of the measured
// window, after the side started) until the last outcome is recorded.
func fire(ctx context.Context, e *env, sys system, c config, name string, due []time.Time,
	ready func(context.Context, side) (sample, error)) (*tally, sample, sample, error) {
	t := newTally(len(due))
	s, err := newSide(ctx, e, sys, t, "")
	if err != nil {
		return nil, sample{}, sample{}, err
	}
	defer e.drop(context.WithoutCancel(ctx), s.where())
	defer s.close()
	setup := time.Now()
	if err := s.put(ctx, putSetup, due, nil); err != nil {
		return nil, sample{}, sample{}, err
	}
	e.setupPerJob[sys] = time.Since(setup) / time.Duration(len(due))
	a, err := ready(ctx, s)
	if err != nil {
		return nil, sample{}, sample{}, err
	}
	stopProfile := c.profile(name, sys)
	err = t.wait(c.timeout)
	b := e.meter.sample()
	err = errors.Join(err, stopProfile())
	stopCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = errors.Join(err, s.stop(stopCtx), t.check())
	if err == nil {
		err = s.verify(ctx, len(due), true)
	}
	return t, a, b, err
}

// burst: n jobs due at one instant, already passed when the side starts;
// from its start until the last outcome is recorded.
func burst(ctx context.Context, e *env, sys system, c config) (result, error) {
	due := make([]time.Time, c.n)
	at := time.Now().Truncate(time.Millisecond)
	for i := range due {
		due[i] = at
	}
	t, a, b, err := fire(ctx, e, sys, c, "burst", due, func(ctx context.Context, s side) (sample, error) {
		a := e.meter.sample()
		return a, s.start(ctx)
	})
	if err != nil {
		return result{}, err
	}
	r := newResult()
	r.v["burst.s"] = t.lastRecorded().Sub(a.at).Seconds()
	r.v["burst.cpu"], r.v["burst.server"] = e.meter.perOp(a, b, c.n)
	r.v["burst.cs"] = switchesPerOp(a, b, c.n)
	r.v["burst.allocs"], r.v["burst.bytes"] = allocsPerOp(a, b, c.n)
	return r, nil
}

// setupCost estimates how long a side's setup puts take per job, for the
// steady scenario's lead time: twice what the side's last setup took, or
// a guess before it has put any.
func setupCost(e *env, sys system) time.Duration {
	switch last, ok := e.setupPerJob[sys]; {
	case ok:
		return 2 * last
	case sys != sysJobclock:
		return 200 * time.Microsecond
	case e.store == "sqlite":
		return 4 * time.Millisecond
	}
	return 3 * time.Millisecond
}

// errSetupLate says that a steady run's setup took too long for its lead.
var errSetupLate = errors.New("the setup ended less than 2s before the first due time")

// steady: rate jobs a second for window, put before the side starts; the
// window measured runs from shortly before the first due time until the
// last outcome is recorded, and holds nothing but firing. When the setup
// takes longer than estimated, the run is done again with the estimate
// from that setup (at most twice; never with -lead).
func steady(ctx context.Context, e *env, sys system, c config) (result, error) {
	for try := 0; ; try++ {
		r, err := steadyOnce(ctx, e, sys, c)
		if !errors.Is(err, errSetupLate) || c.lead != 0 || try == 2 {
			return r, err
		}
		fmt.Fprintf(os.Stderr, "steady %s: %v; again with a longer lead\n", sys, err)
	}
}

func steadyOnce(ctx context.Context, e *env, sys system, c config) (result, error) {
	n := int(int64(c.rate) * int64(c.window) / int64(time.Second))
	lead := c.lead
	if lead == 0 {
		lead = 5*time.Second + time.Duration(n)*setupCost(e, sys)
	}
	first := time.Now().Add(lead).Truncate(time.Millisecond)
	due := make([]time.Time, n)
	for i := range due {
		due[i] = first.Add(time.Duration(i) * time.Second / time.Duration(c.rate))
	}
	t, a, b, err := fire(ctx, e, sys, c, "steady", due, func(ctx context.Context, s side) (sample, error) {
		// Started at least 2 s before the first due time, so that its
		// start is over when the window opens.
		if left := time.Until(first); left < 2*time.Second {
			return sample{}, fmt.Errorf("%w (%s before it, lead %s): raise -lead", errSetupLate, left.Round(time.Millisecond), lead)
		}
		if err := s.start(ctx); err != nil {
			return sample{}, err
		}
		time.Sleep(time.Until(first.Add(-200 * time.Millisecond)))
		return e.meter.sample(), nil
	})
	if err != nil {
		return result{}, err
	}
	late := t.lateness(due)
	r := newResult()
	r.v["steady.p50"] = float64(quantile(late, 0.50)) / float64(time.Millisecond)
	r.v["steady.p99"] = float64(quantile(late, 0.99)) / float64(time.Millisecond)
	r.v["steady.cpu"], r.v["steady.server"] = e.meter.perOp(a, b, n)
	r.v["steady.cs"] = switchesPerOp(a, b, n)
	r.v["steady.allocs"], r.v["steady.bytes"] = allocsPerOp(a, b, n)
	return r, nil
}

// putScenario puts n jobs due in a day in each of the modes, on tables of
// their own.
func putScenario(modes ...putMode) func(ctx context.Context, e *env, sys system, c config) (result, error) {
	return func(ctx context.Context, e *env, sys system, c config) (result, error) {
		r := newResult()
		for _, how := range modes {
			if err := putOnce(ctx, e, sys, c, how, r); err != nil {
				return result{}, err
			}
		}
		return r, nil
	}
}

func putOnce(ctx context.Context, e *env, sys system, c config, how putMode, r result) error {
	s, err := newSide(ctx, e, sys, newTally(c.n), "")
	if err != nil {
		return err
	}
	defer e.drop(context.WithoutCancel(ctx), s.where())
	defer s.close()
	at := time.Now().Add(24 * time.Hour).Truncate(time.Millisecond)
	due := make([]time.Time, c.n)
	for i := range due {
		due[i] = at.Add(time.Duration(i) * time.Millisecond)
	}
	// The cost per put of the first and the last k puts of a transaction,
	// and of each tenth of its puts: the puts before which probe samples.
	k := min(1000, max(c.n/10, 1))
	marks := []int{0, k, c.n - k, c.n}
	for t := 1; t < tenths; t++ {
		marks = append(marks, t*c.n/tenths)
	}
	probes := make(map[int]sample, len(marks))
	probe := func(i int) {
		if slices.Contains(marks, i) {
			probes[i] = e.meter.sample()
		}
	}
	stopProfile := c.profile("put-"+string(how), sys)
	a := e.meter.sample()
	err = s.put(ctx, how, due, probe)
	b := e.meter.sample()
	err = errors.Join(err, stopProfile())
	key := "put." + string(how)
	if errors.Is(err, errNotAvailable) {
		r.note[key] = "–"
		return nil
	}
	if err != nil {
		return err
	}
	if err := s.verify(ctx, c.n, false); err != nil {
		return err
	}
	r.v[key+".s"] = b.at.Sub(a.at).Seconds()
	r.v[key+".cpu"], r.v[key+".server"] = e.meter.perOp(a, b, c.n)
	if how == putTx {
		window := func(key string, from, to int) {
			a, b := probes[from], probes[to]
			r.v[key] = float64(b.at.Sub(a.at)) / float64(time.Microsecond) / float64(to-from)
			r.v[key+".cpu"], r.v[key+".server"] = e.meter.perOp(a, b, to-from)
			r.v[key+".allocs"], _ = allocsPerOp(a, b, to-from)
		}
		window("put.tx.first", 0, k)
		window("put.tx.last", c.n-k, c.n)
		for t := range tenths {
			window(tenthKey(t+1), t*c.n/tenths, (t+1)*c.n/tenths)
		}
	}
	return nil
}

// tenths is how many parts put-tx cuts its transaction's puts into, to
// show how the cost per put moves as the transaction grows.
const tenths = 10

// tenthsKey is the key of the table's rows of put-tx's figures of every
// tenth (followed by "", ".cpu", ".server" or ".allocs" as tenthKey's
// are): one cell holds all ten.
const tenthsKey = "put.tx.tenths"

// tenthKey is the key of put-tx's figures of tenth t (1 to tenths) of its
// puts: µs per put; with ".cpu" and ".server", the process's and the
// server's CPU per put; with ".allocs", the process's heap allocations per
// put, which other work on the machine does not change.
func tenthKey(t int) string { return "put.tx.tenth" + strconv.Itoa(t) }
