package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// TestLeaseExtendedDuringLongAttempt checks that a second instance does
// not claim a job whose attempt outlives the lease it was claimed with.
func TestLeaseExtendedDuringLongAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := memory.New()
		var mu sync.Mutex
		calls := 0
		reg := &action.Registry{}
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			time.Sleep(20 * time.Second) // ignores its context
			return nil, nil
		}))
		cfg := scheduler.Config{Executors: reg, LeaseDuration: 3 * time.Second, ActionTimeout: time.Minute,
			PollInterval: 100 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
		ctx := context.Background()
		ss := instances(t, st, cfg, "a", "b")
		job, err := scheduler.ParseJob([]byte(jobJSON(time.Time{}, `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}, "retryPolicy": {"retryType": "None"}}`)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := ss[0].Start(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := ss[0].PutJob(ctx, "c", "j", job, nil); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // a has claimed it
		if err := ss[1].Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		for _, s := range ss {
			if err := s.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if calls != 1 {
			t.Errorf("%d attempts, want 1: the lease was not kept during the attempt", calls)
		}
	})
}

// instances returns a Scheduler over st for each of ids, with cfg and that
// InstanceID, and puts collection "c".
func instances(t *testing.T, st scheduler.Store, cfg scheduler.Config, ids ...string) []*scheduler.Scheduler {
	t.Helper()
	var ss []*scheduler.Scheduler
	for _, id := range ids {
		cfg.InstanceID = id
		s, err := scheduler.New(st, &cfg)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}
	if _, err := ss[0].PutCollection(context.Background(), "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	return ss
}

// failingExtensions is a store whose ExtendLease fails.
type failingExtensions struct {
	*memory.Store
}

func (s failingExtensions) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	return errors.New("extend lease: the store is away")
}

// ExtendLeases fails as a whole, each job with the call's error.
func (s failingExtensions) ExtendLeases(ctx context.Context, owner string, until time.Time, jobs []scheduler.JobKey) []error {
	errs := make([]error, len(jobs))
	for i := range errs {
		errs[i] = errors.New("extend leases: the store is away")
	}
	return errs
}

// extendEach is ExtendLeases made of an ExtendLease call of extend per
// job, for the test stores that change their ExtendLease.
func extendEach(ctx context.Context, extend func(ctx context.Context, collection, name, owner string, until time.Time) error,
	owner string, until time.Time, jobs []scheduler.JobKey) []error {
	errs := make([]error, len(jobs))
	for i, k := range jobs {
		errs[i] = extend(ctx, k.Collection, k.Name, owner, until)
	}
	return errs
}

// TestExtendLeaseFailuresLoggedOncePerOutage checks that the extensions
// of the leases of many running attempts that fail together, for an
// outage of the store, are logged in one warning, which counts them, names
// ten of the jobs and gives the first error, rather than a line per job,
// and only in the first pass of the lease keeper in the outage, which is
// logged once as a whole.
func TestExtendLeaseFailuresLoggedOncePerOutage(t *testing.T) {
	const n = 24
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		reg := &action.Registry{}
		reg.Register("Slow", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			time.Sleep(5 * time.Second) // ignores its context
			return nil, nil
		}))
		logs := &logRecords{}
		st := failingExtensions{memory.New()}
		cfg := scheduler.Config{Executors: reg, LeaseDuration: 3 * time.Second, ActionTimeout: time.Minute, MaxConcurrency: n,
			PollInterval: 100 * time.Millisecond, Logger: slog.New(logs)}
		s := instances(t, st, cfg, "a")[0]
		due := time.Now().Add(time.Second)
		for i := range n {
			def := &scheduler.Job{StartTime: &due, Action: action.Action{Type: "Slow", Custom: []byte(`{}`)}}
			if _, err := s.PutJob(ctx, "c", fmt.Sprintf("j%02d", i), def, nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		var warned, failed, full int
		for _, r := range logs.at(slog.LevelWarn) {
			if !strings.HasPrefix(r["msg"], "extend lease") {
				continue
			}
			warned++
			f, _ := strconv.Atoi(r["failed"])
			failed += f
			if f > 10 {
				full++
			}
			if r["job"] != "" || f < 1 || strings.Count(r["jobs"], "c/j") != min(f, 10) || !strings.Contains(r["first_err"], "the store is away") {
				t.Errorf("warning %v, want one per pass with how many failed, up to ten jobs and the first error", r)
			}
		}
		// The records of outcomes succeed: each ends the outage, and the
		// next pass's failures begin another. A pass that starts one warns
		// (unless the attempts of all its failed extensions ended
		// meanwhile); the others of the outage log at Debug.
		outages, quiet := 0, 0
		for _, r := range logs.at(slog.LevelError) {
			if strings.HasPrefix(r["msg"], "the store does not answer") && r["call"] == "extend leases" {
				outages++
			}
		}
		for _, r := range logs.only(slog.LevelDebug) {
			if strings.HasPrefix(r["msg"], "extend lease") {
				quiet++
			}
		}
		if full == 0 || warned == 0 || warned > outages || quiet == 0 || failed < n {
			t.Errorf("%d warnings and %d debug lines of %d extensions that failed, %d of more than ten, in %d outages; want a warning only in the pass that starts an outage, one of the %d leases' extensions",
				warned, quiet, failed, full, outages, n)
		}
	})
}

