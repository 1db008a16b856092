// Command river compares jobclock with River (github.com/riverqueue/river)
// on the same database, in the same run: the same no-op Go function on
// both sides, River at its defaults and tuned for throughput, jobclock at
// its defaults (-firing-window sets its Config.FiringWindow, for measuring
// what the firing granularity trades). A River job is the analogue of one jobclock occurrence:
// both are claimed under a lock, worked, and their outcome recorded.
//
//	cd bench && go run ./river -store postgres -dsn "$JOBCLOCK_POSTGRES_DSN"
//	cd bench && go run ./river -store sqlite
//	bash bench/river/run.sh    # every store and setting, three runs each
//
// Scenarios (-scenario, comma-separated; all by default):
//
//	burst      -n jobs due at one instant, already passed when the side
//	           starts: time from its start until the last outcome is
//	           recorded; process and database server CPU per occurrence,
//	           and the process's context switches per occurrence
//	steady     -rate jobs a second for -duration, put before the side
//	           starts: start lateness p50/p99, and CPU and the process's
//	           context switches per occurrence over a window from 200 ms
//	           before the first due time until the last outcome (nothing
//	           but firing happens in it)
//	instances  (PostgreSQL) -n jobs due at one instant drained by three
//	           processes sharing the database
//	put-one    putting -n jobs one at a time from one goroutine
//	put-eight  the same from 8 goroutines (jobclock: into one collection)
//	put-tx     the same inside one host transaction (jobclock PutJobTx,
//	           River InsertTx), with the cost per put of the first and the
//	           last 1,000 puts and of each tenth of the puts, first to
//	           last (whether it grows with the transaction): their time,
//	           which other work on the machine lengthens, and the CPU
//	           they took, and the process's heap allocations per put
//	           (which that work does not change); the table shows each
//	           tenth's median over the runs, the run lines every run's
//	           figures (put.tx.tenthK, .cpu, .server, .allocs)
//	put-bulk   jobclock PutJobs (one batch), River InsertMany and
//	           InsertManyFast
//
// What each side records per occurrence: jobclock updates the job's record
// (state, status counters, its lease released) and appends a history
// entry, in one transaction; River updates the job's row (state
// completed, finalized_at), batched by its completer. Every job's function
// must run exactly once and every outcome be recorded exactly once (counted
// by index in the process, then checked in the database); otherwise the
// run fails.
//
// The server's CPU is the CPU of the local PostgreSQL server's processes
// read from /proc (the postmaster, its children, and its exited children),
// so the server must run on this machine and serve nothing else during the
// run. SQLite runs inside the process. Figures are printed as a markdown
// table, each cell the range over -runs runs; the sides take turns within a
// run.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

func main() {
	if spec := os.Getenv(childEnv); spec != "" {
		if err := runChild(spec); err != nil {
			fmt.Fprintln(os.Stderr, "river instance:", err)
			os.Exit(1)
		}
		return
	}
	var o options
	flag.StringVar(&o.store, "store", "", "postgres or sqlite (required)")
	flag.StringVar(&o.dsn, "dsn", os.Getenv("JOBCLOCK_POSTGRES_DSN"), "PostgreSQL DSN (default $JOBCLOCK_POSTGRES_DSN)")
	flag.StringVar(&o.scenarios, "scenario", "all", "scenarios, comma-separated: burst, steady, instances, put-one, put-eight, put-tx, put-bulk, or all")
	flag.StringVar(&o.systems, "systems", "jobclock,river,river-tuned", "sides, comma-separated")
	flag.IntVar(&o.runs, "runs", 1, "runs of every scenario")
	flag.IntVar(&o.n, "n", 20000, "jobs of a burst and of a put scenario")
	flag.IntVar(&o.rate, "rate", 1000, "steady: jobs due per second")
	flag.DurationVar(&o.window, "duration", 10*time.Second, "steady: how long jobs come due")
	flag.DurationVar(&o.lead, "lead", 0, "steady: time from the setup's start to the first due time (0: estimated)")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "longest a firing scenario may take")
	flag.DurationVar(&o.firingWindow, "firing-window", 0, "jobclock's Config.FiringWindow (0: its default, DefaultFiringWindow; negative: NoFiringWindow)")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of each measured window to PREFIX.SCENARIO.SIDE.RUN.cpu")
	flag.StringVar(&o.trace, "trace", "", "write an execution trace (runtime/trace) of each measured window to PREFIX.SCENARIO.SIDE.RUN.trace")
	flag.StringVar(&o.memprofile, "memprofile", "", "write allocation profiles at the start and the end of each measured window to PREFIX.SCENARIO.SIDE.RUN.start.heap and .heap (compare them with pprof -base)")
	flag.Parse()
	if err := runTable(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "river:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	store, dsn, scenarios, systems string
	runs, n, rate                  int
	window, lead, timeout          time.Duration
	firingWindow                   time.Duration // jobclock's Config.FiringWindow
	cpuprofile, memprofile, trace  string
	progress                       io.Writer // nil: stderr
}

