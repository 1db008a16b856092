package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/store/postgres"
)

const runUsage = `usage: jobclock run [flags] FILE...

Loads job definitions into an embedded scheduler (in memory, or kept in
the database given by -db or -postgres), runs them, and prints each
history entry as one JSON line on stdout as it happens, and a summary of
each job on stderr at the end. It exits with status 0 when every job has
completed or faulted, or on Ctrl-C / SIGTERM after the attempts in flight
have ended (a recurring job without count or endTime, or a Disabled one,
runs until then); a second Ctrl-C / SIGTERM cancels those attempts, and run
exits 1 once their outcomes (failed attempts) are stored, at most -lease
later; 1 when a file cannot be loaded, and then none is: every
file is checked before any is put, and into a database (-db, -postgres)
all are written in one transaction, which a put that only the database
refuses (a collection's maxJobCount below the jobs it holds already) or
a failure of the database rolls back; 2 on a usage error. In that
transaction a file cannot make a stored collection's maxRecurrence
stricter, or change a stored calendar (jobclock serve's API can).

With -db or -postgres the scheduler runs every job of the database, not
only those of the files: a job that an earlier file put, and that these
files no longer hold, runs too; its history is printed, and the summary
lists it after the files' jobs, "not in the files". run deletes no job
(jobclock serve's API does). It still exits as above, once the files' own
jobs are final: the other jobs run meanwhile (their missed occurrences as
-misfire says), their attempts in flight end, and they go on from there
at the next run or serve on the database. A file of one one-time job
exits once that job has run, whatever else the database holds.

Each FILE is either one job definition (the "properties" object of an
Azure Scheduler job, or its ARM envelope), put as job BASENAME in the
collection "default" (made as the library's Schedule makes it, when the
store holds none: the Standard plan's 50 jobs, and a job as often as
every second; a stored "default", whatever its plan and quota, is left as
it is), or a collection file:

  {
    "name": "demo",                       // optional; default BASENAME
    "collection": {"properties": {"sku": {"name": "Standard"}}},  // optional:
        // without it the collection is made with the defaults when the
        // store holds none, and a stored one is left as it is
    "jobs": {
      "hello": {"action": {"type": "Http", "request": {"uri": "...", "method": "GET"}}},
      "nightly": {"tags": {"team": "ops"}, "properties": {...}},   // with labels
      ...
    },
    "calendars": {                        // optional: exclusion calendars
      "holidays": {"properties": {"dates": ["2026-12-25"]}}
    }
  }

A job given as its ARM envelope may carry "tags", its labels (at most 15;
names of 1 to 512 characters, values of at most 256).

Comments and trailing commas are allowed. Names must start with a letter and
hold only letters, digits, '-' and '_'.

` + keyUsage + `
` + observeUsage + `
Flags:
`

// runCmd implements "jobclock run". It returns the process exit status.
func runCmd(args []string) int {
	ctx, again, stop := notifyShutdown()
	defer stop()
	return runScheduler(ctx, again, args, os.Stdout, os.Stderr)
}