// heldRecords is a store whose first RecordBatch takes hold before it
// records, and that counts the outcomes recorded of each job.
type heldRecords struct {
	*memory.Store
	hold time.Duration
	held atomic.Bool
	mu   sync.Mutex
	n    map[string]int // by job name
}

func (s *heldRecords) RecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) []error {
	if s.held.CompareAndSwap(false, true) {
		time.Sleep(s.hold)
	}
	names := make([]string, len(batch)) // read first: the store may keep the records
	for i, req := range batch {
		names[i] = req.Job.Name
	}
	errs := s.Store.RecordBatch(ctx, owner, batch)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, name := range names {
		if errs == nil || errs[i] == nil {
			s.n[name]++
		}
	}
	return errs
}

func (s *heldRecords) Record(ctx context.Context, owner string, r *scheduler.JobRecord, hist []scheduler.HistoryEntry) error {
	name := r.Name
	err := s.Store.Record(ctx, owner, r, hist)
	if err == nil {
		s.mu.Lock()
		s.n[name]++
		s.mu.Unlock()
	}
	return err
}

// TestLeaseKeptWhileOutcomeWaitsForStore checks that the lease of a job
// whose attempt has ended is kept while its outcome waits for a store
// call, and during the call: a store whose RecordBatch takes three leases
// must not let this instance or another claim and run a one-time job
// again.
func TestLeaseKeptWhileOutcomeWaitsForStore(t *testing.T) {
	const n = 20
	const lease = 3 * time.Second
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var mu sync.Mutex
		runs := map[string]int{}
		reg := countRuns(&mu, runs)
		st := &heldRecords{Store: memory.New(), hold: 3 * lease, n: map[string]int{}}
		cfg := scheduler.Config{Executors: reg, LeaseDuration: lease, PollInterval: 100 * time.Millisecond, MaxConcurrency: 4,
			Logger: slog.New(slog.DiscardHandler)}
		ss := instances(t, st, cfg, "a", "b")
		due := time.Now().Add(time.Minute)
		for i := range n {
			def := &scheduler.Job{StartTime: &due, Action: action.Action{Type: "Noop", Custom: []byte(`{}`)}}
			if _, err := ss[0].PutJob(ctx, "c", fmt.Sprintf("j%02d", i), def, nil); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range ss {
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Until(due) + 10*lease)
		synctest.Wait()
		for _, s := range ss {
			if err := s.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for i := range n {
			name := fmt.Sprintf("j%02d", i)
			r, err := st.GetJob(ctx, "c", name)
			if err != nil {
				t.Fatal(err)
			}
			if got := runs[r.ID()]; got != 1 || r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 1 || st.n[name] != 1 {
				t.Errorf("one-time job %s: ran %d times, %d outcomes recorded, state %s, %d executions; want 1, 1, Completed, 1",
					name, got, st.n[name], r.State, r.Status.ExecutionCount)
			}
		}
	})
}

