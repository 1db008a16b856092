package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// leaseKeeper extends the leases of the jobs whose attempts are running
// or whose outcomes wait to be recorded, and the claims on the attempts of
// occurrences that run beside the job's others ([Run]): one timer for all
// of them, armed only while there are some, rather than one per attempt.
// A worker's attempts hold their leases in the worker's own slot, so that
// attempts on different workers share no lock; other attempts (and
// outcomes being recorded again) in held. Outcomes waiting in the batch
// for a RecordBatch call, or in it, hold theirs in the batch itself (see
// outcomeBatch.dueLeases), which costs them no entry of their own.
type leaseKeeper struct {
	mu    sync.Mutex
	held  map[*JobRecord]heldLease // by the attempt's record
	slots []*leaseSlot             // the workers'
	runs  map[*heldRun]struct{}    // see holdRun
	armed atomic.Bool              // the timer runs or will run extendLeases
	// waiting says that the extensions of the leases of outcomes waiting
	// for the store are under way (see extendLeases).
	waiting atomic.Bool
	// closed says that Stop ended the keeper: it makes no more calls to
	// the store. Set under mu, which orders it with calls.Add.
	closed atomic.Bool
	calls  sync.WaitGroup // the passes and extendAllWaiting under way
}

// close ends the lease keeper, once Stop has waited for the attempts and
// the outcomes (none is left to extend), and returns when its calls to
// the store under way have returned: none starts after.
func (k *leaseKeeper) close() {
	k.mu.Lock()
	k.closed.Store(true)
	k.mu.Unlock()
	k.calls.Wait()
}

// leaseSlot is the lease of the attempt that a worker runs, if any.
type leaseSlot struct {
	mu sync.Mutex
	r  *JobRecord // the attempt's record (compared, not read); nil: none
	heldLease
}

// addSlot registers and returns a worker's slot; removeSlot undoes it.
func (k *leaseKeeper) addSlot() *leaseSlot {
	sl := new(leaseSlot)
	k.mu.Lock()
	k.slots = append(k.slots, sl)
	k.mu.Unlock()
	return sl
}

func (k *leaseKeeper) removeSlot(sl *leaseSlot) {
	k.mu.Lock()
	if i := slices.Index(k.slots, sl); i >= 0 {
		k.slots = slices.Delete(k.slots, i, i+1)
	}
	k.mu.Unlock()
}

