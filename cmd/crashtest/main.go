// Command crashtest checks that scheduler processes sharing one PostgreSQL
// database lose no occurrence and run none twice when one of them dies.
//
// It starts an HTTP receiver, creates a collection of jobs that fire every
// minute with start times spread across the minute, and runs three worker
// processes (this same binary, each a Scheduler over store/postgres with
// the built-in HTTP executor and, unless -lease says otherwise, every
// default of scheduler.Config). The receiver takes -delay to answer, and
// -long-delay for every seventh job, longer than the default lease, so
// that those attempts live on lease extensions. Partway through it kills
// one worker with SIGKILL, lets the others run on, stops them, and then
// checks the receiver's log and the stored history:
//
//   - every occurrence due during the run reached the receiver and has
//     exactly one Completed history entry;
//   - no occurrence reached the receiver from two instances, except those
//     the killed instance had in flight when it died, which another
//     instance ran again after the lease ran out (they are listed, with
//     their execution tags);
//   - every history entry matches a request the receiver saw (same job,
//     expected time and execution tag) from a surviving instance;
//   - every occurrence first reached the receiver at most -max-late after
//     its expected time (the takeover bound), and the occurrences run
//     again after the kill did so at most -max-late after the kill.
//
// Usage:
//
//	eval "$(bash scripts/start-postgres.sh /tmp/pg)"
//	go run ./cmd/crashtest -jobs 600 -duration 150s -kill-after 70s
//
// The kill happens at the first moment after -kill-after when the victim
// has a request in flight (the receiver answers after -delay). It needs
// JOBCLOCK_POSTGRES_DSN (or -dsn) and exits 1 when a check fails; -log
// writes every request the receiver saw as JSON lines.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/postgres"
)

// Environment of a worker process.
const (
	envWorker = "JOBCLOCK_CRASHTEST_WORKER" // the instance ID
	envSchema = "JOBCLOCK_CRASHTEST_SCHEMA"
	envDSN    = "JOBCLOCK_POSTGRES_DSN"
	// headerInstance tells the receiver which instance sent a request.
	headerInstance = "x-crashtest-instance"
	collection     = "crash"
)

// Config is one run of the crash test.
type Config struct {
	DSN       string        // PostgreSQL address
	Jobs      int           // jobs, each firing every minute
	Duration  time.Duration // from the first occurrence to the stop
	KillAfter time.Duration // from the first occurrence to the SIGKILL
	Workers   int           // worker processes
	Lease     time.Duration // the workers' LeaseDuration; 0 for the default
	Delay     time.Duration // how long the receiver takes to answer
	LongDelay time.Duration // how long it takes for every seventh job; 0 for Delay
	MaxLate   time.Duration // the most an occurrence may start late, or a takeover take; 0 for no limit
	Exe       string        // the binary that runs a worker
	Log       string        // file for the receiver's log (JSON lines); empty for none
	// StrictTags fails the run when an occurrence run again after the
	// kill has a new execution tag rather than the one of the attempt
	// that was in flight.
	StrictTags bool
	Out        io.Writer // the report
}

func main() {
	if id := os.Getenv(envWorker); id != "" {
		if err := worker(id, os.Getenv(envDSN), os.Getenv(envSchema)); err != nil {
			fmt.Fprintln(os.Stderr, "crashtest worker:", err)
			os.Exit(1)
		}
		return
	}
	cfg := Config{Out: os.Stdout}
	flag.StringVar(&cfg.DSN, "dsn", os.Getenv(envDSN), "PostgreSQL address (default $JOBCLOCK_POSTGRES_DSN)")
	flag.IntVar(&cfg.Jobs, "jobs", 600, "number of jobs, each firing every minute")
	flag.DurationVar(&cfg.Duration, "duration", 150*time.Second, "run time from the first occurrence")
	flag.DurationVar(&cfg.KillAfter, "kill-after", 70*time.Second, "when to kill one worker, from the first occurrence")
	flag.IntVar(&cfg.Workers, "workers", 3, "worker processes")
	flag.DurationVar(&cfg.Lease, "lease", 0, "the workers' lease duration (default: scheduler.DefaultLeaseDuration)")
	flag.DurationVar(&cfg.Delay, "delay", 2*time.Second, "how long the receiver takes to answer")
	flag.DurationVar(&cfg.LongDelay, "long-delay", 25*time.Second, "how long the receiver takes to answer every seventh job")
	flag.DurationVar(&cfg.MaxLate, "max-late", 15*time.Second, "fail when an occurrence starts later than this, or a takeover takes longer (0: no limit)")
	flag.BoolVar(&cfg.StrictTags, "strict-tags", false, "fail when an occurrence run again after the kill has a new execution tag")
	flag.StringVar(&cfg.Log, "log", "", "write the receiver's log to this file (JSON lines)")
	flag.Parse()
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "crashtest:", err)
		os.Exit(2)
	}
	cfg.Exe = exe
	if err := Run(context.Background(), cfg); err != nil {
		fmt.Fprintln(os.Stderr, "crashtest:", err)
		os.Exit(1)
	}
}