// conflictThenSlowRead is a store whose first RecordBatch fails with
// ErrConflict, and whose next GetJob takes hold before it reads.
type conflictThenSlowRead struct {
	*memory.Store
	hold       time.Duration
	conflicted atomic.Bool
	slowed     atomic.Bool
}

func (s *conflictThenSlowRead) RecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) []error {
	if s.conflicted.CompareAndSwap(false, true) {
		errs := make([]error, len(batch))
		for i := range errs {
			errs[i] = scheduler.ErrConflict
		}
		return errs
	}
	return s.Store.RecordBatch(ctx, owner, batch)
}

func (s *conflictThenSlowRead) GetJob(ctx context.Context, collection, name string) (*scheduler.JobRecord, error) {
	if s.conflicted.Load() && s.slowed.CompareAndSwap(false, true) {
		time.Sleep(s.hold)
	}
	return s.Store.GetJob(ctx, collection, name)
}

// TestLeaseKeptWhileConflictedOutcomeIsReread checks that the lease of a
// job whose outcome met ErrConflict is kept while the job is read again
// and the outcome recorded on the fresh record: a read that takes three
// leases must not let another instance claim and run a one-time job again.
func TestLeaseKeptWhileConflictedOutcomeIsReread(t *testing.T) {
	const lease = 3 * time.Second
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var runs atomic.Int64
		reg := &action.Registry{}
		reg.Register("Noop", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			runs.Add(1)
			return nil, nil
		}))
		st := &conflictThenSlowRead{Store: memory.New(), hold: 3 * lease}
		cfg := scheduler.Config{Executors: reg, LeaseDuration: lease, PollInterval: 100 * time.Millisecond,
			Logger: slog.New(slog.DiscardHandler)}
		ss := instances(t, st, cfg, "a", "b")
		due := time.Now().Add(time.Minute)
		def := &scheduler.Job{StartTime: &due, Action: action.Action{Type: "Noop", Custom: []byte(`{}`)}}
		if _, err := ss[0].PutJob(ctx, "c", "j", def, nil); err != nil {
			t.Fatal(err)
		}
		if err := ss[0].Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(due) + lease/2) // a runs the job and meets the conflict
		synctest.Wait()
		if err := ss[1].Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * lease)
		synctest.Wait()
		for _, s := range ss {
			if err := s.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		}
		r, err := st.Store.GetJob(ctx, "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		if got := runs.Load(); got != 1 || r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 1 {
			t.Errorf("one-time job: ran %d times, state %s, %d executions; want 1, Completed, 1", got, r.State, r.Status.ExecutionCount)
		}
	})
}

// countRuns returns a registry whose "Noop" executor counts the attempts
// of each job in runs (by job ID), under mu.
func countRuns(mu *sync.Mutex, runs map[string]int) *action.Registry {
	reg := &action.Registry{}
	reg.Register("Noop", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		mu.Lock()
		runs[req.IDs.JobID()]++
		mu.Unlock()
		return nil, nil
	}))
	return reg
}

// countSlowRuns returns countRuns's registry with a "Slow" executor too,
// which counts the attempts alike and then takes d.
func countSlowRuns(mu *sync.Mutex, runs map[string]int, d time.Duration) *action.Registry {
	reg := countRuns(mu, runs)
	reg.Register("Slow", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		mu.Lock()
		runs[req.IDs.JobID()]++
		mu.Unlock()
		time.Sleep(d)
		return nil, nil
	}))
	return reg
}

// slowPermitRelease is a store whose first ReleasePermits takes hold.
type slowPermitRelease struct {
	*memory.Store
	hold time.Duration
	held atomic.Bool
}