// holds reports whether the lease on job collection/name held for record
// r is still held. k.mu is held.
func (k *leaseKeeper) holds(r *JobRecord, collection, name string) bool {
	if h, ok := k.held[r]; ok && h.collection == collection && h.name == name {
		return true
	}
	for _, sl := range k.slots {
		sl.mu.Lock()
		ok := sl.r == r && sl.collection == collection && sl.name == name
		sl.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// holdsPermits reports whether an attempt's lease is held with permits p:
// not once the attempt ended, which gives them back.
func (k *leaseKeeper) holdsPermits(p *heldPermits) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, h := range k.held {
		if h.permits == p {
			return true
		}
	}
	for _, sl := range k.slots {
		sl.mu.Lock()
		ok := sl.r != nil && sl.permits == p
		sl.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// forget notes that the lease on job collection/name held for record r
// belongs to a job deleted since, and reports whether it was still held
// and not noted before. k.mu is held.
func (k *leaseKeeper) forget(r *JobRecord, collection, name string) bool {
	if h, ok := k.held[r]; ok && h.collection == collection && h.name == name {
		if h.deleted {
			return false
		}
		h.deleted = true
		k.held[r] = h
		return true
	}
	for _, sl := range k.slots {
		sl.mu.Lock()
		ok := sl.r == r && sl.collection == collection && sl.name == name && !sl.deleted
		if ok {
			sl.deleted = true
		}
		sl.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// active reports whether any lease or claim is held. k.mu is held.
func (k *leaseKeeper) active() bool {
	if len(k.held) > 0 || len(k.runs) > 0 {
		return true
	}
	for _, sl := range k.slots {
		sl.mu.Lock()
		ok := sl.r != nil
		sl.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// heldLease is a lease that leaseKeeper extends. It names the job itself:
// once its attempt ended, the record may be the store's again (see
// [BatchRecorder]), so an extension under way must not read it.
type heldLease struct {
	at               time.Time // when to extend it
	collection, name string
	permits          *heldPermits // the attempt's permits (see Limiter); nil: none
	// incarnation and created are the attempt's job's (see
	// JobRecord.sameJob), which tell it from a job created again under
	// its name.
	incarnation int64
	created     time.Time
	// deleted says that an extension found the job gone (ErrNotFound),
	// or found its name held by another job (deleted and created again):
	// it was deleted while its attempt ran. The lease is not extended
	// again; the attempt's permits still are, while it runs.
	deleted bool
}

// holdLease keeps the lease on r until dropLease, extending it first at
// about at (see firstExtension when its attempt starts; a third of
// Config.LeaseDuration after the lease was last extended) and then about every third of
// Config.LeaseDuration, also past the attempt's timeout when an executor
// ignores its context, and so are the permits of the collection's limits
// permits (none when nil). slot is the worker's that runs the
// attempt, nil when none does.
func (s *Scheduler) holdLease(r *JobRecord, at time.Time, slot *leaseSlot, permits *heldPermits) {
	k := &s.leases
	h := heldLease{at: at, collection: r.Collection, name: r.Name, permits: permits, incarnation: r.Incarnation, created: r.Created}
	if slot != nil {
		slot.mu.Lock()
		slot.r, slot.heldLease = r, h
		slot.mu.Unlock()
	} else {
		k.mu.Lock()
		if k.held == nil {
			k.held = make(map[*JobRecord]heldLease)
		}
		k.held[r] = h
		k.mu.Unlock()
	}
	// After the lease is in place: extendLeases disarms before it
	// looks for leases, so one of the two sees the other.
	s.armLeases()
}

// firstExtension returns when the lease on r, whose attempt starts at
// start, is first due for an extension: a third of Config.LeaseDuration
// after start, or sooner when the lease has less than two thirds of a
// LeaseDuration left at start (its claim's store calls took some of it,
// or the claim was held until its instant), when it has two thirds left,
// as an extension leaves a lease a third of LeaseDuration on.
func (s *Scheduler) firstExtension(r *JobRecord, start time.Time) time.Time {
	at := start.Add(s.cfg.LeaseDuration / 3)
	if r.LeaseUntil.IsZero() {
		return at
	}
	return minTime(at, r.LeaseUntil.Add(-s.cfg.LeaseDuration*2/3))
}

// armLeases arms the timer that runs extendLeases unless it is armed.
func (s *Scheduler) armLeases() {
	if k := &s.leases; !k.armed.Load() && k.armed.CompareAndSwap(false, true) {
		time.AfterFunc(s.cfg.LeaseDuration/6, s.extendLeases)
	}
}

// dropLease ends holdLease, and returns when the lease was next due for
// an extension, for whatever holds it next: zero (due at once) when none
// was held.
func (s *Scheduler) dropLease(r *JobRecord, slot *leaseSlot) (at time.Time) {
	if slot != nil {
		slot.mu.Lock()
		at = slot.at
		slot.r, slot.heldLease = nil, heldLease{}
		slot.mu.Unlock()
		return at
	}
	k := &s.leases
	k.mu.Lock()
	at = k.held[r].at
	delete(k.held, r)
	k.mu.Unlock()
	return at
}

// extendLeases runs every sixth of Config.LeaseDuration while attempts
// run or outcomes wait in the batch to be recorded (see
// outcomeBatch.dueLeases). It extends the leases due for it within half a
// period, so that each is extended at most a third of the lease after it
// was taken or last extended, two thirds before it would expire.
func (s *Scheduler) extendLeases() {
	k := &s.leases
	every := s.cfg.LeaseDuration / 3
	now := time.Now()
	type dueLease struct {
		r *JobRecord // compared, not read
		heldLease
	}
	var due []dueLease
	k.mu.Lock()
	if k.closed.Load() {
		k.mu.Unlock()
		return // armed stays set: no timer is armed again
	}
	k.calls.Add(1)
	defer k.calls.Done()
	for r, h := range k.held {
		if !now.Before(h.at.Add(-every / 2)) {
			h.at = now.Add(every)
			k.held[r] = h
			due = append(due, dueLease{r, h})
		}
	}
	for _, sl := range k.slots {
		sl.mu.Lock()
		if sl.r != nil && !now.Before(sl.at.Add(-every/2)) {
			sl.at = now.Add(every)
			due = append(due, dueLease{sl.r, sl.heldLease})
		}
		sl.mu.Unlock()
	}
	runs := k.dueRuns(now, every, s.execCtx.Err() == nil)
	k.mu.Unlock()
	// The outcomes waiting for the store may be thousands, an
	// ExtendLease each: their extensions go on beside the pass, with
	// their own calls, so that the running attempts' leases are not
	// extended behind them, nor the next pass delayed until they are
	// done. Those due while they are under way wait for the next pass
	// that finds them done (their leaseAt is left as it was).
	if k.waiting.CompareAndSwap(false, true) {
		if waiting := s.outcomes.dueLeases(now, every); len(waiting) > 0 {
			k.calls.Add(1) // while this pass's own is held
			go s.extendAllWaiting(waiting)
		} else {
			k.waiting.Store(false)
		}
	}
	// The extensions run side by side, so that a pass over many leases
	// does not take longer than the leases have left when the store is
	// slow; each lease runs a LeaseDuration from its own call.
	var wg sync.WaitGroup
	var failed leaseFailures
	slots := make(chan struct{}, extendParallel)
	// The leases of jobs deleted while their attempts run go last, and
	// are not extended (their permits are, below).
	live := due
	for i := 0; i < len(live); {
		if live[i].deleted {
			live[i], live[len(live)-1] = live[len(live)-1], live[i]
			live = live[:len(live)-1]
			continue
		}
		i++
	}
	keys := make([]JobKey, len(live))
	for i, d := range live {
		keys[i] = JobKey{d.collection, d.name}
	}
	s.extendKeys(keys, &wg, slots, nil, &failed, func(i int, err error) {
		d := &live[i]
		gone, recreated := errors.Is(err, ErrNotFound), false
		k.mu.Lock()
		running := k.holds(d.r, d.collection, d.name)
		k.mu.Unlock()
		if running && errors.Is(err, ErrLeaseLost) {
			// Another instance took the job over, or the job was deleted
			// and created again, the new one unleased or leased anew: its
			// lease was never the attempt's.
			recreated = s.recreatedSince(&d.heldLease)
			gone = recreated
		}
		if running && gone {
			// Once: the next passes leave the lease alone.
			k.mu.Lock()
			running = k.forget(d.r, d.collection, d.name)
			k.mu.Unlock()
		}
		switch {
		case !running: // the attempt ended and its outcome released the lease, or the deletion was noted
		case recreated:
			// Expected of a job deleted and created again while its
			// attempt runs, as of one deleted.
			s.log.Debug("extend lease: the job was deleted and created again while its attempt ran; the lease is no longer extended",
				"job", d.name, "collection", d.collection)
		case gone:
			// Expected of a job deleted while its attempt runs: no
			// failure of the store, nor of the lease.
			s.log.Debug("extend lease: the job was deleted while its attempt ran; the lease is no longer extended",
				"job", d.name, "collection", d.collection)
		default:
			failed.add(d.collection, d.name, err)
		}
	})
	calls := len(keys) > 0 || len(runs) > 0
	for _, d := range due {
		if d.permits == nil {
			continue
		}
		calls = true
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			failed.note(s.extendPermits(d.permits))
		})
	}
	for _, job := range runs {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			s.extendRuns(job, &failed)
		})
	}
	wg.Wait()
	if calls {
		failed.settle(s)
	}
	k.armed.Store(false)
	k.mu.Lock()
	active := k.active()
	k.mu.Unlock()
	if active || s.outcomes.waiting() {
		s.armLeases()
	}
}

// recreatedSince reports whether the job of h, whose extension met
// ErrLeaseLost, is gone from the store, or its name holds another job
// (deleted and created again): a read of the job tells. When the read
// fails, it reports false, and the extension's failure is logged as a
// lease lost.
func (s *Scheduler) recreatedSince(h *heldLease) bool {
	ctx, cancel := s.extendContext()
	defer cancel()
	fresh, err := s.runStore.GetJob(ctx, h.collection, h.name)
	if err != nil {
		return errors.Is(err, ErrNotFound)
	}
	return !fresh.sameJob(&JobRecord{Incarnation: h.incarnation, Created: h.created})
}

// extendParallel is the most calls extendLeases makes to the store at
// once.
const extendParallel = 16

// extendBatch is the most leases extended in one call of a store that is
// a LeaseExtender.
const extendBatch = 1000

// extendKeys extends the leases on jobs by a LeaseDuration from the start
// of each call, on goroutines of wg, each holding one of slots while its
// call runs: one ExtendLeases call per extendBatch jobs when the store is
// a LeaseExtender, else one ExtendLease per job; a job named more than
// once in jobs is extended once. Once stop (when not nil) reports true,
// it starts no more calls. The answers go to f (see leaseFailures.note),
// and failed is called, on those goroutines, for each place in jobs of a
// job whose extension failed, with the error; a call that failed as a
// whole fails each of its jobs.
func (s *Scheduler) extendKeys(jobs []JobKey, wg *sync.WaitGroup, slots chan struct{}, stop func() bool, f *leaseFailures, failed func(i int, err error)) {
	jobs, places := uniqueKeys(jobs)
	n := 1
	if s.extender != nil {
		n = extendBatch
	}
	for from := 0; from < len(jobs); from += n {
		slots <- struct{}{}
		if stop != nil && stop() {
			<-slots
			return
		}
		chunk := jobs[from:min(from+n, len(jobs))]
		wg.Go(func() {
			defer func() { <-slots }()
			errs := s.extendChunk(chunk)
			if errs == nil || slices.Contains(errs, nil) {
				f.note(nil) // a write succeeded
			}
			for i, err := range errs {
				if err == nil {
					continue
				}
				f.note(err)
				if places == nil {
					failed(from+i, err)
					continue
				}
				for _, p := range places[from+i] {
					failed(p, err)
				}
			}
		})
	}
}

// uniqueKeys returns jobs with each job once, in the order of their
// first places, and, only when some job is named more than once, the
// places in jobs of each job it returns.
func uniqueKeys(jobs []JobKey) ([]JobKey, [][]int) {
	at := make(map[JobKey]int, len(jobs)) // a job's place in the answer
	for _, k := range jobs {
		at[k] = 0
	}
	if len(at) == len(jobs) {
		return jobs, nil
	}
	clear(at)
	var unique []JobKey
	var places [][]int
	for i, k := range jobs {
		j, ok := at[k]
		if !ok {
			j = len(unique)
			at[k] = j
			unique, places = append(unique, k), append(places, nil)
		}
		places[j] = append(places[j], i)
	}
	return unique, places
}

// extendChunk extends the leases on jobs, one job unless the store is a
// LeaseExtender, by a LeaseDuration from now, and returns nil when all
// were extended, else one error per job (nil for those extended). An
// answer of ExtendLeases with as many errors as jobs fails each job, as a
// call that failed as a whole does.
func (s *Scheduler) extendChunk(jobs []JobKey) []error {
	ctx, cancel := s.extendContext()
	defer cancel()
	until := time.Now().Add(s.cfg.LeaseDuration)
	if s.extender == nil {
		if err := s.runStore.ExtendLease(ctx, jobs[0].Collection, jobs[0].Name, s.cfg.InstanceID, until); err != nil {
			return []error{err}
		}
		return nil
	}
	return extendAnswer(s.extender.ExtendLeases(ctx, s.cfg.InstanceID, until, jobs), len(jobs))
}

// extendAnswer returns errs, the answer of an ExtendLeases call of n jobs,
// or, when it has neither none nor n errors, n errors that say so: the
// call failed as a whole.
func extendAnswer(errs []error, n int) []error {
	if errs == nil || len(errs) == n {
		return errs
	}
	err := fmt.Errorf("scheduler: the store's ExtendLeases returned %d errors for %d jobs", len(errs), n)
	errs = make([]error, n)
	for i := range errs {
		errs[i] = err
	}
	return errs
}

// extendAllWaiting extends the leases on jobs, whose outcomes wait to be
// recorded (see extendKeys), logs those that failed, and ends the lease
// keeper's waiting. Once the keeper is closed, it starts no more
// extensions. ErrNotFound is what a job deleted meets, and ErrLeaseLost
// what an outcome sent to the store since meets (its record released the
// lease, or may have, its call still under way): neither is logged.
// ErrLeaseLost while the outcome still waits to be sent means that
// another instance took the job over.
func (s *Scheduler) extendAllWaiting(waiting []jobKey) {
	k := &s.leases
	defer k.calls.Done()
	defer k.waiting.Store(false)
	jobs := make([]JobKey, len(waiting))
	for i, j := range waiting {
		jobs[i] = JobKey{j.collection, j.name}
	}
	var wg sync.WaitGroup
	var failed leaseFailures
	slots := make(chan struct{}, extendParallel)
	s.extendKeys(jobs, &wg, slots, k.closed.Load, &failed, func(i int, err error) {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrLeaseLost) && !s.outcomes.unsent(waiting[i]) {
			return
		}
		failed.add(jobs[i].Collection, jobs[i].Name, err)
	})
	wg.Wait()
	if len(jobs) > 0 {
		failed.settle(s)
	}
}

// extendContext returns the context of one of the lease keeper's calls
// to the store: it ends a third of Config.LeaseDuration from now, when
// the lease is next due for an extension, so that a call that hangs
// holds up neither its pass nor the extensions of the leases of other
// calls.
func (s *Scheduler) extendContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.cfg.LeaseDuration/3)
}