// runScheduler is runCmd without the signal handling: it stops when ctx
// ends, and cancels the attempts it then waits for when a signal arrives
// on again (nil: never).
func runScheduler(ctx context.Context, again <-chan os.Signal, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("jobclock run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	minRetry := addMinRetryFlag(fs)
	history := fs.Bool("history", true, "print each history entry as a JSON line on stdout (-history=false: only the summary)")
	echo := fs.String("echo", "", "start a local HTTP receiver on `ADDR` (such as 127.0.0.1:8089) for jobs to call:\n"+
		"/status/NNN answers with status NNN, any other path with 200 and a short text")
	lease := addLeaseFlag(fs)
	misfire := fs.String("misfire", string(scheduler.MisfireRunOnce), "misfire policy: runOnce, skip or runAll")
	verbose := fs.Bool("v", false, "log the scheduler's debug messages on stderr")
	dbPath := fs.String("db", "", "keep jobs and history in the SQLite database `file` (created when missing); default: in memory")
	dsn := fs.String("postgres", "", "keep jobs and history in the PostgreSQL database at `DSN`")
	schema := fs.String("schema", postgres.DefaultSchema, "PostgreSQL `schema` for the tables, created when missing (with -postgres)")
	keys := addKeyFlags(fs)
	observe := addObserveFlags(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, runUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *dbPath != "" && *dsn != "" {
		fmt.Fprintln(stderr, "jobclock run: -db and -postgres cannot be used together")
		return 2
	}
	if err := checkLease(*lease); err != nil {
		fmt.Fprintf(stderr, "jobclock run: %v\n", err)
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "jobclock run: no job files given")
		fs.Usage()
		return 2
	}
	if err := observe.check(); err != nil {
		fmt.Fprintf(stderr, "jobclock run: %v\n", err)
		return 2
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	if *echo != "" {
		srv, err := startEcho(*echo, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "jobclock run: -echo %s: %v\n", *echo, err)
			return 1
		}
		defer srv.Close()
	}

	var out sync.Mutex
	ran := map[jobKey]bool{} // under out: the jobs that wrote history
	events := make(chan struct{}, 1)
	enc := json.NewEncoder(stdout)
	cfg := &scheduler.Config{
		Logger:           logger,
		MinRetryInterval: *minRetry,
		LeaseDuration:    *lease,
		Misfire:          scheduler.MisfirePolicy(*misfire),
		OnHistory: func(h scheduler.HistoryEntry) {
			out.Lock()
			ran[jobKey{h.Collection, h.Job}] = true
			if *history {
				enc.Encode(h)
			}
			out.Unlock()
			select {
			case events <- struct{}{}:
			default:
			}
		},
	}
	ring, err := keys.keyring(*dbPath, logger)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock run: %v\n", err)
		return 1
	}
	cfg.Secrets = ring
	db, err := openDatabase(ctx, storeSpec{dbPath: *dbPath, dsn: *dsn, schema: *schema, log: logger})
	if err != nil {
		fmt.Fprintf(stderr, "jobclock run: %v\n", err)
		return 1
	}
	defer db.close()
	store := db.store
	if *dsn != "" {
		if err := keys.checkStore(ctx, store, ring); err != nil {
			fmt.Fprintf(stderr, "jobclock run: %v\n", err)
			return 1
		}
	}
	reg := executors(scheduler.DefaultActionTimeout)
	defer reg.Close(context.Background()) // after Stop
	cfg.Executors = reg
	cfg.InstanceID = (&scheduler.Config{}).WithDefaults().InstanceID
	obs, err := setupObservability(ctx, observe, cfg.InstanceID, logger)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock run: %v\n", err)
		return 1
	}
	defer shutdownObservability(obs, logger)
	cfg.Observer = obs.Observer
	s, err := scheduler.New(store, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock run: %v\n", err)
		return 2
	}
	check, err := newCheckScheduler(cfg, store)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock run: %v\n", err)
		return 2
	}
	jobs, err := load(ctx, s, check, db, fs.Args(), *minRetry)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock run: %v\n", err)
		return 1
	}
	if err := s.Start(ctx); err != nil {
		fmt.Fprintf(stderr, "jobclock run: %v\n", err)
		return 1
	}
	stopping := new(drain)
	stopMetrics, err := serveMetrics(observe, obs, s, stopping, stderr, logger)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock run: %v\n", err)
		s.Stop(context.Background())
		return 1
	}
	defer stopMetrics(context.Background())
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for !allFinal(ctx, s, jobs) {
		select {
		case <-ctx.Done():
			fmt.Fprintln(stderr, "jobclock run: stopping; waiting for attempts in flight")
		case <-events:
		case <-tick.C:
		}
		if ctx.Err() != nil {
			break
		}
	}
	stopping.start()
	// A second signal cancels the attempts in flight: Stop then waits
	// (at most -lease) for their outcomes to be stored.
	stopCtx, cancelStop := context.WithCancel(context.Background())
	defer cancelStop()
	var forced atomic.Bool
	go func() {
		select {
		case sig := <-again:
			forced.Store(true)
			fmt.Fprintf(stderr, "jobclock run: second signal (%v): cancelling the attempts in flight; exiting once their outcomes are stored\n", sig)
			cancelStop()
		case <-stopCtx.Done():
		}
	}()
	if err := s.Stop(stopCtx); err != nil {
		fmt.Fprintf(stderr, "jobclock run: stop: %v\n", err)
	}
	cancelStop()
	out.Lock()
	others := otherJobs(ran, jobs)
	out.Unlock()
	fmt.Fprint(stderr, summarize(ctx, store, jobs, others))
	if forced.Load() {
		return 1
	}
	return 0
}