func (s *slowPermitRelease) ReleasePermits(ctx context.Context, holder string) error {
	if s.held.CompareAndSwap(false, true) {
		time.Sleep(s.hold)
	}
	return s.Store.ReleasePermits(ctx, holder)
}

// TestLeaseKeptWhilePermitsReleased checks that the job's lease is kept
// while its attempt's permits of the collection's limits are given back:
// that ReleasePermits takes three leases, and a second instance started
// meanwhile must not take the one-time job over and run it again.
func TestLeaseKeptWhilePermitsReleased(t *testing.T) {
	const lease = 3 * time.Second
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var mu sync.Mutex
		runs := map[string]int{}
		st := &slowPermitRelease{Store: memory.New(), hold: 3 * lease}
		cfg := scheduler.Config{Executors: countRuns(&mu, runs), LeaseDuration: lease, PollInterval: 100 * time.Millisecond,
			Logger: slog.New(slog.DiscardHandler)}
		ss := instances(t, st, cfg, "a", "b")
		putLimits(t, ss[0], scheduler.Limit{Key: scheduler.LimitCollection, MaxConcurrent: 100})
		due := time.Now().Add(time.Minute)
		def := &scheduler.Job{StartTime: &due, Action: action.Action{Type: "Noop", Custom: []byte(`{}`)}}
		if _, err := ss[0].PutJob(ctx, "c", "j", def, nil); err != nil {
			t.Fatal(err)
		}
		startSecondLater(t, ss, time.Until(due)+lease/2, 10*lease)
		mu.Lock()
		defer mu.Unlock()
		if runs["c/j"] != 1 {
			t.Errorf("one-time job ran %d times, want 1", runs["c/j"])
		}
	})
}

// TestNoJobWaitsForFlushingWorker checks that the worker that records
// outcomes counts as busy while its RecordBatch is under way: with one
// worker and that call held for ten leases, the loop must not claim the
// second job due meanwhile (it would wait for the worker, its lease
// unextended, and run although a second instance took it over); the
// second instance runs it, and each one-time job runs once.
func TestNoJobWaitsForFlushingWorker(t *testing.T) {
	const lease = 3 * time.Second
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var mu sync.Mutex
		runs := map[string]int{}
		st := &heldRecords{Store: memory.New(), hold: 10 * lease, n: map[string]int{}}
		cfg := scheduler.Config{Executors: countRuns(&mu, runs), LeaseDuration: lease, PollInterval: 100 * time.Millisecond, MaxConcurrency: 1,
			Logger: slog.New(slog.DiscardHandler)}
		ss := instances(t, st, cfg, "a", "b")
		t0 := time.Now().Add(time.Minute)
		for i, at := range []time.Time{t0, t0.Add(time.Second)} {
			def := &scheduler.Job{StartTime: &at, Action: action.Action{Type: "Noop", Custom: []byte(`{}`)}}
			if _, err := ss[0].PutJob(ctx, "c", fmt.Sprintf("j%d", i+1), def, nil); err != nil {
				t.Fatal(err)
			}
		}
		startSecondLater(t, ss, time.Until(t0)+2*time.Second, 20*lease)
		mu.Lock()
		defer mu.Unlock()
		for _, name := range []string{"c/j1", "c/j2"} {
			if runs[name] != 1 {
				t.Errorf("one-time job %s ran %d times, want 1", name, runs[name])
			}
		}
	})
}

// lostWhileWaiting is a store whose ExtendLease says that it finds the
// leases of the jobs in lost taken over (ErrLeaseLost), and that it fails
// for the others as a store that is away does; it extends them all.
type lostWhileWaiting struct {
	*heldRecords
	lost map[string]bool // by job name
}

func (s *lostWhileWaiting) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	if err := s.heldRecords.ExtendLease(ctx, collection, name, owner, until); err != nil {
		return err
	}
	if s.lost[name] {
		return fmt.Errorf("extend lease of %s: %w", name, scheduler.ErrLeaseLost)
	}
	return errors.New("extend lease: the store is away")
}