// leaseFailures tallies the extensions of one pass of the lease keeper
// that failed, so that they are logged in one line however many there
// are: while the store is away every extension fails alike, and a line
// each per pass would flood the log. An error that is not the store's
// failure (see transient), a lease lost say, comes first: its error is
// the one logged, and its jobs lead the sample. Safe for concurrent use.
type leaseFailures struct {
	mu     sync.Mutex
	n      int
	err    error    // the first error not transient, else the first
	sample []string // the first keptSample jobs, those of errors not transient first
	firm   int      // how many of sample failed with an error not transient
	// storeErr is the first failure of the store (see transient) among
	// the pass's calls, whether or not its job counts among the failures
	// (its attempt may have ended meanwhile): nil when the store answered
	// every call.
	storeErr error
	// wrote says that one of the pass's writes succeeded.
	wrote bool
}

// note notes the answer err of one of the pass's writes (a lease's
// extension, a claim's on an attempt that runs beside others, a
// permits'), or of a read that failed before one: a failure of the store
// counts toward an outage, and nil, a write that succeeded, may end one
// (see settle); another error, a verdict of the store that wrote
// nothing, does neither.
func (f *leaseFailures) note(err error) {
	if err != nil && !transient(err) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case err == nil:
		f.wrote = true
	case f.storeErr == nil:
		f.storeErr = err
	}
}

