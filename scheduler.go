package scheduler

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/internal/tracectx"
	"github.com/jobclock/scheduler/secrets"
)

// Defaults of Config.
const (
	// DefaultMaxConcurrency is the default limit of attempts in flight.
	DefaultMaxConcurrency = 100
	// DefaultActionTimeout is the default limit of one attempt: Azure
	// Scheduler's HTTP timeout.
	DefaultActionTimeout = 60 * time.Second
	// DefaultMinRetryInterval is the default smallest retryInterval a job
	// may ask for.
	DefaultMinRetryInterval = 15 * time.Second
	// DefaultHistoryRetention is how long history entries are kept.
	DefaultHistoryRetention = 60 * 24 * time.Hour
	// DefaultHistoryPerJob is how many history entries a job keeps.
	DefaultHistoryPerJob = 1000
	// NoHistory, as Config.HistoryPerJob, keeps no history at all.
	NoHistory = -1
	// DefaultFinalJobRetention is how long Completed and Faulted jobs are
	// kept.
	DefaultFinalJobRetention = 60 * 24 * time.Hour
	// DefaultLeaseDuration is how long a claimed job stays leased to
	// this instance without being extended. While an attempt runs, its
	// lease is extended every third of this; when the instance dies,
	// another one takes the job over at most this long after the last
	// extension (see "Several instances" in the package documentation).
	DefaultLeaseDuration = 10 * time.Second
	// DefaultPollInterval is the longest the loop sleeps without asking
	// the store for due work.
	DefaultPollInterval = 5 * time.Second
	// DefaultMisfireThreshold is how late an occurrence may start before
	// MisfireSkip drops it.
	DefaultMisfireThreshold = time.Minute
	// DefaultClaimAhead is the default Config.ClaimAhead: how far ahead
	// of their due instants the loop claims jobs, over a store that is an
	// AheadClaimer.
	DefaultClaimAhead = 100 * time.Millisecond
	// NoClaimAhead, as Config.ClaimAhead, turns claiming ahead off: the
	// loop claims each job only once it is due.
	NoClaimAhead = -1
	// DefaultFiringWindow is the default Config.FiringWindow: how much
	// later than its due instant a job claimed ahead may start, so that
	// the jobs due that close together start from one wake-up.
	DefaultFiringWindow = 2 * time.Millisecond
	// NoFiringWindow, as Config.FiringWindow, starts every job claimed
	// ahead at its own due instant.
	NoFiringWindow = -1
	// pruneInterval is how often retention is applied.
	pruneInterval = 10 * time.Minute
	// claimBatch is the most jobs claimed in one store call.
	claimBatch = 256
)

// MisfirePolicy says what happens to occurrences that were missed because
// no scheduler was running.
type MisfirePolicy string

// The misfire policies.
const (
	// MisfireRunOnce runs a job once, as soon as possible, for all the
	// occurrences it missed, then continues on its schedule. The
	// history entry carries the expected time of the first one missed.
	MisfireRunOnce MisfirePolicy = "runOnce"
	// MisfireSkip drops occurrences more than Config.MisfireThreshold
	// late and runs once, as MisfireRunOnce, for those within it; the
	// job continues with its next occurrence after now. A job
	// left with no further occurrence ends Completed (or Faulted when its
	// last occurrence that ran failed).
	MisfireSkip MisfirePolicy = "skip"
	// MisfireRunAll runs every missed occurrence, one after the other.
	MisfireRunAll MisfirePolicy = "runAll"
)

