package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

func TestMain(m *testing.M) {
	// The instances scenario starts this binary as its instances.
	if spec := os.Getenv(childEnv); spec != "" {
		if err := runChild(spec); err != nil {
			fmt.Fprintln(os.Stderr, "river instance:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestTallyFailsLoudly(t *testing.T) {
	at := time.Now()
	allOnce := func(tl *tally) {
		for i := range 3 {
			tl.run(i, at)
			tl.record(i, at)
		}
	}
	tests := []struct {
		name string
		do   func(*tally)
		want string
	}{
		{"all once", allOnce, ""},
		{"ran twice", func(tl *tally) {
			allOnce(tl)
			tl.run(1, at)
		}, "job 1 ran twice"},
		{"recorded twice", func(tl *tally) {
			allOnce(tl)
			tl.record(2, at)
		}, "the outcome of job 2 was recorded twice"},
		{"never ran", func(tl *tally) {
			tl.run(0, at)
			tl.record(0, at)
			tl.record(1, at)
			tl.record(2, at)
		}, "2 of 3 jobs never ran"},
		{"never recorded", func(tl *tally) {
			for i := range 3 {
				tl.run(i, at)
			}
			tl.record(0, at)
		}, "2 of 3 outcomes never recorded"},
		{"unknown job", func(tl *tally) {
			allOnce(tl)
			tl.record(3, at)
		}, "record: job index 3 out of range [0,3)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTally(3)
			tc.do(tl)
			err := tl.check()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("check() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("check() = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

func TestArgIndex(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{`{"i":0}`, 0, true},
		{`{"i": 12345}`, 12345, true},
		{`{"i":7} `, 7, true},
		{`{"i":}`, 0, false},
		{`{"i":-1}`, 0, false},
		{`{"j":1}`, 0, false},
		{`{"i":1,"j":2}`, 0, false},
	}
	for _, tc := range tests {
		got, ok := argIndex([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("argIndex(%s) = %d, %v, want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestScenarios runs every scenario on every side at a small size, so that
// the harness keeps working: each side's jobs must all run and be recorded
// exactly once (the scenarios fail otherwise), and every figure of the
// table must be measured.
func TestScenarios(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			dsn := ""
			if store == "postgres" {
				dsn = os.Getenv("JOBCLOCK_POSTGRES_DSN")
				if dsn == "" {
					const msg = `JOBCLOCK_POSTGRES_DSN is not set; start PostgreSQL with eval "$(bash scripts/start-postgres.sh DIR)"`
					if os.Getenv("CI") == "true" {
						t.Fatal(msg)
					}
					t.Skip(msg)
				}
			}
			ctx := context.Background()
			e, err := newEnv(ctx, store, dsn, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer e.close()
			// No lead: steady estimates it from how fast the side's last
			// setup put its jobs (the burst's, run before it), and tries
			// again with its own setup's rate when the setup ended late,
			// as a run without -lead does: on a loaded machine the puts
			// are slower, and a fixed lead fails the run.
			c := config{n: 200, rate: 200, window: time.Second, timeout: time.Minute, label: "test"}
			for _, s := range scenarios {
				if s.postgres && store != "postgres" {
					continue
				}
				for _, sys := range systems {
					if s.puts && sys == sysRiverTuned {
						continue
					}
					t.Run(s.name+"/"+string(sys), func(t *testing.T) {
						r, err := s.run(ctx, e, sys, c)
						if err != nil {
							t.Fatal(err)
						}
						checkResult(t, e, s.name, sys, r)
					})
				}
			}
		})
	}
}

// checkResult checks that r holds every figure of its scenario's rows.
func checkResult(t *testing.T, e *env, scenario string, sys system, r result) {
	t.Helper()
	for _, row := range rows(options{n: 200, rate: 200, window: time.Second}) {
		if row.scenario != scenario {
			continue
		}
		keys := []string{row.key}
		if suffix, ok := strings.CutPrefix(row.key, tenthsKey); ok {
			keys = keys[:0]
			for k := range tenths {
				keys = append(keys, tenthKey(k+1)+suffix)
			}
		}
		for _, key := range keys {
			checkFigure(t, e, sys, r, key)
		}
	}
	if p50, p99 := r.v["steady.p50"], r.v["steady.p99"]; p50 > p99 {
		t.Errorf("lateness p50 %v > p99 %v", p50, p99)
	}
}

// checkFigure checks that r holds figure key.
func checkFigure(t *testing.T, e *env, sys system, r result, key string) {
	t.Helper()
	note, noted := r.note[strings.TrimSuffix(strings.TrimSuffix(key, ".s"), ".server")]
	v, ok := r.v[key]
	switch {
	case sys == sysJobclock && strings.HasPrefix(key, "put.bulk-fast"):
		if !noted || note != "–" {
			t.Errorf("%s: %v (note %q), want the note \"–\"", key, v, note)
		}
	case !ok:
		t.Errorf("%s: not measured", key)
	case strings.HasSuffix(key, ".server") && e.meter.server == nil:
		if !math.IsNaN(v) {
			t.Errorf("%s = %v without a server, want NaN", key, v)
		}
	case math.IsNaN(v) || math.IsInf(v, 0) || v < 0:
		t.Errorf("%s = %v, want a figure", key, v)
	case v == 0 && !strings.HasSuffix(key, ".server"):
		// The server's CPU is read in ticks of 10 ms: 0 is possible
		// at this size. Nothing else takes no time.
		t.Errorf("%s = 0, want more", key)
	}
}

// TestTable runs the command's table once at a small size and checks that
// the table holds a row per figure and a column per side.
func TestTable(t *testing.T) {
	var out, progress bytes.Buffer
	o := options{store: "sqlite", scenarios: "burst,put-bulk", systems: "jobclock,river,river-tuned",
		runs: 2, n: 100, rate: 100, window: time.Second, timeout: time.Minute, firingWindow: 5 * time.Millisecond, progress: &progress}
	if err := runTable(context.Background(), o, &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"| | jobclock | River (defaults) | River (tuned) |",
		"| burst of 100 due at one instant: until the last outcome is recorded, s |",
		"| in bulk (jobclock PutJobs / River InsertMany), s | ",
		"| in bulk, River InsertManyFast (COPY on PostgreSQL; jobclock has one bulk put), s | – |",
		"SQLite, WAL, synchronous=FULL",
		"jobclock: MaxConcurrency 100 (its default), FiringWindow 5ms;",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(progress.String(), "run 2 "); n != 5 {
		t.Errorf("run 2 has %d lines of progress, want 5 (burst on 3 sides, put-bulk on 2):\n%s", n, progress.String())
	}
}

// TestTenthsCell checks that a cell of the tenths holds each tenth's
// median over the runs, first to last.
func TestTenthsCell(t *testing.T) {
	runs := make([]result, 3)
	for i := range runs {
		runs[i] = newResult()
		for k := range tenths {
			// Run i's tenth k: 10*(k+1) + i, and run 2 twice that.
			v := float64(10*(k+1) + i)
			if i == 2 {
				v *= 2
			}
			runs[i].v[tenthKey(k+1)+".cpu"] = v
		}
	}
	want := "11.0 · 21.0 · 31.0 · 41.0 · 51.0 · 61.0 · 71.0 · 81.0 · 91.0 · 101"
	if got := tenthsCell(runs, ".cpu", false); got != want {
		t.Errorf("tenthsCell(3 runs) = %q, want %q", got, want)
	}
	if got, want := tenthsCell(runs[:2], ".cpu", false), "10.5 · 20.5 · 30.5 · 40.5 · 50.5 · 60.5 · 70.5 · 80.5 · 90.5 · 101"; got != want {
		t.Errorf("tenthsCell(2 runs) = %q, want %q", got, want)
	}
	if got := tenthsCell(runs, ".server", false); got != "–" {
		t.Errorf("tenthsCell of a figure not measured = %q, want \"–\"", got)
	}
}

func TestOptionErrors(t *testing.T) {
	tests := []struct {
		o    options
		want string
	}{
		{options{store: "sqlite", scenarios: "instances", systems: "jobclock"}, "-scenario instances needs -store postgres"},
		{options{store: "sqlite", scenarios: "bursts", systems: "jobclock"}, `-scenario: unknown scenario "bursts"`},
		{options{store: "sqlite", scenarios: "burst", systems: "rivers"}, `-systems: unknown side "rivers"`},
		{options{store: "sqlite", scenarios: "burst", systems: "jobclock", runs: 0, n: 100, rate: 1, window: time.Second}, "-runs: 0"},
		{options{store: "mysql", scenarios: "burst", systems: "jobclock", runs: 1, n: 100, rate: 1, window: time.Second}, `-store: "mysql"`},
		{options{store: "sqlite", scenarios: "steady", systems: "jobclock", runs: 1, n: 100, rate: 1, window: time.Second, firingWindow: scheduler.DefaultClaimAhead + time.Millisecond},
			"-firing-window " + (scheduler.DefaultClaimAhead + time.Millisecond).String() + ": longer than jobclock's ClaimAhead (" + scheduler.DefaultClaimAhead.String() + ")"},
	}
	for _, tc := range tests {
		err := runTable(context.Background(), tc.o, new(bytes.Buffer))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("runTable(%+v) = %v, want an error saying %q", tc.o, err, tc.want)
		}
	}
}

var sink []byte

func TestSampleCountsAllocations(t *testing.T) {
	var m meter
	a := m.sample()
	sink = make([]byte, 1<<20)
	b := m.sample()
	allocs, bytes := allocsPerOp(a, b, 1)
	if allocs < 1 || bytes < 1<<20 {
		t.Errorf("allocsPerOp after a 1 MiB allocation = %v objects, %v bytes; want at least 1 and 1 MiB", allocs, bytes)
	}
}

func TestSampleCountsSwitches(t *testing.T) {
	var m meter
	a := m.sample()
	// A thread that waits for a timer with nothing else to run blocks in
	// the kernel: a context switch each time.
	for range 20 {
		time.Sleep(time.Millisecond)
	}
	b := m.sample()
	if cs := switchesPerOp(a, b, 20); cs < 1 {
		t.Errorf("switchesPerOp after 20 sleeps of 1 ms = %v a sleep, want at least 1", cs)
	}
}

// TestStoreFailureEndsTheRun: when every claim of the jobclock side fails,
// the run fails at once with the engine's error, not after its timeout.
func TestStoreFailureEndsTheRun(t *testing.T) {
	ctx := context.Background()
	e, err := newEnv(ctx, "sqlite", "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	tl := newTally(10)
	s, err := newSide(ctx, e, sysJobclock, tl, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	due := make([]time.Time, 10)
	for i := range due {
		due[i] = time.Now()
	}
	if err := s.put(ctx, putSetup, due, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.(*jobclockSide).db.ExecContext(ctx, "ALTER TABLE jobs RENAME TO jobs_gone"); err != nil {
		t.Fatal(err)
	}
	if err := s.start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.stop(ctx)
	err = errors.Join(tl.wait(30*time.Second), tl.noted())
	if err == nil || !strings.Contains(err.Error(), "when the run failed") || !strings.Contains(err.Error(), "jobclock logged") {
		t.Fatalf("wait: %v, want the run failed with what jobclock logged", err)
	}
}

// TestInstanceFailurePassedOn: a problem an instance of the instances
// scenario notes reaches the process that counts, and ends its wait.
func TestInstanceFailurePassedOn(t *testing.T) {
	var buf bytes.Buffer
	inst := newTally(1)
	inst.out = newLineOut(&buf)
	inst.fail(errors.New("job 0 ran\ntwice"))
	inst.out.close()
	counts := newTally(1)
	p := &child{cmd: &exec.Cmd{Process: &os.Process{Pid: 7}}}
	for l := range strings.Lines(buf.String()) {
		p.line(strings.TrimSuffix(l, "\n"), counts)
	}
	err := errors.Join(counts.wait(time.Second), counts.noted())
	if err == nil || !strings.Contains(err.Error(), "instance 7: error job 0 ran twice") {
		t.Fatalf("wait: %v, want the instance's problem", err)
	}
}