func (s *lostWhileWaiting) ExtendLeases(ctx context.Context, owner string, until time.Time, jobs []scheduler.JobKey) []error {
	return extendEach(ctx, s.ExtendLease, owner, until, jobs)
}

// TestLeaseLostWhileOutcomeWaitsWarned checks that a lease found lost
// while its job's outcome waits to be sent to the store is warned of,
// first among the extensions that failed in the pass (its error is the
// one logged, its job leads the sample, ahead of the twelve running
// attempts' whose store is away); while the outcome's store call is under
// way, a lease found lost is not: the record may have released it.
func TestLeaseLostWhileOutcomeWaitsWarned(t *testing.T) {
	const lease, slow = 3 * time.Second, 12
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		reg := &action.Registry{}
		reg.Register("Noop", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			return nil, nil
		}))
		reg.Register("Slow", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			time.Sleep(5 * time.Second) // ignores its context
			return nil, nil
		}))
		logs := &logRecords{}
		st := &lostWhileWaiting{heldRecords: &heldRecords{Store: memory.New(), hold: 10 * lease, n: map[string]int{}},
			lost: map[string]bool{"sent": true, "waits": true}}
		cfg := scheduler.Config{Executors: reg, LeaseDuration: lease, ActionTimeout: time.Minute, MaxConcurrency: 20,
			PollInterval: 100 * time.Millisecond, Logger: slog.New(logs)}
		s := instances(t, st, cfg, "a")[0]
		t0 := time.Now().Add(time.Minute)
		put := func(name string, typ action.Type, at time.Time) {
			def := &scheduler.Job{StartTime: &at, Action: action.Action{Type: typ, Custom: []byte(`{}`)}}
			if _, err := s.PutJob(ctx, "c", name, def, nil); err != nil {
				t.Fatal(err)
			}
		}
		put("sent", "Noop", t0) // its outcome goes to the RecordBatch held
		put("waits", "Noop", t0.Add(time.Second))
		for i := range slow {
			put(fmt.Sprintf("slow%02d", i), "Slow", t0.Add(time.Second))
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(t0) + 4*time.Second)
		synctest.Wait()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		var leading int
		for _, r := range logs.at(slog.LevelWarn) {
			if !strings.HasPrefix(r["msg"], "extend lease") {
				continue
			}
			if strings.Contains(r["jobs"], "c/sent") {
				t.Errorf("warning %v names the job whose outcome's store call is under way", r)
			}
			if strings.HasPrefix(r["jobs"], "[c/waits") && strings.Contains(r["first_err"], "lease") && strings.Count(r["jobs"], "c/") == 10 {
				leading++
			}
		}
		if leading == 0 {
			t.Errorf("no warning of extensions led by the lease lost of the outcome waiting, its error and ten jobs; warnings: %v", logs.at(slog.LevelWarn))
		}
	})
}

// slowExtensions is a store whose ExtendLease takes d, and so does each
// ExtendLeases call, however many leases it extends: a store whose
// answer takes a round trip, not its work.
type slowExtensions struct {
	*heldRecords
	d time.Duration
}

func (s *slowExtensions) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	time.Sleep(s.d)
	return s.heldRecords.ExtendLease(ctx, collection, name, owner, until)
}

func (s *slowExtensions) ExtendLeases(ctx context.Context, owner string, until time.Time, jobs []scheduler.JobKey) []error {
	time.Sleep(s.d)
	return s.heldRecords.ExtendLeases(ctx, owner, until, jobs)
}

// countedExtensions is a slowExtensions that counts its calls.
type countedExtensions struct {
	*slowExtensions
	one, many, leases atomic.Int64 // ExtendLease calls, ExtendLeases calls, leases ExtendLeases was asked to extend
}

func (s *countedExtensions) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	s.one.Add(1)
	return s.slowExtensions.ExtendLease(ctx, collection, name, owner, until)
}

func (s *countedExtensions) ExtendLeases(ctx context.Context, owner string, until time.Time, jobs []scheduler.JobKey) []error {
	s.many.Add(1)
	s.leases.Add(int64(len(jobs)))
	return s.slowExtensions.ExtendLeases(ctx, owner, until, jobs)
}