// otherJobs returns the jobs of ran that are not among jobs, in order:
// those of the database that ran besides the files' own.
func otherJobs(ran map[jobKey]bool, jobs []jobKey) []jobKey {
	var others []jobKey
	for k := range ran {
		if !slices.Contains(jobs, k) {
			others = append(others, k)
		}
	}
	slices.SortFunc(others, func(a, b jobKey) int {
		return cmp.Or(strings.Compare(a.collection, b.collection), strings.Compare(a.name, b.name))
	})
	return others
}

type jobKey struct{ collection, name string }

func allFinal(ctx context.Context, s *scheduler.Scheduler, jobs []jobKey) bool {
	for _, k := range jobs {
		r, err := s.GetJob(context.WithoutCancel(ctx), k.collection, k.name)
		if err != nil || !r.State.Final() {
			return false
		}
	}
	return true
}

// summarize returns the summary of run: a line for each job of the files
// (jobs), then one for each job of the store that ran besides them
// (others), which says so. It reads the jobs from store, after the
// Scheduler stopped.
func summarize(ctx context.Context, store scheduler.Store, jobs, others []jobKey) string {
	var b strings.Builder
	line := func(k jobKey, note string) {
		r, err := store.GetJob(context.WithoutCancel(ctx), k.collection, k.name)
		if err != nil {
			fmt.Fprintf(&b, "%s/%s: %v%s\n", k.collection, k.name, err, note)
			return
		}
		fmt.Fprintf(&b, "%s/%s: %s (executions %d, failures %d, faulted occurrences %d)%s\n",
			k.collection, k.name, r.State, r.Status.ExecutionCount, r.Status.FailureCount, r.Status.FaultedCount, note)
	}
	for _, k := range jobs {
		line(k, "")
	}
	for _, k := range others {
		line(k, "; not in the files: a job of the database")
	}
	return b.String()
}

// load reads every file and puts its collection, calendars and jobs
// through s, once each file was put without a problem through check (see
// newCheckScheduler, and fileProblems, which reports every problem of a
// file as validate does: those of reading it and those of putting what
// could be read): when a file is refused, nothing is put through s.
// Into a database (db.begin set) every file is written in one
// transaction of it, committed once all were written: a refusal that
// only the database can see (a collection's maxJobCount against the jobs
// it holds already, a write of another process), or its failure midway,
// rolls back every write of the run. The memory store, made with the
// process, holds nothing that the check does not see. Errors name the
// file and the JSON path, one line per problem.
func load(ctx context.Context, s, check *scheduler.Scheduler, db *database, files []string, minRetry time.Duration) ([]jobKey, error) {
	var errs []error
	popts := loadOptions(minRetry)
	type file struct {
		path string
		f    *jobFile
	}
	var checked []file
	for _, path := range files {
		f, err := readJobFile(path, nil, popts)
		if f != nil {
			err = fileProblems(ctx, check, f, err)
		}
		if err != nil {
			errs = append(errs, &fileError{path, err})
			continue
		}
		checked = append(checked, file{path, f})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...) // nothing written
	}
	var put filePutter = s
	var end func(commit bool) error
	if db.begin != nil {
		tx, e, err := db.begin(ctx)
		if err != nil {
			return nil, fmt.Errorf("begin a transaction: %w", err)
		}
		end = e
		in, err := db.store.(scheduler.Transactional).InTx(ctx, tx)
		if err != nil {
			if rerr := end(false); rerr != nil {
				err = errors.Join(err, fmt.Errorf("roll back: %w", rerr))
			}
			return nil, fmt.Errorf("begin a transaction: %w", err)
		}
		put = txPutter{s, tx, in}
	}
	var keys []jobKey
	for _, c := range checked {
		k, err := putFile(ctx, put, c.f)
		keys = append(keys, k...)
		if err != nil {
			errs = append(errs, &fileError{c.path, err})
			if !refusal(err) {
				break // the transaction may have ended: write no more
			}
		}
	}
	if len(keys) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("the files hold no jobs"))
	}
	if end != nil {
		if len(errs) > 0 {
			if err := end(false); err != nil {
				errs = append(errs, fmt.Errorf("roll back: %w", err))
			}
			return nil, errors.Join(errs...) // nothing written
		}
		if err := end(true); err != nil {
			return nil, fmt.Errorf("commit: %w", err)
		}
	}
	return keys, errors.Join(errs...)
}