// worker runs one scheduler until SIGTERM.
func worker(id, dsn, schema string) error {
	ctx := context.Background()
	st, err := postgres.Open(ctx, dsn, &postgres.Options{Schema: schema})
	if err != nil {
		return err
	}
	defer st.Close()
	lease, _ := time.ParseDuration(os.Getenv("JOBCLOCK_CRASHTEST_LEASE")) // 0: the default
	hx := httpaction.New(&httpaction.Options{Timeout: 30 * time.Second})
	reg := &action.Registry{}
	reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		// Name the instance in a header; the real executor does the rest.
		r := *req
		a := *req.Action
		hr := *a.Request
		hr.Headers = map[string]string{headerInstance: id}
		for k, v := range req.Action.Request.Headers {
			hr.Headers[k] = v
		}
		a.Request = &hr
		r.Action = &a
		return hx.Execute(ctx, &r)
	}))
	s, err := scheduler.New(st, &scheduler.Config{
		InstanceID: id, Executors: reg, LeaseDuration: lease,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("instance", id),
	})
	if err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	if err := s.Start(ctx); err != nil {
		return err
	}
	<-sig
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return s.Stop(sctx)
}

// hit is one request the receiver saw.
type hit struct {
	Job      string    `json:"job"`
	Expected time.Time `json:"expected"`
	Tag      string    `json:"tag"`
	Instance string    `json:"instance"`
	At       time.Time `json:"at"`
}

type occurrence struct {
	job      string
	expected time.Time
}

func (o occurrence) String() string { return o.job + "@" + o.expected.Format("15:04:05") }

// receiver logs every request.
type receiver struct {
	delay    time.Duration
	long     map[string]time.Duration // job ID: its delay, when not delay
	mu       sync.Mutex
	hits     []hit
	inFlight map[string]int // requests being answered, per instance
	log      io.Writer      // JSON lines of the hits, or nil
}

// busy reports whether the instance has a request in flight.
func (rv *receiver) busy(instance string) bool {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	return rv.inFlight[instance] > 0
}

func (rv *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	exp, err := time.Parse(time.RFC3339, r.Header.Get(httpaction.HeaderExpectedExecutionTime))
	h := hit{Job: r.Header.Get(httpaction.HeaderJobID), Expected: exp.UTC(), Tag: r.Header.Get(httpaction.HeaderExecutionTag),
		Instance: r.Header.Get(headerInstance), At: time.Now()}
	rv.mu.Lock()
	rv.hits = append(rv.hits, h)
	rv.inFlight[h.Instance]++
	if rv.log != nil {
		b, _ := json.Marshal(h)
		rv.log.Write(append(b, '\n'))
	}
	rv.mu.Unlock()
	defer func() {
		rv.mu.Lock()
		rv.inFlight[h.Instance]--
		rv.mu.Unlock()
	}()
	if err != nil {
		http.Error(w, "bad expected time: "+err.Error(), http.StatusBadRequest)
		return
	}
	time.Sleep(rv.delayOf(h.Job))
	io.WriteString(w, "ok")
}