// selected returns the scenarios and systems the options name.
func (o options) selected() ([]scenario, []system, error) {
	var sc []scenario
	for _, name := range strings.Split(o.scenarios, ",") {
		found := false
		for _, s := range scenarios {
			if name == "all" && (!s.postgres || o.store == "postgres") || name == s.name {
				if s.postgres && o.store != "postgres" {
					return nil, nil, fmt.Errorf("-scenario %s needs -store postgres", s.name)
				}
				sc = append(sc, s)
				found = true
			}
		}
		if !found {
			return nil, nil, fmt.Errorf("-scenario: unknown scenario %q", name)
		}
	}
	var sys []system
	for _, name := range strings.Split(o.systems, ",") {
		if !slices.Contains(systems, system(name)) {
			return nil, nil, fmt.Errorf("-systems: unknown side %q (jobclock, river, river-tuned)", name)
		}
		sys = append(sys, system(name))
	}
	return sc, sys, nil
}

func runTable(ctx context.Context, o options, w io.Writer) error {
	sc, sys, err := o.selected()
	if err != nil {
		return err
	}
	switch {
	case o.runs < 1:
		return fmt.Errorf("-runs: %d, want at least 1", o.runs)
	case o.n < 10:
		return fmt.Errorf("-n: %d, want at least 10", o.n)
	case o.rate < 1 || o.window < time.Second/time.Duration(o.rate):
		return fmt.Errorf("-rate %d -duration %s: want at least one job", o.rate, o.window)
	case o.firingWindow > scheduler.DefaultClaimAhead:
		return fmt.Errorf("-firing-window %s: longer than jobclock's ClaimAhead (%s)", o.firingWindow, scheduler.DefaultClaimAhead)
	}
	progress := o.progress
	if progress == nil {
		progress = os.Stderr
	}
	dir, err := os.MkdirTemp("", "jobclock-river-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	e, err := newEnv(ctx, o.store, o.dsn, dir)
	if err != nil {
		return err
	}
	defer e.close()
	e.firingWindow = o.firingWindow
	c := config{n: o.n, rate: o.rate, window: o.window, lead: o.lead, timeout: o.timeout,
		cpuprofile: o.cpuprofile, memprofile: o.memprofile, trace: o.trace}
	got := map[system][]result{}
	for run := range o.runs {
		for _, s := range sc {
			// The sides take turns: each run starts with another one.
			for k := range sys {
				side := sys[(k+run)%len(sys)]
				if s.puts && side == sysRiverTuned {
					continue
				}
				c.label = fmt.Sprintf("%s.%d", o.store, run+1)
				start := time.Now()
				r, err := s.run(ctx, e, side, c)
				if err != nil {
					return fmt.Errorf("run %d, %s, %s: %w", run+1, s.name, side, err)
				}
				fmt.Fprintf(progress, "run %d %-9s %-11s %6.1fs %s\n", run+1, s.name, side, time.Since(start).Seconds(), r)
				got[side] = append(got[side], r)
			}
		}
	}
	fmt.Fprintf(w, "%s; %d run(s); jobclock: MaxConcurrency %d (its default), %s; River: MaxWorkers %d at its defaults, tuned: MaxWorkers %d, FetchCooldown %s, FetchPollInterval %s\n\n",
		e.settings(ctx), o.runs, scheduler.DefaultMaxConcurrency, firingWindowSetting(o.firingWindow), riverWorkers, riverTunedWorkers, riverTunedCooldown, riverTunedPoll)
	writeTable(w, o, sc, sys, got)
	return nil
}

// firingWindowSetting describes jobclock's Config.FiringWindow of -firing-window.
func firingWindowSetting(d time.Duration) string {
	switch {
	case d == 0:
		return fmt.Sprintf("FiringWindow %s (its default)", scheduler.DefaultFiringWindow)
	case d < 0:
		return "NoFiringWindow"
	}
	return "FiringWindow " + d.String()
}

func (r result) String() string {
	keys := make([]string, 0, len(r.v)+len(r.note))
	for k := range r.v {
		keys = append(keys, k)
	}
	for k := range r.note {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		if note, ok := r.note[k]; ok {
			fmt.Fprintf(&b, " %s=%q", k, note)
		} else {
			fmt.Fprintf(&b, " %s=%.4g", k, r.v[k])
		}
	}
	return strings.TrimSpace(b.String())
}

// row is one line of the table: a metric of one scenario.
type row struct {
	scenario string
	key      string
	label    string
}

func rows(o options) []row {
	n := fmtInt(o.n)
	return []row{
		{"burst", "burst.s", "burst of " + n + " due at one instant: until the last outcome is recorded, s"},
		{"burst", "burst.cpu", "same: process CPU per occurrence, µs"},
		{"burst", "burst.server", "same: server CPU per occurrence, µs"},
		{"burst", "burst.cs", "same: context switches of the process per occurrence"},
		{"burst", "burst.allocs", "same: heap allocations of the process per occurrence"},
		{"burst", "burst.bytes", "same: bytes allocated per occurrence"},
		{"steady", "steady.p50", fmt.Sprintf("steady %s/s for %s: start lateness p50, ms", fmtInt(o.rate), o.window)},
		{"steady", "steady.p99", "same: p99, ms"},
		{"steady", "steady.cpu", "same: process CPU per occurrence, µs"},
		{"steady", "steady.server", "same: server CPU per occurrence, µs"},
		{"steady", "steady.cs", "same: context switches of the process per occurrence"},
		{"steady", "steady.allocs", "same: heap allocations of the process per occurrence"},
		{"steady", "steady.bytes", "same: bytes allocated per occurrence"},
		{"instances", "instances.s", "burst of " + n + " drained by 3 processes: until the last outcome, s"},
		{"instances", "instances.cpu", "same: CPU of the 3 processes per occurrence, µs"},
		{"instances", "instances.server", "same: server CPU per occurrence, µs"},
		{"put-one", "put.one.s", "putting " + n + " one at a time from one goroutine (PutJob / Insert), s"},
		{"put-one", "put.one.cpu", "same: process CPU per put, µs"},
		{"put-one", "put.one.server", "same: server CPU per put, µs"},
		{"put-eight", "put.eight.s", "the same from 8 goroutines (jobclock: into one collection), s"},
		{"put-eight", "put.eight.cpu", "same: process CPU per put, µs"},
		{"put-eight", "put.eight.server", "same: server CPU per put, µs"},
		{"put-tx", "put.tx.s", "the same inside one host transaction (PutJobTx / InsertTx), with the commit, s"},
		{"put-tx", "put.tx.cpu", "same: process CPU per put, µs"},
		{"put-tx", "put.tx.server", "same: server CPU per put, µs"},
		{"put-tx", "put.tx.first", "same: first 1,000 puts, µs per put"},
		{"put-tx", "put.tx.last", "same: last 1,000 puts, µs per put"},
		{"put-tx", "put.tx.first.cpu", "same: process CPU per put, first 1,000, µs"},
		{"put-tx", "put.tx.last.cpu", "same: process CPU per put, last 1,000, µs"},
		{"put-tx", "put.tx.first.server", "same: server CPU per put, first 1,000, µs"},
		{"put-tx", "put.tx.last.server", "same: server CPU per put, last 1,000, µs"},
		{"put-tx", tenthsKey, "same: µs per put in each tenth of the puts, first to last (median of the runs)"},
		{"put-tx", tenthsKey + ".cpu", "same: process CPU per put in each tenth, µs (median of the runs)"},
		{"put-tx", tenthsKey + ".server", "same: server CPU per put in each tenth, µs (median of the runs)"},
		{"put-tx", tenthsKey + ".allocs", "same: heap allocations of the process per put in each tenth (median of the runs)"},
		{"put-bulk", "put.bulk.s", "in bulk (jobclock PutJobs / River InsertMany), s"},
		{"put-bulk", "put.bulk.server", "same: server CPU per put, µs"},
		{"put-bulk", "put.bulk-fast.s", "in bulk, River InsertManyFast (COPY on PostgreSQL; jobclock has one bulk put), s"},
	}
}

var columns = map[system]string{sysJobclock: "jobclock", sysRiver: "River (defaults)", sysRiverTuned: "River (tuned)"}

func writeTable(w io.Writer, o options, sc []scenario, sys []system, got map[system][]result) {
	fmt.Fprint(w, "| |")
	for _, s := range sys {
		fmt.Fprintf(w, " %s |", columns[s])
	}
	fmt.Fprint(w, "\n| --- |")
	for range sys {
		fmt.Fprint(w, " --- |")
	}
	fmt.Fprintln(w)
	for _, r := range rows(o) {
		if !slices.ContainsFunc(sc, func(s scenario) bool { return s.name == r.scenario }) {
			continue
		}
		fmt.Fprintf(w, "| %s |", r.label)
		for _, s := range sys {
			untuned := strings.HasPrefix(r.scenario, "put") && s == sysRiverTuned
			if suffix, ok := strings.CutPrefix(r.key, tenthsKey); ok {
				fmt.Fprintf(w, " %s |", tenthsCell(got[s], suffix, untuned))
			} else {
				fmt.Fprintf(w, " %s |", cell(got[s], r.key, untuned))
			}
		}
		fmt.Fprintln(w)
	}
}

// cell is the range of a metric over the runs.
func cell(rs []result, key string, untuned bool) string {
	if untuned {
		return "as at its defaults"
	}
	var vs []float64
	for _, r := range rs {
		if note, ok := r.note[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(key, ".s"), ".server"), ".cpu")]; ok {
			return note
		}
		if v, ok := r.v[key]; ok && !math.IsNaN(v) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return "–"
	}
	lo, hi := slices.Min(vs), slices.Max(vs)
	if fmtNum(lo) == fmtNum(hi) {
		return fmtNum(lo)
	}
	return fmtNum(lo) + "–" + fmtNum(hi)
}

// tenthsCell is the median over the runs of put-tx's figure of each tenth
// of its puts (tenthKey(t)+suffix), first to last.
func tenthsCell(rs []result, suffix string, untuned bool) string {
	if untuned {
		return "as at its defaults"
	}
	parts := make([]string, tenths)
	for t := range tenths {
		var vs []float64
		for _, r := range rs {
			if v, ok := r.v[tenthKey(t+1)+suffix]; ok && !math.IsNaN(v) {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			return "–"
		}
		slices.Sort(vs)
		m := vs[len(vs)/2]
		if len(vs)%2 == 0 {
			m = (vs[len(vs)/2-1] + m) / 2
		}
		parts[t] = fmtNum(m)
	}
	return strings.Join(parts, " · ")
}

// fmtNum prints three significant digits, at most two decimals.
func fmtNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmtInt(int(math.Round(v)))
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// fmtInt prints n with thousands separated by commas.
func fmtInt(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + fmtInt(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