// filePutter is what putFile writes through: a Scheduler, or a
// txPutter.
type filePutter interface {
	GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error)
	PutCollection(ctx context.Context, name string, def *scheduler.JobCollection, opts *scheduler.PutCollectionOptions) (*scheduler.CollectionRecord, error)
	PutCalendar(ctx context.Context, collection, name string, def *scheduler.Calendar, opts *scheduler.PutCalendarOptions) (*scheduler.CalendarRecord, error)
	PutJob(ctx context.Context, collection, name string, def *scheduler.Job, opts *scheduler.PutJobOptions) (*scheduler.JobRecord, error)
}

// txPutter writes through s inside tx, a transaction of its store's
// database, and reads through in, the store's view of tx.
type txPutter struct {
	s  *scheduler.Scheduler
	tx any
	in scheduler.TxStore
}

func (p txPutter) GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error) {
	return p.in.GetCollection(ctx, name)
}

func (p txPutter) PutCollection(ctx context.Context, name string, def *scheduler.JobCollection, opts *scheduler.PutCollectionOptions) (*scheduler.CollectionRecord, error) {
	return p.s.PutCollectionTx(ctx, p.tx, name, def, opts)
}

func (p txPutter) PutCalendar(ctx context.Context, collection, name string, def *scheduler.Calendar, opts *scheduler.PutCalendarOptions) (*scheduler.CalendarRecord, error) {
	return p.s.PutCalendarTx(ctx, p.tx, collection, name, def, opts)
}

func (p txPutter) PutJob(ctx context.Context, collection, name string, def *scheduler.Job, opts *scheduler.PutJobOptions) (*scheduler.JobRecord, error) {
	return p.s.PutJobTx(ctx, p.tx, collection, name, def, opts)
}

// refusal reports whether err, an error of putFile, holds only refusals
// of what was written (invalid, over a quota, missing, not as expected,
// not possible in a transaction), which leave a transaction usable, and
// no failure of the store.
func refusal(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !refusal(e) {
				return false
			}
		}
		return true
	}
	for _, r := range []error{scheduler.ErrInvalid, scheduler.ErrQuotaExceeded, scheduler.ErrNotFound, scheduler.ErrPreconditionFailed, errors.ErrUnsupported} {
		if errors.Is(err, r) {
			return true
		}
	}
	return false
}

// newCheckScheduler returns the Scheduler in which load puts the files
// first: in memory, never started, with cfg's executors, retry interval
// and keys, and as the store keeps secrets (sealed, or refused without a
// key, unless store is Ephemeral), so that it refuses what s over store
// would refuse at load.
func newCheckScheduler(cfg *scheduler.Config, store scheduler.Store) (*scheduler.Scheduler, error) {
	var scratch scheduler.Store = memory.New()
	if e, ok := store.(scheduler.Ephemeral); !ok || !e.Ephemeral() {
		scratch = durable{scratch}
	}
	return scheduler.New(scratch, &scheduler.Config{Logger: slog.New(slog.DiscardHandler),
		MinRetryInterval: cfg.MinRetryInterval, Executors: cfg.Executors, Secrets: cfg.Secrets})
}

// durable is a store that does not say it is Ephemeral: the memory store
// in which load checks files for a database.
type durable struct{ scheduler.Store }