// add notes that the extension of the lease on job collection/name
// failed with err.
func (f *leaseFailures) add(collection, name string, err error) {
	id := jobID(collection, name)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if transient(err) {
		if f.err == nil {
			f.err = err
		}
		if len(f.sample) < keptSample {
			f.sample = append(f.sample, id)
		}
		return
	}
	if f.firm == 0 {
		f.err = err
	}
	if f.firm < keptSample {
		if len(f.sample) == keptSample {
			f.sample = f.sample[:keptSample-1] // a transient one's job makes room
		}
		f.sample = slices.Insert(f.sample, f.firm, id)
		f.firm++
	}
}

// settle ends a pass that made calls: the store's failures among them
// count toward an outage; else a write that succeeded ends one (see
// storeWrote), while reads and verdicts alone (a job deleted, a lease
// lost) leave it as it is: they say nothing of the store's writes. Then
// the failures, if any, are logged: how many, the first keptSample jobs
// (as collection/name) and the first error, at Warn; at Debug when all of
// them are the store's failures during an outage that this pass did not
// start (its start is logged once, as a whole).
func (f *leaseFailures) settle(s *Scheduler) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var started bool
	switch {
	case f.storeErr != nil:
		started = s.storeWrote("extend leases", f.storeErr)
	case f.wrote:
		s.storeWrote("extend leases", nil)
	}
	if f.n == 0 {
		return
	}
	level := slog.LevelWarn
	if !started && f.firm == 0 {
		level = slog.LevelDebug
	}
	s.log.Log(context.Background(), level, "extend leases: some failed; their records meet ErrLeaseLost if the leases expire first",
		"failed", f.n, "jobs", f.sample, "first_err", f.err)
}