// Config configures a Scheduler. The zero value (and a nil *Config) means
// every default.
type Config struct {
	// Logger receives the scheduler's log. Nil means slog.Default().
	Logger *slog.Logger
	// Executors maps action types to executors. The Scheduler has
	// executors of its own: action/http (made with ActionTimeout) for
	// Http and Https, and the one of action.Func for the jobs of
	// ScheduleFunc; every other type needs an executor registered
	// here: azure.Register (package action/azure) adds StorageQueue,
	// ServiceBusQueue and ServiceBusTopic in one line, or
	// storagequeue.Register and servicebus.Register one at a time. A job
	// whose action type has no executor is refused when it is put.
	// Registering an executor for Http or Https replaces the built-in
	// one (to give it other options or a client). Types registered here
	// besides the built-in ones are accepted in job definitions, with
	// their "custom" payload. The registry stays the host's: Stop does
	// not close its executors (see [action.Registry.Close]). Nil means
	// only Http and Https.
	Executors *action.Registry
	// MaxConcurrency is the most attempts in flight at once; Start runs
	// that many worker goroutines. The jobs claimed ahead of their due
	// instants (see ClaimAhead) take workers too: the held jobs and the
	// attempts running are at most MaxConcurrency, so that each held job
	// finds a free worker at its instant. At a steady rate above
	// MaxConcurrency ÷ ClaimAhead (1,000 a second at the defaults) the
	// held jobs reach less far ahead than ClaimAhead, and the loop claims
	// more often (see "Claiming ahead"); set it above rate × ClaimAhead for
	// the attempts of a higher rate. An attempt whose outcome waits for
	// the store to record it leaves its worker to other jobs, up to 2,048
	// such outcomes, which bounds their memory (a few MB: about 1.7 KB
	// each with no history kept); the one worker that records them is
	// busy until the store answers. A store call slower than the
	// attempts (a store in trouble) thus keeps the jobs due meanwhile
	// from starting once 2,048 outcomes wait, or once every worker runs
	// an attempt or records: with every worker busy or recording, nothing
	// starts. Defaults to DefaultMaxConcurrency (100).
	MaxConcurrency int
	// ActionTimeout bounds every attempt of an action without a timeout
	// of its own (action.Action.Timeout): its context carries this
	// deadline, and the built-in HTTP executor uses it as its timeout.
	// Defaults to DefaultActionTimeout (60s).
	ActionTimeout time.Duration
	// MinRetryInterval is the smallest retryInterval a job may ask for.
	// Defaults to DefaultMinRetryInterval (15s); lower it for tests and
	// demonstrations.
	MinRetryInterval time.Duration
	// HistoryRetention is how long history entries are kept. Defaults
	// to DefaultHistoryRetention (60 days).
	HistoryRetention time.Duration
	// HistoryPerJob is how many history entries each job keeps.
	// Defaults to DefaultHistoryPerJob (1,000).
	//
	// NoHistory keeps none: the Scheduler records each outcome in the
	// job's state and status (counters, lastExecutionTime, state,
	// faulted and completed jobs, all as with history) but stores no
	// history entry, and makes none unless OnHistory or Observer is set,
	// which still get every entry as it would have been stored (so
	// package telemetry's metrics stay whole). This is the setting for
	// a host that wants timing alone, as from a cron library: it saves
	// the work and the memory of the entries (about 250 bytes each in
	// store/memory). ListHistory then returns only entries stored
	// before (HistoryRetention still deletes those), an errorAction that
	// carries the failure document lists no attempts in it, BackfillJob
	// refuses BackfillMissing (it knows which occurrences ran from
	// history alone; BackfillAll works), and a store
	// that recognises a Record repeated after a lost connection by its
	// history (store/postgres) cannot: such a repeat, after a write that
	// committed although the store reported an error, is logged as a lost
	// lease.
	HistoryPerJob int
	// FinalJobRetention is how long Completed and Faulted jobs are kept
	// after their last run (or last write through the API) before they
	// are deleted. Defaults to DefaultFinalJobRetention (60 days).
	FinalJobRetention time.Duration
	// Misfire says what happens to occurrences missed while no scheduler
	// ran, for jobs whose run policy (or their collection's) does not
	// say. Defaults to MisfireRunOnce.
	Misfire MisfirePolicy
	// MisfireThreshold is how late an occurrence may be before
	// MisfireSkip drops it. Defaults to DefaultMisfireThreshold (1m).
	MisfireThreshold time.Duration
	// InstanceID names this scheduler as the owner of the leases it
	// takes in a shared store; it must differ between processes. Empty
	// means hostname-pid-random.
	InstanceID string
	// LeaseDuration is how long a claimed job stays leased without being
	// extended. While an attempt runs, the Scheduler extends its lease
	// every third of LeaseDuration (a heartbeat), so attempts may run
	// longer. When an instance dies, the jobs it held are taken over by
	// another instance sharing the store at most LeaseDuration after its
	// last heartbeat: that bounds how late an occurrence in flight, or due
	// just then, runs again. Shorter means faster takeover but one
	// ExtendLease per running attempt (and per outcome waiting for the
	// store to record it) more often, and less tolerance for a store that
	// stalls for this instance alone (a lease not extended for two
	// thirds of LeaseDuration may be taken over while its attempt still
	// runs; after an outage of every instance, a grace of half of
	// LeaseDuration, at least 4s, holds takeovers off: see "Several instances" in
	// the package documentation) or for clocks that
	// disagree between instances. Each call that extends leases ends a
	// third of LeaseDuration after it starts, so that one that hangs
	// holds up no other call, but the leases that it extends (one, or up
	// to 1,000 over a LeaseExtender) fail together; the PostgreSQL store
	// does not make the others of a call wait for a job's row that a
	// transaction holds (a host's PutJobTx of it): that job's lease alone
	// waits, on a call of its own. The leases of the outcomes waiting for the store
	// (up to 2,048, see MaxConcurrency) are extended beside the running
	// attempts' own, and an outcome that comes to wait during a pass over
	// them is extended first by the pass after it, so that two passes may
	// go by between two extensions of one lease: a pass must stay under
	// about a sixth of LeaseDuration, or their leases may expire before
	// they are recorded, and their jobs run again on another instance.
	// Over a store that is a [LeaseExtender] (the memory, SQLite and
	// PostgreSQL stores) a pass makes one ExtendLeases call per 1,000
	// leases, up to 16 at once: it takes about one call's latency, a
	// statement that updates the leases, for any number of outcomes. Over
	// another store it makes one ExtendLease call per lease, 16 at a
	// time: it takes outcomes × ExtendLease's latency ÷ 16 (1,024
	// outcomes at 25ms a call: 1.6s of the default 10s). At least 1s.
	// Defaults to DefaultLeaseDuration (10s).
	LeaseDuration time.Duration
	// PollInterval is the longest the scheduler sleeps without asking the
	// store for due work, which matters when other processes add work to
	// a shared store. Defaults to DefaultPollInterval (5s).
	PollInterval time.Duration
	// ClaimAhead is how far ahead of its due instant the run loop may
	// claim a job: the loop claims the jobs due within ClaimAhead in one
	// store call (at most 256, and no more than the running attempts and
	// the held jobs leave of MaxConcurrency's workers), holds them under
	// their lease, and starts each at its due instant, so that at a steady
	// rate a claim serves many occurrences while each still starts on
	// time. A held job counts as in flight once it starts (see InFlight).
	// What a write does to a held job, Stop, and other instances: see
	// "Claiming ahead" in the package documentation. It needs a store that
	// is an AheadClaimer; over another store the loop claims each job
	// once it is due. While held claims are about to start, an outcome
	// waits at most ClaimAhead for others to be recorded with
	// it in one store call (see "Claiming ahead"). At most a tenth of
	// LeaseDuration. Defaults to
	// DefaultClaimAhead (100ms), the value measured in BENCHMARKS.md;
	// NoClaimAhead or any negative value claims each job only once it is
	// due. (Before claiming ahead was on by default, zero turned it off;
	// set NoClaimAhead for that now.)
	ClaimAhead time.Duration
	// FiringWindow is the firing granularity of the jobs claimed ahead
	// (see ClaimAhead): the loop wakes once for the held jobs due within
	// FiringWindow of the earliest one, at the instant of the last of
	// them, and starts them all. No job starts before its due instant;
	// when the loop is free then (not in a store call), none starts more
	// than FiringWindow after it. A longer window trades that much start
	// lateness for fewer wake-ups of the loop and the workers, which cost
	// much of the process's CPU per occurrence at a steady rate (see
	// "Claiming ahead" in the package documentation). It does not apply
	// to a job claimed once it is due (a store that is not an
	// AheadClaimer, or NoClaimAhead), which starts at once. At most
	// ClaimAhead. Defaults to DefaultFiringWindow (2ms), or ClaimAhead
	// when that is shorter; NoFiringWindow or any negative value starts
	// each held job at its own instant, with a wake-up of the loop for
	// each instant.
	FiringWindow time.Duration
	// OnHistory, when set, is called with each history entry right after
	// it is stored (under NoHistory, right after the outcome it describes
	// is recorded without it), in the order of each job's entries. It is
	// called from several goroutines at once and must return quickly.
	// Nil means no callback.
	OnHistory func(HistoryEntry)
	// Observer, when set, is told what the Scheduler does, to trace and
	// measure it: give it the *telemetry.Observer of package
	// github.com/jobclock/scheduler/telemetry (a module of its own) for
	// OpenTelemetry spans, metrics and trace ids in log records, as
	// "Observing" in the package documentation describes. Nil means
	// nothing observes the Scheduler, at the cost of a nil check.
	Observer Observer
	// Secrets seals the secrets of job definitions (passwords, client
	// certificates, OAuth secrets, SAS tokens and keys) before they reach
	// the store, and opens them for the executors; see "Secrets" in the
	// package documentation. Its primary key seals, every key opens. Nil
	// means no key: a definition with a secret is then refused (with an
	// error naming the field), unless the store is [Ephemeral], which
	// keeps definitions as given since nothing it holds outlives the
	// process.
	Secrets *secrets.Keyring
}