// oneByOne is a store whose leases the lease keeper extends with an
// ExtendLease call per job: it has the Store, BatchRecorder and
// AheadClaimer of the store it is made of, and not its LeaseExtender.
type oneByOne struct {
	scheduler.Store
	scheduler.BatchRecorder
	scheduler.AheadClaimer
}

// byCall returns st as itself (a LeaseExtender) and as a oneByOne, by the
// name of the call that extends leases.
func byCall(st *countedExtensions) map[string]scheduler.Store {
	return map[string]scheduler.Store{"ExtendLeases": st, "ExtendLease": oneByOne{st, st, st}}
}

// ranNotOnce returns how many of the jobs c/j0000 to c/j<n-1> did not
// run exactly once, by runs.
func ranNotOnce(runs map[string]int, n int) int {
	not := 0
	for i := range n {
		if runs[fmt.Sprintf("c/j%04d", i)] != 1 {
			not++
		}
	}
	return not
}

// TestRunningLeaseExtendedBesideWaitingOutcomes checks that the lease of
// a running attempt is extended on time while the leases of many
// outcomes waiting for the store are extended too: 2,000 outcomes wait
// for a RecordBatch held ten leases, over a store that takes 50ms a call.
// The attempt that runs five minutes meanwhile must keep its lease, and a
// second instance must not run its one-time job again. With one
// ExtendLease per job the extensions of the waiting outcomes' leases take
// about two leases a pass; with ExtendLeases, one call per 1,000 leases,
// they take 50ms, and none of the waiting outcomes' jobs may run again
// either.
func TestRunningLeaseExtendedBesideWaitingOutcomes(t *testing.T) {
	const lease, n = 3 * time.Second, 2000
	for _, call := range []string{"ExtendLease", "ExtendLeases"} {
		t.Run(call, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				var mu sync.Mutex
				runs := map[string]int{}
				reg := countSlowRuns(&mu, runs, 5*time.Minute)
				st := &countedExtensions{slowExtensions: &slowExtensions{
					heldRecords: &heldRecords{Store: memory.New(), hold: 10 * lease, n: map[string]int{}}, d: 50 * time.Millisecond}}
				cfg := scheduler.Config{Executors: reg, LeaseDuration: lease, PollInterval: 100 * time.Millisecond, MaxConcurrency: 100,
					ActionTimeout: 10 * time.Minute, HistoryPerJob: scheduler.NoHistory, Logger: slog.New(slog.DiscardHandler)}
				ss := instances(t, byCall(st)[call], cfg, "a", "b")
				quota := &scheduler.Quota{MaxJobCount: n + 1}
				if _, err := ss[0].PutCollection(ctx, "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: quota}}, nil); err != nil {
					t.Fatal(err)
				}
				due := time.Now().Add(time.Minute)
				put := func(name string, typ action.Type) {
					def := &scheduler.Job{StartTime: &due, Action: action.Action{Type: typ, Custom: []byte(`{}`)}}
					if _, err := ss[0].PutJob(ctx, "c", name, def, nil); err != nil {
						t.Fatal(err)
					}
				}
				put("long", "Slow")
				for i := range n {
					put(fmt.Sprintf("j%04d", i), "Noop")
				}
				startSecondLater(t, ss, time.Until(due)+2*time.Second, 20*lease)
				mu.Lock()
				defer mu.Unlock()
				if runs["c/long"] != 1 {
					t.Errorf("the running one-time job ran %d times, want 1", runs["c/long"])
				}
				if not := ranNotOnce(runs, n); call == "ExtendLeases" && not > 0 {
					t.Errorf("%d of %d one-time jobs whose outcomes waited did not run exactly once", not, n)
				}
				t.Logf("%d ExtendLease calls; %d ExtendLeases calls, of %d leases", st.one.Load(), st.many.Load(), st.leases.Load())
			})
		})
	}
}