// putFile puts f's collection, its calendars and its jobs through s, and
// returns the jobs it put. Its error is every problem, joined: a
// definition the scheduler refuses (an action's rules that only an
// executor knows) as a *scheduler.ValidationError at its JSON path in the
// file; a quota that a job exceeds as a *quotaProblem at the path of what
// exceeds it; another error of a put naming the collection and the job or
// calendar.
func putFile(ctx context.Context, s filePutter, f *jobFile) ([]jobKey, error) {
	if err := putFileCollection(ctx, s, f); err != nil {
		return nil, fmt.Errorf("collection %q: %w", f.collection, err)
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(f.calendars)) {
		if _, err := s.PutCalendar(ctx, f.collection, name, f.calendars[name], nil); err != nil {
			if errors.Is(err, errors.ErrUnsupported) {
				// A change of a stored calendar, which a put inside a
				// transaction refuses.
				err = &commandError{"it differs from the stored calendar, and run, which writes the files in one transaction, " +
					"cannot check the jobs that name it against it there: give the calendar in the file as it is stored, change it " +
					"through jobclock serve's API, or run without -db and -postgres", err}
			}
			errs = append(errs, fmt.Errorf("calendar %s/%s: %w", f.collection, name, err))
			if !refusal(err) {
				return nil, errors.Join(errs...)
			}
		}
	}
	var keys []jobKey
	for _, j := range f.jobs {
		k := jobKey{f.collection, j.name}
		_, err := s.PutJob(ctx, k.collection, k.name, j.job, &scheduler.PutJobOptions{Tags: j.tags})
		var qe *scheduler.QuotaError
		switch {
		case err == nil:
			keys = append(keys, k)
		case errors.Is(err, scheduler.ErrInvalid):
			errs = append(errs, &jobProblems{j.name, under(j.at, "job", err)})
		case errors.As(err, &qe):
			errs = append(errs, &jobProblems{j.name, []error{&quotaProblem{j.quotaPath(qe), qe}}})
		default:
			errs = append(errs, &jobProblems{j.name, []error{fmt.Errorf("job %s/%s: %w", k.collection, k.name, err)}})
			if !refusal(err) {
				return keys, errors.Join(errs...) // a failure of the store: write no more
			}
		}
	}
	return keys, errors.Join(errs...)
}

// putFileCollection puts f's collection through s; when f gives no
// collection properties (f.createOnly), only if s holds no such
// collection: a stored one, whatever its plan and quota, is left as it
// is. The create is create-only (IfNoneMatch "*"), decided in the write
// that creates it, so that a collection another writer creates at the
// same moment (serve's API, a Go program) is left as that writer made it.
func putFileCollection(ctx context.Context, s filePutter, f *jobFile) error {
	var opts *scheduler.PutCollectionOptions
	if f.createOnly {
		opts = &scheduler.PutCollectionOptions{IfNoneMatch: "*"}
	}
	_, err := s.PutCollection(ctx, f.collection, f.def, opts)
	if f.createOnly && errors.Is(err, scheduler.ErrPreconditionFailed) {
		return nil // stored, and left alone
	}
	if errors.Is(err, errors.ErrUnsupported) {
		// A stricter maxRecurrence than the stored one, which a put
		// inside a transaction refuses.
		stored := "the stored one"
		if old, gerr := s.GetCollection(ctx, f.collection); gerr == nil {
			stored = fmt.Sprintf("the stored %s", old.Definition.MaxRecurrence())
		}
		return &commandError{fmt.Sprintf("its maxRecurrence %s is stricter than %s, and run, which writes the files in one "+
			"transaction, cannot check the collection's jobs against it there: give the collection in the file a maxRecurrence "+
			"as loose as the stored one (or leave \"collection\" out, which keeps the stored collection as it is), make it "+
			"stricter through jobclock serve's API, or run without -db and -postgres", f.def.MaxRecurrence(), stored), err}
	}
	return err
}

// commandError is an error of the library said in the command's terms,
// as what the user can do with the command instead of a Go API's name;
// the library's error stays its cause, for errors.Is.
type commandError struct {
	msg   string
	cause error
}

func (e *commandError) Error() string { return e.msg }
func (e *commandError) Unwrap() error { return e.cause }

// startEcho starts the local HTTP receiver that sample jobs call.
func startEcho(addr string, log io.Writer) (*http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	mux := http.NewServeMux()
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code := 0
		fmt.Sscanf(r.PathValue("code"), "%d", &code)
		if code < 100 || code > 599 {
			code = http.StatusBadRequest
		}
		mu.Lock()
		fmt.Fprintf(log, "echo: %s %s -> %d (job %s, occurrence tag %s)\n", r.Method, r.URL.Path, code,
			r.Header.Get("x-ms-scheduler-jobid"), r.Header.Get("x-ms-scheduler-execution-tag"))
		mu.Unlock()
		w.WriteHeader(code)
		fmt.Fprintf(w, "status %d as requested\n", code)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		mu.Lock()
		fmt.Fprintf(log, "echo: %s %s %q (job %s, occurrence tag %s)\n", r.Method, r.URL.Path, body,
			r.Header.Get("x-ms-scheduler-jobid"), r.Header.Get("x-ms-scheduler-execution-tag"))
		mu.Unlock()
		fmt.Fprintf(w, "hello from %s; got %d bytes\n", r.URL.Path, len(body))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return srv, nil
}