// WithDefaults returns a copy of c (which may be nil) with every zero field
// set to its default.
func (c *Config) WithDefaults() Config {
	var d Config
	if c != nil {
		d = *c
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.MaxConcurrency == 0 {
		d.MaxConcurrency = DefaultMaxConcurrency
	}
	if d.ActionTimeout == 0 {
		d.ActionTimeout = DefaultActionTimeout
	}
	if d.MinRetryInterval == 0 {
		d.MinRetryInterval = DefaultMinRetryInterval
	}
	if d.HistoryRetention == 0 {
		d.HistoryRetention = DefaultHistoryRetention
	}
	if d.HistoryPerJob == 0 {
		d.HistoryPerJob = DefaultHistoryPerJob
	}
	if d.FinalJobRetention == 0 {
		d.FinalJobRetention = DefaultFinalJobRetention
	}
	if d.Misfire == "" {
		d.Misfire = MisfireRunOnce
	}
	if d.MisfireThreshold == 0 {
		d.MisfireThreshold = DefaultMisfireThreshold
	}
	if d.InstanceID == "" {
		host, _ := os.Hostname()
		d.InstanceID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), randomHex(4))
	}
	if d.LeaseDuration == 0 {
		d.LeaseDuration = DefaultLeaseDuration
	}
	if d.PollInterval == 0 {
		d.PollInterval = DefaultPollInterval
	}
	if d.ClaimAhead == 0 {
		d.ClaimAhead = DefaultClaimAhead
	}
	if d.FiringWindow == 0 {
		d.FiringWindow = DefaultFiringWindow
		if d.ClaimAhead > 0 {
			d.FiringWindow = min(d.FiringWindow, d.ClaimAhead)
		}
	}
	return d
}