// delayOf returns how long the receiver takes to answer the job's requests.
func (rv *receiver) delayOf(job string) time.Duration {
	if d, ok := rv.long[job]; ok {
		return d
	}
	return rv.delay
}

// Run runs the crash test and writes its report to cfg.Out; it returns an
// error when a check fails.
func Run(ctx context.Context, cfg Config) error {
	if cfg.DSN == "" {
		return errors.New("no PostgreSQL address: set JOBCLOCK_POSTGRES_DSN or -dsn (scripts/start-postgres.sh starts one)")
	}
	if cfg.Jobs < 1 || cfg.Jobs > scheduler.P20PremiumMaxJobCount || cfg.Workers < 2 || cfg.KillAfter >= cfg.Duration {
		return fmt.Errorf("bad configuration: jobs %d (1..%d), workers %d (>= 2), kill-after %v (< duration %v)",
			cfg.Jobs, scheduler.P20PremiumMaxJobCount, cfg.Workers, cfg.KillAfter, cfg.Duration)
	}
	out := cfg.Out
	schema := fmt.Sprintf("crashtest_%d", time.Now().UnixNano())
	st, err := postgres.Open(ctx, cfg.DSN, &postgres.Options{Schema: schema})
	if err != nil {
		return err
	}
	defer dropSchema(cfg.DSN, schema)
	defer st.Close()

	rv := &receiver{delay: cfg.Delay, long: make(map[string]time.Duration), inFlight: make(map[string]int)}
	if cfg.Log != "" {
		f, err := os.Create(cfg.Log)
		if err != nil {
			return err
		}
		defer f.Close()
		rv.log = f
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rv}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/hit"

	admin, err := scheduler.New(st, &scheduler.Config{InstanceID: "admin", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	coll := &scheduler.JobCollection{}
	coll.Properties.SKU = &scheduler.SKU{Name: scheduler.SKUP20Premium}
	if _, err := admin.PutCollection(ctx, collection, coll, nil); err != nil {
		return err
	}
	first := time.Now().Truncate(time.Second).Add(10 * time.Second)
	starts := make(map[string]time.Time, cfg.Jobs)
	for i := range cfg.Jobs {
		name := fmt.Sprintf("job-%04d", i)
		start := first.Add(time.Duration(i%60) * time.Second)
		def := &scheduler.Job{StartTime: &start,
			Action:     action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: url, Method: "POST", Body: name}},
			Recurrence: &recurrence.Recurrence{Frequency: recurrence.Minute, Interval: 1}}
		if _, err := admin.PutJob(ctx, collection, name, def, nil); err != nil {
			return fmt.Errorf("create %s: %w", name, err)
		}
		starts[collection+"/"+name] = start.UTC()
		if cfg.LongDelay > 0 && i%7 == 0 {
			rv.long[collection+"/"+name] = cfg.LongDelay
		}
	}
	lease := cfg.Lease
	if lease == 0 {
		lease = scheduler.DefaultLeaseDuration
	}
	fmt.Fprintf(out, "crashtest: %d jobs every minute from %s, %d workers (lease %s), receiver %s answering in %s (%d jobs in %s), schema %s\n",
		cfg.Jobs, first.Format("15:04:05"), cfg.Workers, lease, url, cfg.Delay, len(rv.long), cfg.LongDelay, schema)

	procs := make([]*exec.Cmd, cfg.Workers)
	for i := range procs {
		c := exec.Command(cfg.Exe)
		c.Env = append(os.Environ(), envWorker+"="+fmt.Sprintf("w%d", i), envDSN+"="+cfg.DSN, envSchema+"="+schema)
		if cfg.Lease != 0 {
			c.Env = append(c.Env, "JOBCLOCK_CRASHTEST_LEASE="+cfg.Lease.String())
		}
		c.Stdout, c.Stderr = os.Stderr, os.Stderr
		if err := c.Start(); err != nil {
			return err
		}
		procs[i] = c
	}
	stopAll := func() {
		for _, p := range procs {
			if p.ProcessState == nil {
				p.Process.Kill()
				p.Wait()
			}
		}
	}
	defer stopAll()

	// Kill the victim at a moment when it has a request in flight, so
	// that the takeover of unfinished work is exercised.
	victim := cfg.Workers / 2
	time.Sleep(time.Until(first.Add(cfg.KillAfter)))
	for deadline := time.Now().Add(30 * time.Second); !rv.busy(fmt.Sprintf("w%d", victim)) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	killedAt := time.Now()
	if err := procs[victim].Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	procs[victim].Wait()
	fmt.Fprintf(out, "crashtest: killed w%d (pid %d) at %s\n", victim, procs[victim].Process.Pid, killedAt.Format("15:04:05.000"))

	time.Sleep(time.Until(first.Add(cfg.Duration)))
	stopAt := time.Now()
	for i, p := range procs {
		if i != victim {
			p.Process.Signal(syscall.SIGTERM)
		}
	}
	for i, p := range procs {
		if i == victim {
			continue
		}
		done := make(chan error, 1)
		go func() { done <- p.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("worker w%d: %w", i, err)
			}
		case <-time.After(40 * time.Second):
			return fmt.Errorf("worker w%d did not stop within 40s of SIGTERM", i)
		}
	}
	srv.Close()
	rv.mu.Lock()
	hits := slices.Clone(rv.hits)
	rv.mu.Unlock()

	// Occurrences that had to run: due no later than 10s before the stop
	// (time to be claimed, run and recorded).
	horizon := stopAt.Add(-10 * time.Second)
	var want []occurrence
	for id, start := range starts {
		for t := start; !t.After(horizon); t = t.Add(time.Minute) {
			want = append(want, occurrence{id, t})
		}
	}
	byOcc := make(map[occurrence][]hit)
	perInstance := make(map[string]int)
	for _, h := range hits {
		byOcc[occurrence{h.Job, h.Expected}] = append(byOcc[occurrence{h.Job, h.Expected}], h)
		perInstance[h.Instance]++
	}
	history := make(map[occurrence][]scheduler.HistoryEntry)
	for id := range starts {
		name := strings.TrimPrefix(id, collection+"/")
		entries, err := st.ListHistory(ctx, collection, name, scheduler.HistoryFilter{})
		if err != nil {
			return err
		}
		for _, e := range entries {
			o := occurrence{id, e.ExpectedExecutionTime.UTC()}
			history[o] = append(history[o], e)
		}
	}

	var problems []string
	killed := fmt.Sprintf("w%d", victim)
	var missing, inFlight []string
	sharedTags := 0
	var takeovers []time.Duration // from the kill to each run again
	var worst occurrence
	worstLate := time.Duration(-1 << 63)
	for _, o := range want {
		hs := byOcc[o]
		if len(hs) > 0 {
			late := hs[0].At.Sub(o.expected)
			for _, h := range hs[1:] {
				late = min(late, h.At.Sub(o.expected))
			}
			if late > worstLate {
				worst, worstLate = o, late
			}
		}
		var completed []scheduler.HistoryEntry
		for _, e := range history[o] {
			if e.Status == scheduler.StatusCompleted {
				completed = append(completed, e)
			}
		}
		switch {
		case len(hs) == 0:
			missing = append(missing, o.String()+" (never reached the receiver)")
			continue
		case len(completed) != 1:
			problems = append(problems, fmt.Sprintf("%s has %d Completed history entries, want 1: %+v", o, len(completed), history[o]))
			continue
		}
		if len(hs) > 1 {
			// Allowed only for an attempt the killed instance had in
			// flight, run again by another instance. Every request of
			// the killed instance was sent before the kill (it is not
			// started again), though one may reach the receiver, and get
			// its clock reading, just after killedAt.
			var dead, alive []hit
			for _, h := range hs {
				if h.Instance == killed {
					dead = append(dead, h)
				} else {
					alive = append(alive, h)
				}
			}
			if len(dead) == 1 && len(alive) == 1 && killedAt.Sub(dead[0].At) < rv.delayOf(o.job)+time.Second {
				takeovers = append(takeovers, alive[0].At.Sub(killedAt))
				same := "different tags"
				if dead[0].Tag == alive[0].Tag {
					same = "same tag"
					sharedTags++
				} else if cfg.StrictTags {
					problems = append(problems, fmt.Sprintf("%s was run again with a new execution tag (%s, then %s)", o, dead[0].Tag, alive[0].Tag))
				}
				inFlight = append(inFlight, fmt.Sprintf("%s: %s at %s (tag %s), again by %s at %s (tag %s): %s", o,
					dead[0].Instance, dead[0].At.Format("15:04:05.000"), dead[0].Tag,
					alive[0].Instance, alive[0].At.Format("15:04:05.000"), alive[0].Tag, same))
			} else {
				var desc []string
				for _, h := range hs {
					desc = append(desc, fmt.Sprintf("%s at %s tag %s", h.Instance, h.At.Format("15:04:05.000"), h.Tag))
				}
				problems = append(problems, fmt.Sprintf("%s ran %d times: %s", o, len(hs), strings.Join(desc, "; ")))
			}
		}
		// The recorded attempt is one the receiver saw from a survivor
		// (or from the victim before it died, if it recorded in time).
		ok := false
		for _, h := range hs {
			ok = ok || h.Tag == completed[0].ExecutionTag
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: history tag %s matches no request the receiver saw", o, completed[0].ExecutionTag))
		}
	}
	for o, hs := range byOcc {
		start, ok := starts[o.job]
		if !ok || o.expected.Before(start) || o.expected.Sub(start)%time.Minute != 0 {
			problems = append(problems, fmt.Sprintf("%s: %d requests for an occurrence that is not on the schedule", o, len(hs)))
		}
	}
	sort.Strings(missing)
	sort.Strings(inFlight)
	sort.Strings(problems)

	var inst []string
	for k, n := range perInstance {
		inst = append(inst, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(inst)
	fmt.Fprintf(out, "crashtest: %d occurrences due until %s; receiver saw %d requests (%s)\n",
		len(want), horizon.Format("15:04:05"), len(hits), strings.Join(inst, ", "))
	fmt.Fprintf(out, "crashtest: %d in flight at the kill and run again after the lease ended (%d with the same execution tag)\n", len(inFlight), sharedTags)
	slices.Sort(takeovers)
	takeover := time.Duration(0)
	if len(takeovers) > 0 {
		takeover = takeovers[len(takeovers)-1]
		fmt.Fprintf(out, "crashtest: takeover: in-flight occurrences ran again %s to %s after the kill\n",
			takeovers[0].Round(time.Millisecond), takeover.Round(time.Millisecond))
	}
	fmt.Fprintf(out, "crashtest: latest first start: %s, %s after its expected time\n", worst, worstLate.Round(time.Millisecond))
	if cfg.MaxLate > 0 {
		if takeover > cfg.MaxLate {
			problems = append(problems, fmt.Sprintf("takeover took %s, more than %s", takeover.Round(time.Millisecond), cfg.MaxLate))
		}
		if worstLate > cfg.MaxLate {
			problems = append(problems, fmt.Sprintf("%s first started %s late, more than %s", worst, worstLate.Round(time.Millisecond), cfg.MaxLate))
		}
	}
	for _, s := range inFlight {
		fmt.Fprintln(out, "  in flight:", s)
	}
	for _, s := range missing {
		fmt.Fprintln(out, "  MISSING:", s)
	}
	for _, s := range problems {
		fmt.Fprintln(out, "  PROBLEM:", s)
	}
	if len(missing)+len(problems) > 0 {
		return fmt.Errorf("%d occurrences missing, %d other problems", len(missing), len(problems))
	}
	fmt.Fprintln(out, "crashtest: OK: no occurrence missing, none run twice except those in flight at the kill")
	b, _ := json.Marshal(map[string]any{"occurrences": len(want), "requests": len(hits), "in_flight": len(inFlight), "shared_tags": sharedTags,
		"takeover_seconds": takeover.Seconds(), "worst_lateness_seconds": worstLate.Seconds()})
	fmt.Fprintf(out, "crashtest: %s\n", b)
	return nil
}

func dropSchema(dsn, schema string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return
	}
	defer conn.Close(ctx)
	conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
}