// slowClaimOf is a store whose ClaimDue takes d more when it claims job
// c/<name>, and that notes how much of that job's lease is left when its
// first extension comes.
type slowClaimOf struct {
	*memory.Store
	name string
	d    time.Duration
	mu   sync.Mutex
	left time.Duration // at the first extension; 0 until then
}

func (s *slowClaimOf) ClaimDue(ctx context.Context, now time.Time, owner string, until time.Time, limit int) ([]*scheduler.JobRecord, error) {
	claims, err := s.Store.ClaimDue(ctx, now, owner, until, limit)
	for _, r := range claims {
		if r.Name == s.name {
			time.Sleep(s.d)
		}
	}
	return claims, err
}

func (s *slowClaimOf) noteLeft(jobs ...scheduler.JobKey) {
	for _, k := range jobs {
		if k.Name != s.name {
			continue
		}
		s.mu.Lock()
		if s.left == 0 {
			if r, err := s.Store.GetJob(context.Background(), k.Collection, k.Name); err == nil {
				s.left = time.Until(r.LeaseUntil)
			}
		}
		s.mu.Unlock()
	}
}

func (s *slowClaimOf) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	s.noteLeft(scheduler.JobKey{Collection: collection, Name: name})
	return s.Store.ExtendLease(ctx, collection, name, owner, until)
}

func (s *slowClaimOf) ExtendLeases(ctx context.Context, owner string, until time.Time, jobs []scheduler.JobKey) []error {
	s.noteLeft(jobs...)
	return s.Store.ExtendLeases(ctx, owner, until, jobs)
}

// TestFirstExtensionFromLeaseLeft checks that the first extension of the
// lease of an attempt is timed from the lease left when it starts, not
// from its start alone: a claim that took 1.8s of a 6s lease leaves the
// attempt 4.2s, and the lease keeper's passes (every second, for another
// attempt's lease) come 0.6s after the attempt's start and each second
// on. Timed from the start, the first extension would come at the pass
// 1.6s after it, 2.6s before the lease ends; it must come while at least
// half of the lease is left, as it does for a lease taken when its
// attempt starts.
func TestFirstExtensionFromLeaseLeft(t *testing.T) {
	const lease = 6 * time.Second
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		started := make(chan time.Time, 2)
		reg := &action.Registry{}
		reg.Register("Slow", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			started <- time.Now()
			time.Sleep(5 * lease)
			return nil, nil
		}))
		st := &slowClaimOf{Store: memory.New(), name: "b", d: 1800 * time.Millisecond}
		cfg := scheduler.Config{Executors: reg, LeaseDuration: lease, ClaimAhead: scheduler.NoClaimAhead, ActionTimeout: time.Minute,
			Logger: slog.New(slog.DiscardHandler)}
		ss := instances(t, st, cfg, "a")
		put := func(name string, at time.Time) {
			def := &scheduler.Job{StartTime: &at, Action: action.Action{Type: "Slow", Custom: []byte(`{}`)}}
			if _, err := ss[0].PutJob(ctx, "c", name, def, nil); err != nil {
				t.Fatal(err)
			}
		}
		put("a", time.Now().Add(time.Minute))
		if err := ss[0].Start(ctx); err != nil {
			t.Fatal(err)
		}
		startA := <-started
		// b is claimed 0.6s after a starts, and starts 1.8s later.
		time.Sleep(time.Until(startA.Add(300 * time.Millisecond)))
		put("b", startA.Add(600*time.Millisecond))
		startB := <-started
		time.Sleep(2 * lease)
		st.mu.Lock()
		left := st.left
		st.mu.Unlock()
		if err := ss[0].Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if got := startB.Sub(startA); got != 2400*time.Millisecond {
			t.Fatalf("b started %v after a, want 2.4s (the test's timing is off)", got)
		}
		if left < lease/2 {
			t.Errorf("the first extension of b's lease came with %v of it left, want at least %v", left, lease/2)
		}
	})
}