// ConfigError is an invalid Config field.
type ConfigError struct {
	// Field is the name of the Config field.
	Field string
	// Reason says what is wrong with it.
	Reason string
}

// Error returns "scheduler: Config.FIELD REASON".
func (e *ConfigError) Error() string { return "scheduler: Config." + e.Field + " " + e.Reason }

// validate checks a Config that has its defaults applied.
func (c *Config) validate() error {
	var errs []error
	bad := func(field, reason string) { errs = append(errs, &ConfigError{field, reason}) }
	if c.MaxConcurrency < 0 {
		bad("MaxConcurrency", "is negative")
	}
	if c.ActionTimeout < 0 {
		bad("ActionTimeout", "is negative")
	}
	if c.MinRetryInterval < 0 {
		bad("MinRetryInterval", "is negative")
	}
	if c.HistoryRetention < 0 {
		bad("HistoryRetention", "is negative")
	}
	if c.HistoryPerJob < NoHistory {
		bad("HistoryPerJob", "is negative and not NoHistory (-1)")
	}
	if c.FinalJobRetention < 0 {
		bad("FinalJobRetention", "is negative")
	}
	switch c.Misfire {
	case MisfireRunOnce, MisfireSkip, MisfireRunAll:
	default:
		bad("Misfire", fmt.Sprintf("is %q, not one of runOnce, skip, runAll", c.Misfire))
	}
	if c.MisfireThreshold < 0 {
		bad("MisfireThreshold", "is negative")
	}
	if c.LeaseDuration < time.Second {
		bad("LeaseDuration", "is shorter than 1s")
	}
	if c.PollInterval < time.Millisecond {
		bad("PollInterval", "is shorter than 1ms")
	}
	if c.ClaimAhead > c.LeaseDuration/10 {
		bad("ClaimAhead", fmt.Sprintf("is %v, longer than a tenth of LeaseDuration (%v)", c.ClaimAhead, c.LeaseDuration))
	}
	if c.ClaimAhead > 0 && c.FiringWindow > c.ClaimAhead {
		bad("FiringWindow", fmt.Sprintf("is %v, longer than ClaimAhead (%v)", c.FiringWindow, c.ClaimAhead))
	}
	if strings.TrimSpace(c.InstanceID) == "" {
		bad("InstanceID", "is blank")
	}
	return errors.Join(errs...)
}