// heldRun is this instance's claim on an attempt of an occurrence that
// runs beside the job's others ([Run]), which leaseKeeper extends while the
// attempt runs (see holdRun).
type heldRun struct {
	collection, name string
	tag              string    // the occurrence's execution tag
	until            time.Time // the claim's end as last written; under leaseKeeper.mu
	holder           string    // the attempt's permits' holder (see Limiter); empty: none
}

// holdRun keeps this instance's claim on the attempt of occurrence o of job
// collection/name, written to the job with Run.Until until, from now until
// dropRun, and the permits that holder holds (none when empty): when the
// claim has less than two thirds of Config.LeaseDuration left, Run.Until
// is moved to a LeaseDuration from then, with a compare-and-swap write of
// the job (one for all of its occurrences that this instance runs), also
// past the attempt's timeout when an executor ignores its context. Once
// the Scheduler stopped (Stop's context ended before the attempt did), the
// claim is no longer extended: another instance takes the attempt over
// when it passes.
func (s *Scheduler) holdRun(collection, name string, o *Occurrence, until time.Time, holder string) *heldRun {
	h := &heldRun{collection: collection, name: name, tag: o.Tag, until: until, holder: holder}
	k := &s.leases
	k.mu.Lock()
	if k.runs == nil {
		k.runs = make(map[*heldRun]struct{})
	}
	k.runs[h] = struct{}{}
	k.mu.Unlock()
	s.armLeases()
	return h
}