// startSecondLater starts ss[0], then ss[1] after first, and stops both
// after then more, each wait inside synctest's bubble until it is idle.
func startSecondLater(t *testing.T, ss []*scheduler.Scheduler, first, then time.Duration) {
	t.Helper()
	ctx := context.Background()
	for i, d := range []time.Duration{first, then} {
		if err := ss[i].Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(d)
		synctest.Wait()
	}
	for _, s := range ss {
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestObservedLeasesExtendedTogether checks that the lease keeper of a
// Scheduler with an Observer (and one that keeps no history, whose store
// records without it) extends leases through the store's ExtendLeases,
// and tells the Observer of each call, rather than falling back to an
// ExtendLease per job.
func TestObservedLeasesExtendedTogether(t *testing.T) {
	for _, perJob := range []int{0, scheduler.NoHistory} {
		t.Run(fmt.Sprintf("HistoryPerJob=%d", perJob), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const lease = 3 * time.Second
				ctx := context.Background()
				var mu sync.Mutex
				runs := map[string]int{}
				obs := &storeCalls{}
				cfg := scheduler.Config{Executors: countSlowRuns(&mu, runs, 3*lease), LeaseDuration: lease, ActionTimeout: time.Minute,
					HistoryPerJob: perJob, Observer: obs, Logger: slog.New(slog.DiscardHandler)}
				ss := instances(t, memory.New(), cfg, "a")
				due := time.Now().Add(time.Second)
				def := &scheduler.Job{StartTime: &due, Action: action.Action{Type: "Slow", Custom: []byte(`{}`)}}
				if _, err := ss[0].PutJob(ctx, "c", "j", def, nil); err != nil {
					t.Fatal(err)
				}
				if err := ss[0].Start(ctx); err != nil {
					t.Fatal(err)
				}
				time.Sleep(5 * lease)
				synctest.Wait()
				if err := ss[0].Stop(ctx); err != nil {
					t.Fatal(err)
				}
				if n, one := obs.count("ExtendLeases"), obs.count("ExtendLease"); n == 0 || one != 0 {
					t.Errorf("the Observer saw %d ExtendLeases and %d ExtendLease calls, want some and none", n, one)
				}
			})
		})
	}
}

// longAnswer is a store whose ExtendLeases extends the leases and answers
// one error more than it was given jobs, for none of them.
type longAnswer struct{ *memory.Store }

func (s longAnswer) ExtendLeases(ctx context.Context, owner string, until time.Time, jobs []scheduler.JobKey) []error {
	s.Store.ExtendLeases(ctx, owner, until, jobs)
	return append(make([]error, len(jobs)), errors.New("an error of no job"))
}

// TestExtendLeasesWrongAnswer: an answer of ExtendLeases with more errors
// than jobs fails the call's extensions, with a warning, as a call that
// failed as a whole does.
func TestExtendLeasesWrongAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		reg := &action.Registry{}
		reg.Register("Slow", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			time.Sleep(5 * time.Second)
			return nil, nil
		}))
		logs := &logRecords{}
		cfg := scheduler.Config{Executors: reg, LeaseDuration: 3 * time.Second, ActionTimeout: time.Minute,
			PollInterval: 100 * time.Millisecond, Logger: slog.New(logs)}
		s := instances(t, longAnswer{memory.New()}, cfg, "a")[0]
		due := time.Now().Add(time.Second)
		def := &scheduler.Job{StartTime: &due, Action: action.Action{Type: "Slow", Custom: []byte(`{}`)}}
		if _, err := s.PutJob(ctx, "c", "j", def, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		warned := 0
		for _, r := range logs.at(slog.LevelWarn) {
			if strings.HasPrefix(r["msg"], "extend lease") && strings.Contains(r["first_err"], "returned 2 errors for 1 jobs") && r["jobs"] == "[c/j]" {
				warned++
			}
		}
		if warned == 0 {
			t.Errorf("no warning of the extension that ExtendLeases answered with 2 errors for 1 job; warnings: %v", logs.at(slog.LevelWarn))
		}
	})
}