// Scheduler runs the jobs of a Store. Create one with [New]; it is safe for
// concurrent use.
type Scheduler struct {
	store    Store
	runStore Store // the run loop's: store, telling Config.Observer of each call when set, and dropping history under NoHistory
	cfg      Config
	log      *slog.Logger
	builtins action.Registry
	parse    ParseOptions
	timings  timingCache
	policies policyCache
	batch    BatchRecorder // runStore, when it is one; else nil
	limiter  Limiter       // store, when it is one; else nil
	claimer  AheadClaimer  // store, when it is one (telling Config.Observer of each call when set); else nil: no claims ahead
	extender LeaseExtender // store, when it is one (telling Config.Observer of each call when set); else nil: an ExtendLease per job
	// warnedLimits is set once the Scheduler warned that its store
	// keeps no permits for collections' limits.
	warnedLimits atomic.Bool
	outcomes     outcomeBatch
	leases       leaseKeeper
	health       storeHealth   // the loop's view of the store
	retries      recordRetries // outcomes being recorded again
	// httpExec is the built-in executor of Http and Https; Stop closes
	// its idle connections.
	httpExec *httpaction.Executor
	// noEntries says that nothing wants history entries: the store keeps
	// none (Config.HistoryPerJob is NoHistory), and neither
	// Config.OnHistory nor Config.Observer is set.
	noEntries bool
	// funcs is the built-in executor of Func, with the functions that
	// ScheduleFunc registered.
	funcs funcs
	// putCols holds, by name, the record of each collection that the last
	// put into it read, when the store is a JobCreator (see createOver);
	// the records are shared and never changed.
	putCols sync.Map

	wake     chan struct{}  // capacity 1: "look at the store again"
	ahead    aheadClaims    // the loop's claims held until their instants
	cut      cutOff         // the loop's: when it lost the store, and the takeovers it holds off since (see loop.go)
	inFlight atomic.Int64   // claimed jobs started and not recorded (see startHeld)
	work     dispatch       // claimed jobs for the workers
	wg       sync.WaitGroup // claimed jobs in flight
	workers  sync.WaitGroup
	pool     bool // the workers run (set by Start before the loop starts)

	mu        sync.Mutex
	started   bool
	stopped   bool               // Stop was called: writes are refused
	returned  bool               // Stop returned: reads are refused too, the host may close the store
	cancel    context.CancelFunc // stops the loop
	detach    func()             // from Config.Observer's Attach; Stop calls it
	loopDone  chan struct{}
	stopCtx   context.Context // Stop's, under which the loop gives back its held claims; guarded by mu
	execCtx   context.Context // parent of every attempt's context
	execStop  context.CancelFunc
	nextPrune time.Time
	pruning   atomic.Bool  // a prune runs
	stepped   atomic.Int64 // when the loop last started a step, in Unix nanoseconds

	// cancelledAt is when Stop's context ended and Stop cancelled the
	// attempts' contexts, in Unix nanoseconds; 0 until then.
	cancelledAt atomic.Int64
	// stoppingAt is when Stop was called, in Unix nanoseconds; 0 until
	// then. From then on the next occurrence of a CancelRunning job does
	// not cancel its attempt in progress (see supersedes).
	stoppingAt atomic.Int64
}