// dropRun ends holdRun.
func (s *Scheduler) dropRun(h *heldRun) {
	k := &s.leases
	k.mu.Lock()
	delete(k.runs, h)
	k.mu.Unlock()
}

// keepsRun reports whether this instance's attempt of the occurrence with
// execution tag tag of job collection/name runs (holdRun holds it).
func (s *Scheduler) keepsRun(collection, name, tag string) bool {
	k := &s.leases
	k.mu.Lock()
	defer k.mu.Unlock()
	for h := range k.runs {
		if h.tag == tag && h.collection == collection && h.name == name {
			return true
		}
	}
	return false
}

// dueRuns returns the held claims that have at most two leases' thirds
// (every) left at now, grouped by job; none unless extend. k.mu is held.
func (k *leaseKeeper) dueRuns(now time.Time, every time.Duration, extend bool) [][]*heldRun {
	if !extend || len(k.runs) == 0 {
		return nil
	}
	var jobs [][]*heldRun
	for h := range k.runs {
		if now.Before(h.until.Add(-2 * every)) {
			continue
		}
		i := slices.IndexFunc(jobs, func(j []*heldRun) bool { return j[0].collection == h.collection && j[0].name == h.name })
		if i < 0 {
			jobs = append(jobs, nil)
			i = len(jobs) - 1
		}
		jobs[i] = append(jobs[i], h)
	}
	return jobs
}

// extendRuns moves the claims runs, all on one job, to a LeaseDuration
// from now, in one write of the job repeated over a fresh read when
// another write came first, and extends their attempts' permits. A claim that the
// job no longer holds for this instance (its outcome was written, or the
// job was deleted or put again) is left alone. The answers of the store
// go to failed, as the pass's lease extensions' do.
func (s *Scheduler) extendRuns(runs []*heldRun, failed *leaseFailures) {
	// The attempts run here whatever the job says: their permits are
	// extended even when the write fails, or another instance took an
	// attempt over.
	defer func() {
		for _, h := range runs {
			if h.holder != "" {
				failed.note(s.extendRunPermits(h.holder))
			}
		}
	}()
	collection, name := runs[0].collection, runs[0].name
	for range maxRunConflicts {
		until := time.Now().Add(s.cfg.LeaseDuration)
		r, err := s.getJob(collection, name)
		var kept []*heldRun
		if err == nil {
			for _, h := range runs {
				if ru := r.Schedule.ownRun(s.cfg.InstanceID, h.tag); ru != nil {
					ru.Until = maxTime(ru.Until, until)
					kept = append(kept, h)
				}
			}
			if kept == nil {
				return
			}
			ctx, cancel := s.extendContext()
			err = s.runStore.PutJob(ctx, r)
			cancel()
		}
		failed.note(err)
		switch {
		case err == nil:
			k := &s.leases
			k.mu.Lock()
			for _, h := range kept {
				h.until = until
			}
			k.mu.Unlock()
			return
		case errors.Is(err, ErrNotFound):
			return
		case !errors.Is(err, ErrConflict):
			s.log.Log(context.Background(), failureLevel(err), "extend the claim on an attempt of an occurrence that runs beside others",
				"job", name, "collection", collection, "err", err)
			return
		}
	}
	s.log.Warn("extend the claim on an attempt of an occurrence that runs beside others: too many conflicts", "job", name, "collection", collection)
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// extendRunPermits extends the permits that holder, the attempt of a run
// under OverlapAllowAll, holds by a LeaseDuration, and returns the store's
// error. Unlike an attempt under the job's lease (extendPermits), one
// whose permits are lost is not cancelled: that is logged.
func (s *Scheduler) extendRunPermits(holder string) error {
	now := time.Now()
	ctx, cancel := s.extendContext()
	defer cancel()
	n, err := s.limiter.ExtendPermits(ctx, holder, now, now.Add(s.cfg.LeaseDuration))
	switch {
	case err != nil:
		s.log.Log(context.Background(), failureLevel(err), "extend the permits of the collection's limits", "holder", holder, "err", err)
	case n == 0:
		s.log.Error("the permits of a side-by-side attempt expired unextended: another attempt may run in its place", "holder", holder)
	}
	return err
}