// New returns a Scheduler over store. cfg may be nil for all defaults; a
// Config with an invalid field returns joined [*ConfigError] values.
func New(store Store, cfg *Config) (*Scheduler, error) {
	if store == nil {
		return nil, errors.New("scheduler: New: store is nil")
	}
	c := cfg.WithDefaults()
	if err := c.validate(); err != nil {
		return nil, err
	}
	log := slog.New(tracectx.LogHandler(c.Logger.Handler()))
	if c.Observer != nil {
		c.Observer = newGuardedObserver(c.Observer, log)
	}
	s := &Scheduler{
		store: store,
		cfg:   c,
		log:   log,
		wake:  make(chan struct{}, 1),
	}
	s.ahead.window = max(c.FiringWindow, 0)
	s.httpExec = httpaction.New(&httpaction.Options{Timeout: c.ActionTimeout})
	s.builtins.Register(action.HTTP, s.httpExec)
	s.builtins.Register(action.HTTPS, s.httpExec)
	s.funcs.log = s.log
	s.builtins.Register(action.Func, &s.funcs)
	s.runStore = store
	if c.Observer != nil {
		s.runStore = observeStore(store, c.Observer)
	}
	s.noEntries = c.HistoryPerJob == NoHistory && c.OnHistory == nil && c.Observer == nil
	if c.HistoryPerJob == NoHistory && !s.noEntries {
		s.runStore = withoutHistory(s.runStore)
	}
	s.batch, _ = s.runStore.(BatchRecorder)
	if a, ok := store.(AheadClaimer); ok {
		s.claimer = a
		if c.Observer != nil {
			s.claimer = &observedClaimer{a, c.Observer}
		}
	}
	if e, ok := store.(LeaseExtender); ok {
		s.extender = e
		if c.Observer != nil {
			s.extender = &observedExtender{e, c.Observer}
		}
	}
	if l, ok := store.(Limiter); ok {
		s.limiter = l
		if c.Observer != nil {
			s.limiter = &observedLimiter{l, c.Observer}
		}
	}
	s.parse = ParseOptions{MinRetryInterval: c.MinRetryInterval, Executors: executors{s}}
	s.execCtx, s.execStop = context.WithCancel(context.Background())
	s.detach = func() {}
	if c.Observer != nil {
		s.detach = c.Observer.Attach(s)
	}
	return s, nil
}

// executor returns the executor for t: the host's, else the built-in one.
func (s *Scheduler) executor(t action.Type) (action.Executor, bool) {
	if s.cfg.Executors != nil {
		if e, ok := s.cfg.Executors.Lookup(t); ok {
			return e, true
		}
	}
	return s.builtins.Lookup(t)
}

// executors is where a Scheduler's definitions find their executors (see
// [ParseOptions.Executors]): the host's registry, then the Scheduler's own
// HTTP executor.
type executors struct{ s *Scheduler }

func (e executors) Lookup(t action.Type) (action.Executor, bool) { return e.s.executor(t) }

// Types returns the host's types and Http and Https: not Func, which only
// ScheduleFunc puts (a definition that names it is accepted all the same).
func (e executors) Types() []action.Type {
	types := slices.DeleteFunc(e.s.builtins.Types(), func(t action.Type) bool { return t == action.Func })
	if reg := e.s.cfg.Executors; reg != nil {
		for _, t := range reg.Types() {
			if !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
	}
	return types
}

// Start starts the run loop and returns once it runs. ctx bounds only the
// start-up; use Stop to stop. Start returns ErrStopped after Stop and an
// error when already started.
func (s *Scheduler) Start(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return ErrStopped
	}
	if s.started {
		return errors.New("scheduler: Start: already started")
	}
	s.started = true
	loopCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.loopDone = make(chan struct{})
	s.pool = true
	for range s.cfg.MaxConcurrency {
		s.workers.Add(1)
		go s.worker()
	}
	if err := s.listen(loopCtx); err != nil {
		s.log.Warn("store notifications unavailable; polling only", "err", err)
	}
	go s.loop(loopCtx)
	s.log.Info("scheduler started", "instance", s.cfg.InstanceID)
	return nil
}

// Stop stops claiming work, gives back the jobs claimed ahead of their
// due instants, and waits until the attempts in flight have ended and
// their outcome is stored. The next occurrence of a job under
// runPolicy.overlap CancelRunning that comes due meanwhile does not cancel
// its attempt: this instance does not run it. No job that a claim brings back after Stop was
// called starts: the jobs of a claim under way (which Stop does not cut
// short) are given back unrun, or, over a store that is not an
// [AheadClaimer], left to their leases; the jobs handed to workers before
// may still start while Stop waits for them. When ctx ends first, Stop
// cancels the attempts' contexts, waits at most Config.LeaseDuration
// more for their outcomes to be stored (an attempt so cancelled fails and
// is retried as any failure), and returns ctx.Err(): when its executor
// returns and the store answers within that time, the outcome is stored
// when Stop returns, and the host may close the store then. A claim
// still under way ends within Config.LeaseDuration, and its jobs are
// given back within a tenth of it, after Stop returned if need be;
// a job that reaches a worker, or whose worker's store call (the run
// policy, the permits of a limit) answers, after Stop returned does not
// start: its claim is given back, and no attempt is recorded for it. Those
// store calls, and the writes of outcomes, have no deadline of their own:
// while a store hangs, Stop with a ctx that never ends waits for it.
// Once Stop has waited for the attempts and their outcomes, no lease is
// extended any more: when it returns nil, no ExtendLease call is under
// way or made later. From the call of Stop, every method that writes the
// store returns ErrStopped, and so do Start and a second Stop; the methods
// that only read it answer until Stop returns (so that a host can serve
// reads while the attempts drain), and return ErrStopped after.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return ErrStopped
	}
	s.stopped = true
	s.stopCtx = ctx
	s.stoppingAt.Store(time.Now().UnixNano())
	cancel, loopDone := s.cancel, s.loopDone
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.returned = true
		s.mu.Unlock()
	}()
	if cancel != nil {
		cancel() // the loop gives back the claims it holds, under ctx
	} else {
		s.releaseHeld(ctx) // runDue driven without Start, in tests
	}
	done := make(chan struct{})
	go func() {
		if loopDone != nil {
			<-loopDone
		}
		s.wg.Wait()
		s.work.close() // ends the workers
		s.workers.Wait()
		s.outcomes.stopFlusher()
		s.leases.close() // every outcome is recorded: no lease is left to extend
		close(done)
	}()
	defer s.detach()
	select {
	case <-done:
		s.execStop()
		s.httpExec.Close()
		s.log.Info("scheduler stopped", "instance", s.cfg.InstanceID)
		return nil
	case <-ctx.Done():
	}
	// The attempts' contexts are cancelled; their outcomes are stored
	// before Stop returns, so that the host may close the store then.
	s.cancelledAt.Store(time.Now().UnixNano())
	s.execStop()
	if !s.awaitOutcomes(done) {
		s.log.Error("scheduler stop: attempts in flight were cancelled, and the outcomes of some are not stored", "instance", s.cfg.InstanceID,
			"in_flight", s.inFlight.Load(), "waited", s.cfg.LeaseDuration.String())
	}
	return ctx.Err()
}

// outcomePoll is how often Stop, once its context ended, looks whether
// the cancelled attempts' outcomes are stored (see awaitOutcomes).
const outcomePoll = 10 * time.Millisecond

// awaitOutcomes waits, for at most Config.LeaseDuration, until the
// attempts in flight have ended and their outcomes are stored (or given
// up), or until done is closed; it reports whether they were.
func (s *Scheduler) awaitOutcomes(done <-chan struct{}) bool {
	if s.inFlight.Load() == 0 {
		return true
	}
	grace := time.NewTimer(s.cfg.LeaseDuration)
	defer grace.Stop()
	tick := time.NewTicker(outcomePoll)
	defer tick.Stop()
	for s.inFlight.Load() > 0 {
		select {
		case <-done:
			return true
		case <-grace.C:
			return false
		case <-tick.C:
		}
	}
	return true
}

// InFlight returns how many claimed jobs this instance works on now (their
// attempts running or their outcomes being recorded; not the jobs claimed
// ahead of their due instants), and Config.MaxConcurrency, the most
// workers its running attempts and its jobs claimed ahead take (see
// "Claiming ahead" in the package documentation).
func (s *Scheduler) InFlight() (n, limit int) {
	return int(s.inFlight.Load()), s.cfg.MaxConcurrency
}

// ErrNotStarted is returned by [Scheduler.Ready] before Start.
var ErrNotStarted = errors.New("scheduler: not started")

// Ready reports whether the Scheduler runs jobs, as a readiness probe asks:
// nil when it has been started and not stopped, its run loop has stepped
// recently (within three poll intervals, at least a minute), the store is
// not in an outage (its calls of the run loop, or its writes of the
// attempts' outcomes or of lease extensions, failing since the first of
// them failed, until one succeeds: while writes fail, until a write does),
// and it answers a query (NextDue) before ctx ends. Otherwise the error
// says why: ErrNotStarted, ErrStopped, a stalled loop, or the store's
// error.
func (s *Scheduler) Ready(ctx context.Context) error {
	s.mu.Lock()
	started, stopped := s.started, s.stopped
	s.mu.Unlock()
	switch {
	case stopped:
		return ErrStopped
	case !started:
		return ErrNotStarted
	}
	if last := s.stepped.Load(); last != 0 {
		if d := time.Since(time.Unix(0, last)); d > max(3*s.cfg.PollInterval, time.Minute) {
			return fmt.Errorf("scheduler: the run loop has not stepped for %s", d.Round(time.Second))
		}
	}
	if err := s.health.outage(); err != nil {
		return err
	}
	if _, err := s.store.NextDue(ctx); err != nil {
		return fmt.Errorf("scheduler: the store does not answer: %w", err)
	}
	return nil
}

// live returns ErrStopped once Stop has been called: the methods that
// write the store call it.
func (s *Scheduler) live() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return ErrStopped
	}
	return nil
}

// readable returns ErrStopped once Stop has returned, and the host may
// have closed the store: the methods that only read the store call it, so
// that they answer while Stop waits for the attempts in flight.
func (s *Scheduler) readable() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.returned {
		return ErrStopped
	}
	return nil
}

// notify wakes the loop without blocking.
func (s *Scheduler) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// randomHex returns 2n random hexadecimal digits. The values name
// occurrences and requests; they need to be unique, not secret.
func randomHex(n int) string {
	const digits = "0123456789abcdef"
	var buf [32]byte
	var b []byte
	if 2*n <= len(buf) {
		b = buf[:2*n]
	} else {
		b = make([]byte, 2*n)
	}
	for i := 0; i < n; i += 8 {
		v := rand.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			c := byte(v >> (8 * j))
			b[2*(i+j)], b[2*(i+j)+1] = digits[c>>4], digits[c&15]
		}
	}
	return string(b)
}

// newETag returns a fresh entity tag: 16 random hexadecimal digits, as
// randomHex(8) gives, from one random word without a loop over its bytes
// (a put makes one).
func newETag() string {
	const digits = "0123456789abcdef"
	var b [16]byte
	v := rand.Uint64()
	for i := range b {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b[:])
}

// newUUID returns the bits of a random RFC 4122 version 4 UUID, which
// formatUUID writes out.
func newUUID() (v [16]byte) {
	binary.LittleEndian.PutUint64(v[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(v[8:], rand.Uint64())
	v[6] = v[6]&0x0f | 0x40 // version 4
	v[8] = v[8]&0x3f | 0x80 // variant 10
	return v
}

// formatUUID writes the UUID of bits v to b.
func formatUUID(b *[36]byte, v *[16]byte) {
	hex.Encode(b[0:8], v[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], v[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], v[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], v[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], v[10:16])
}
