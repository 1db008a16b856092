package scheduler

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// record stores r with hist and releases the lease, logging failures.
func (s *Scheduler) record(r *JobRecord, hist []HistoryEntry) {
	err := s.runStore.Record(context.Background(), s.cfg.InstanceID, r, hist)
	s.storeWrote("record job", err)
	if err != nil {
		s.recordFailed(context.Background(), r, err)
		return
	}
	s.emit(r.Job, hist)
}

// getJob reads a job for the run loop.
func (s *Scheduler) getJob(collection, name string) (*JobRecord, error) {
	return s.runStore.GetJob(context.Background(), collection, name)
}

// reread reads claimed job r afresh after a write of it conflicted. A job
// deleted meanwhile gives an error that matches ErrNotFound, and so does
// one deleted and created again: another job of r's name, which r's claim
// does not lease.
func (s *Scheduler) reread(r *JobRecord) (*JobRecord, error) {
	fresh, err := s.getJob(r.Collection, r.Name)
	if err == nil && !fresh.sameJob(r) {
		return nil, NewRecreatedErrorOf(r, fresh.Created, fresh.Incarnation)
	}
	return fresh, err
}

// recordFailed logs the failure to record the outcome of work on r; ctx
// carries the attempt's span, if any. The outcome of a job deleted
// meanwhile, or deleted and created again (ErrNotFound), is of no job: it
// is dropped, and that is logged at Info. One refused for a takeover
// (ErrLeaseLost: the lease expired, and another instance took the job
// over, as the package documentation says may happen) is logged at Warn.
func (s *Scheduler) recordFailed(ctx context.Context, r *JobRecord, err error) {
	if errors.Is(err, ErrNotFound) {
		s.log.InfoContext(ctx, "drop the outcome of a deleted job", "job", r.Name, "collection", r.Collection, "err", err)
		return
	}
	if errors.Is(err, ErrLeaseLost) {
		s.log.WarnContext(ctx, "record job outcome: the lease expired and another instance took the job over; the outcome is not recorded, and the occurrence runs there again",
			"job", r.Name, "collection", r.Collection, "err", err)
		return
	}
	s.log.ErrorContext(ctx, "record job outcome", "job", r.Name, "collection", r.Collection, "err", err)
}

// emit reports stored history entries of a job whose definition is def:
// to Config.Observer and to Config.OnHistory.
func (s *Scheduler) emit(def *Job, hist []HistoryEntry) {
	if obs := s.cfg.Observer; obs != nil {
		obs.HistoryStored(StoredHistory{Instance: s.cfg.InstanceID, Job: def, Entries: hist})
	}
	if s.cfg.OnHistory == nil {
		return
	}
	for _, h := range hist {
		s.cfg.OnHistory(h)
	}
}

// runHold returns how long an instance's claim on an attempt of an
// occurrence of def that runs beside others (see Run) lasts: the longer
// of its actions' timeouts, and Config.LeaseDuration. The claim is
// extended while the attempt runs (see holdRun): when it passes, its
// instance stopped, and another instance may run the attempt again.
func (s *Scheduler) runHold(def *Job) time.Duration {
	a := &def.Action
	return max(a.AttemptTimeout(s.cfg.ActionTimeout), a.ErrorAction.AttemptTimeout(s.cfg.ActionTimeout)) + s.cfg.LeaseDuration
}

// maxRunConflicts bounds the writes of an extension of claims by
// extendRuns that conflict with other writes of the job; the next pass of
// the lease keeper tries again.
const maxRunConflicts = 20

// recordRun writes the outcome res of this instance's attempt of
// occurrence o, which runs beside the job's others (see Run), to job
// collection/name: a compare-and-swap on the job's version, without its
// lease, repeated after a fresh read when another write came first (a
// claim, another occurrence's outcome, an API write) and, paced as
// recordAgain's, while the store fails, until it is written, another
// instance took the attempt over (this one's claim passed), or Stop gave
// up (see outcomeRetry.pause). Its history entry is recorded by the job's
// next step. The caller holds the claim (holdRun) meanwhile.
func (s *Scheduler) recordRun(collection, name string, o *Occurrence, res *outcome) {
	ctx := res.spanContext()
	var w *outcomeRetry
	failed := 0 // tries that the store failed
	for {
		r, err := s.getJob(collection, name)
		if err == nil {
			if !s.machine(r, res.end).endRun(r, o, *res, s.cfg.InstanceID, time.Now()) {
				s.log.WarnContext(ctx, "record job outcome: another instance took the occurrence over", "job", name, "collection", collection, "occurrence", o.Number)
				return
			}
			err = s.runStore.PutJob(context.Background(), r)
			s.storeWrote("record job outcome", err)
		}
		switch {
		case err == nil:
			if failed > 0 {
				s.log.InfoContext(ctx, "recorded job outcome after the store failed", "job", name, "collection", collection, "tries", failed+1)
			}
			s.notify() // its entry waits to be recorded
			return
		case !errors.Is(err, ErrConflict) && !transient(err):
			s.recordFailed(ctx, &JobRecord{Collection: collection, Name: name}, err)
			return
		}
		conflict := errors.Is(err, ErrConflict)
		if !conflict {
			if failed++; failed == 1 {
				s.log.WarnContext(ctx, "record job outcome: the store failed; recording again until it answers", "job", name, "collection", collection, "err", err)
			}
		}
		if w == nil {
			w = s.outcomeRetry()
		}
		if !w.pause(conflict) {
			s.log.ErrorContext(ctx, "record job outcome: gave up at stop; its occurrence runs again", "job", name, "collection", collection,
				"occurrence", o.Number, "err", err)
			return
		}
	}
}

// recordOutcome records the outcome p on the claimed job p.r, re-reading
// the job and replaying the claim on a conflict; with reread it starts
// with a fresh read (a first write conflicted already). The job's lease is
// kept meanwhile, from p.leaseAt, as while the attempt ran: reads and
// writes slower than a LeaseDuration must not let the job be claimed and
// run again before its outcome is recorded.
func (s *Scheduler) recordOutcome(p *pendingOutcome, reread bool) {
	s.holdLease(p.r, p.leaseAt, nil, nil)
	defer s.dropLease(p.r, nil)
	r, t, o, res := p.r, &p.t, &p.o, &p.res
	ctx := context.Background()
	var terr error
	retrying := false // the outcome is being recorded again (see recordAgain)
	defer func() {
		if retrying {
			s.retries.done(r.ID())
		}
	}()
	for range 5 {
		if reread {
			fresh, gerr := s.reread(r)
			if gerr != nil {
				s.recordFailed(res.spanContext(), r, gerr)
				return
			}
			s.retries.noteFresh(fresh, s.cfg.InstanceID)
			r = fresh
			// The entries of outcomes of occurrences side by side written
			// since the claim are recorded with those that p.hist holds
			// already; the replayed step must not drop them.
			later := laterEnds(r, p.hist)
			if t, terr = s.timing(r, res.end); terr == nil {
				m := s.machine(r, res.end)
				m.tookOver = p.tookOver
				m.replay(r, t, o, p.claimed, p.requested)
			}
			if later != nil {
				r.Schedule.policy().Ends = later
			}
		}
		reread = true
		m := s.machine(r, res.end)
		next0, counted0 := r.Schedule.NextOccurrence, r.Schedule.Counted
		all := m.applyOutcome(r, t, terr == nil, o, *res, p.hist, nil)
		var miss *Misfire
		if terr == nil {
			miss = s.passedOver(r, t, next0, counted0, misfireOf(m.policy.Missed), res.end)
		}
		err := s.runStore.Record(ctx, s.cfg.InstanceID, r, all)
		s.storeWrote("record job outcome", err)
		if transient(err) {
			if !retrying {
				retrying = true
				s.retries.add(r.ID())
			}
			// recordAgain logs what it could not record.
			if err = s.recordAgain(res.spanContext(), r, all, err); err != nil && !errors.Is(err, ErrConflict) {
				return
			}
		}
		if err == nil {
			s.emit(r.Job, all)
			s.missed(miss, false)
			return
		}
		if !errors.Is(err, ErrConflict) {
			s.recordFailed(res.spanContext(), r, err)
			return
		}
	}
	s.log.ErrorContext(res.spanContext(), "record job outcome: too many conflicts", "job", r.Name, "collection", r.Collection)
}

// laterEnds takes PolicyState.Ends out of r and returns those that hist,
// the entries a step recorded, does not hold: an entry of an attempt is
// known by its execution tag, retry and action. Nil when there are none.
func laterEnds(r *JobRecord, hist []HistoryEntry) []HistoryEntry {
	p := r.Schedule.Policy
	if p == nil {
		return nil
	}
	ends := p.Ends
	p.Ends = nil
	var later []HistoryEntry
	for _, e := range ends {
		if !slices.ContainsFunc(hist, func(h HistoryEntry) bool {
			return h.ExecutionTag == e.ExecutionTag && h.RetryCount == e.RetryCount && h.ActionName == e.ActionName
		}) {
			later = append(later, e)
		}
	}
	return later
}

// pendingOutcome is an attempt's outcome to record: the record and
// history to store, and what recordOutcome needs when that conflicts.
type pendingOutcome struct {
	r       *JobRecord
	def     *Job // r.Job before the outcome was applied, which r may no longer hold once recorded
	miss    *Misfire
	all     []HistoryEntry
	buf     *[]HistoryEntry // from histBufs, holding all once recorded; nil when no entries are made
	t       Timing          // copies, so that an outcome costs no allocation
	o       Occurrence      // of them
	res     outcome
	hist    []HistoryEntry
	claimed time.Time
	// tookOver is the claim's machine's (see machine.tookOver).
	tookOver bool
	// requested is attempt.requested.
	requested time.Time
	// leaseAt is when the job's lease, which the outcome keeps until it
	// is recorded, is next due for an extension (see holdLease); the lease
	// keeper moves it under outcomeBatch.mu while the outcome waits in the
	// batch (see outcomeBatch.dueLeases).
	leaseAt time.Time
}

// histBufs recycles the history slices of batched outcomes, which a
// BatchRecorder copies.
var histBufs = sync.Pool{New: func() any { return new([]HistoryEntry) }}

// outcomeBatch gathers outcomes for a [BatchRecorder]. The worker that
// adds an outcome while no flush is under way becomes the flusher: it
// records its own outcome and every one added meanwhile, in batches of at
// most recordBatch, until none is left. Attempts that end together thus
// share a store call, and no goroutine waits for its turn. When the loop
// holds a claim that starts within a linger (see Scheduler.linger), more
// outcomes are on their way: the flush is then left to a timer, a linger
// after the end of the first attempt waiting, so that the outcomes of
// occurrences due a few milliseconds apart share a store call too; unless
// the job of an outcome added meanwhile is due again within the linger
// and the last store call's duration (an outcome left to the timer is
// stored that much after it fires, and the job's next occurrence waits
// for it), or recordBatch outcomes are pending: a full batch is recorded at once,
// timer or not (a spare timer finds nothing, or less, to flush). The same
// holds for the outcomes added while a flush was under way: at
// a steady rate, flushing them at once would record one or two per store
// call, each call's duration apart.
type outcomeBatch struct {
	mu sync.Mutex
	// pending holds the outcomes to record, in order, in blocks of
	// recordBatch (the last may hold fewer), each one store call; n
	// counts them. A block recorded goes to free for reuse, and spare is
	// the flusher's previous list of blocks: outcomes that pile up while
	// a batch is recorded take blocks already made rather than a slice
	// grown by doubling (twice the most pending at once, copied, left as
	// garbage during a burst).
	pending  [][]pendingOutcome
	n        int
	free     [][]pendingOutcome
	spare    [][]pendingOutcome
	flushing bool
	// flushed is the flusher's list of blocks taken from pending, of
	// which those from next on wait for their store call; while inCall,
	// block next-1 is in RecordBatch, and keys names its jobs (the store
	// may keep and modify the records meanwhile). Both let the lease
	// keeper find every outcome not yet recorded (see dueLeases).
	flushed  [][]pendingOutcome
	next     int
	inCall   bool
	keys     []jobKey
	timedAt  time.Time       // when a timer will flush (see timed); zero: no flush is timed
	timer    *time.Timer     // the timer of a timed flush, or of the wait for one (see flushTimed); nil before the first
	flusher  bool            // a goroutine waits for timer (see flushTimed)
	flushers sync.WaitGroup  // that goroutine, for Stop
	stopped  bool            // Stop ends the goroutine once no flush is timed
	urgent   bool            // an outcome pending is of a job due again within the linger (and a store call)
	reqs     []RecordRequest // the flusher's

	// call is how long the last RecordBatch took (a time.Duration): an
	// outcome left to the timer is stored that long after it fires. It
	// stays 0 when outcomes never linger (see Scheduler.linger).
	call atomic.Int64

	// idle counts the outcomes enqueued and not yet through flush, whose
	// workers are free for other jobs, up to waitingMost of them (see
	// Scheduler.busy), less one while a worker records them (from its
	// own outcome's enqueue until its flushPending returns): a job handed
	// to the workers would otherwise wait for that worker as long as the
	// store calls take, its lease unextended. A flush by the timer takes
	// no worker.
	idle atomic.Int64
	// loopWaits says that the loop found no slot free and waits for one:
	// the outcomes that go to a store call, and those added while one is
	// under way (which wait at least for its end), wake it (see
	// wakeForSlot), rather than only their records once the store has
	// answered.
	loopWaits atomic.Bool
}

// waitingMost bounds the outcomes waiting for the store that leave their
// workers' slots to other jobs: a few MB of them (about 1.7 KB each
// with no history kept, see TestPendingOutcomesMemory). Past it, a store
// slower than the attempts end keeps the loop from claiming, so that what
// waits for it stays bounded.
const waitingMost = 2048

// wakeForSlot wakes the loop when it waits for a slot (see loopWaits) and
// the outcomes waiting for the store leave one free (see Scheduler.busy),
// unless claimed jobs wait for a worker: the loop does not claim then,
// and the worker that takes the last of them wakes it (see
// Scheduler.nextTask).
func (s *Scheduler) wakeForSlot() {
	b := &s.outcomes
	if b.loopWaits.Load() && !s.work.waiting.Load() && b.idle.Load() <= waitingMost && b.loopWaits.CompareAndSwap(true, false) {
		s.notify()
	}
}

// add adds p to the pending outcomes, in the last block unless it holds
// recordBatch. The first block grows from small as a slice does, up to
// recordBatch, so that a Scheduler that never has many outcomes pending
// takes little memory for them; the others are made whole. b.mu is held.
func (b *outcomeBatch) add(p *pendingOutcome) {
	n := len(b.pending)
	if n == 0 || len(b.pending[n-1]) == recordBatch {
		var block []pendingOutcome
		switch k := len(b.free); {
		case k > 0:
			block, b.free[k-1] = b.free[k-1], nil
			b.free = b.free[:k-1]
		case n > 0:
			block = make([]pendingOutcome, 0, recordBatch)
		}
		b.pending = append(b.pending, block)
		n++
	}
	b.pending[n-1] = append(b.pending[n-1], *p)
	b.n++
}

// dueLeases returns the jobs of the outcomes not yet recorded whose
// leases are due for an extension at now (within half of every, a third
// of a LeaseDuration, of their leaseAt), and moves their leaseAt to every
// from now: those pending, those the flusher took that wait for their
// store call, and those in it.
func (b *outcomeBatch) dueLeases(now time.Time, every time.Duration) []jobKey {
	b.mu.Lock()
	defer b.mu.Unlock()
	var due []jobKey
	scan := func(block []pendingOutcome, keys []jobKey) {
		for i := range block {
			p := &block[i]
			if now.Before(p.leaseAt.Add(-every / 2)) {
				continue
			}
			p.leaseAt = now.Add(every)
			if keys != nil {
				due = append(due, keys[i])
			} else {
				due = append(due, jobKey{p.r.Collection, p.r.Name})
			}
		}
	}
	for _, block := range b.pending {
		scan(block, nil)
	}
	if b.flushed != nil {
		if b.inCall {
			scan(b.flushed[b.next-1], b.keys)
		}
		for _, block := range b.flushed[b.next:] {
			scan(block, nil)
		}
	}
	return due
}

// unsent reports whether the outcome of job j waits in the batch and has
// not been sent to the store: it is pending, or the flusher took it and
// its store call has not begun.
func (b *outcomeBatch) unsent(j jobKey) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	has := func(block []pendingOutcome) bool {
		for i := range block { // by index: an outcome is several hundred bytes
			if r := block[i].r; r.Collection == j.collection && r.Name == j.name {
				return true
			}
		}
		return false
	}
	if slices.ContainsFunc(b.pending, has) {
		return true
	}
	return b.flushed != nil && slices.ContainsFunc(b.flushed[b.next:], has)
}

// waiting reports whether outcomes wait to be recorded.
func (b *outcomeBatch) waiting() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n > 0 || b.flushing
}

// retryOutcome records p again on its own goroutine, after a fresh read,
// keeping the job's lease meanwhile (see recordOutcome). The lease is
// held again once the goroutine starts, from p.leaseAt as the batch left
// it: no store call comes between the end of RecordBatch and that hold,
// though a pass of the lease keeper may find the outcome in neither (the
// lease is then extended on the next). (A function of its own, so that p
// is copied to the heap only here.)
func (s *Scheduler) retryOutcome(p pendingOutcome) {
	go func() {
		defer s.freeSlot()
		s.recordOutcome(&p, true)
	}()
}

var errShortBatch = errors.New("scheduler: the store's RecordBatch returned fewer errors than records")

// batchErr is the error of element i of a batch whose RecordBatch
// returned errs: nil when errs is nil (every element recorded), and
// errShortBatch when errs has no element i.
func batchErr(errs []error, i int) error {
	switch {
	case errs == nil:
		return nil
	case i < len(errs):
		return errs[i]
	}
	return errShortBatch
}

// recordBatch is the most outcomes recorded in one store call.
const recordBatch = 256

// enqueue adds p to the outcomes to record, and records them all unless
// another worker does so already or a timer will. The worker that records
// them counts as busy until it is done (see outcomeBatch.idle).
func (s *Scheduler) enqueue(p *pendingOutcome) {
	b := &s.outcomes
	b.mu.Lock()
	b.add(p)
	s.armLeases() // the job's lease is kept until the outcome is recorded
	// Outcomes linger unless the job of one of them is due again within
	// the linger and the store call that records it (its next occurrence
	// waits for this record): the one that arms the timer, or any added
	// before it fires. Now is when the attempt ended, a moment ago: a
	// clock read per outcome spared.
	now := p.res.end
	d := s.linger()
	urgent := dueWithin(p.r, now, d+time.Duration(b.call.Load()))
	switch {
	case b.flushing:
		b.urgent = b.urgent || urgent
		s.workerFreed() // the outcome waits at least for the store call under way
	case b.timed() && !urgent && b.n < recordBatch:
		s.workerFreed()
	case !b.timed() && d > 0 && s.ahead.startsWithin(now, d) && !urgent:
		s.flushAfter(d)
		s.workerFreed()
	default:
		s.flushPending() // releases b.mu
		s.workerFreed()
		return
	}
	b.mu.Unlock()
}

// workerFreed notes that the worker of an outcome waiting for the store,
// or the worker that recorded outcomes, is free for other jobs, and wakes
// the loop if it waits for one (see runDue).
func (s *Scheduler) workerFreed() {
	s.outcomes.idle.Add(1)
	s.wakeForSlot()
	if s.ahead.slotWanted.Load() && s.ahead.slotWanted.CompareAndSwap(true, false) {
		s.notify() // its slot is free for a job written while none was (see runDue)
	}
}

// timed reports whether a timer will flush the pending outcomes (see
// flushAfter). b.mu is held.
func (b *outcomeBatch) timed() bool { return !b.timedAt.IsZero() }

// flushAfter arms the timer that flushes the pending outcomes after d,
// and starts the goroutine that waits for it unless one waits already
// (see flushTimed). b.mu is held.
func (s *Scheduler) flushAfter(d time.Duration) {
	b := &s.outcomes
	b.timedAt = time.Now().Add(d)
	if b.timer == nil {
		b.timer = time.NewTimer(d)
	} else {
		b.timer.Reset(d)
	}
	if !b.flusher {
		b.flusher = true
		b.flushers.Add(1)
		go s.flushTimed()
	}
}

// flushTimed flushes the pending outcomes each time the timer that
// flushAfter armed fires, and waits a linger more for the next flush
// timed: at a steady rate, one goroutine records batch after batch, its
// stack grown to a store call's depth, rather than a goroutine started for
// each batch growing its stack anew. It ends when the timer fires with no
// flush timed (outcomes stopped lingering), or once no flush is timed after
// Stop (see stopFlusher).
func (s *Scheduler) flushTimed() {
	b := &s.outcomes
	defer b.flushers.Done()
	for {
		<-b.timer.C
		b.mu.Lock()
		if !b.timed() {
			b.flusher = false
			b.mu.Unlock()
			return
		}
		if !b.stopped && time.Now().Before(b.timedAt) {
			// The tick was the wait's, taken as flushAfter armed the
			// timer anew: its own tick comes when the flush is due.
			b.mu.Unlock()
			continue
		}
		b.timedAt = time.Time{}
		if !b.flushing && b.n > 0 {
			s.flushPending() // releases b.mu
			b.mu.Lock()
		}
		if !b.timed() {
			if b.stopped {
				b.flusher = false
				b.mu.Unlock()
				return
			}
			b.timer.Reset(s.linger())
		}
		b.mu.Unlock()
	}
}

// batchAnswer returns what the answer errs of a RecordBatch call says of
// the store: nil when an outcome was recorded, else the first error.
func batchAnswer(errs []error) error {
	if errs == nil {
		return nil
	}
	for _, err := range errs {
		if err == nil {
			return nil
		}
	}
	return errs[0]
}

// stopFlusher ends the goroutine of flushTimed and waits for its end:
// Stop calls it once every outcome is recorded. A flush still timed then
// has nothing left to record (a flush before the timer fired took the
// outcomes it was armed for), so the timer fires at once either way.
func (b *outcomeBatch) stopFlusher() {
	b.mu.Lock()
	b.stopped = true
	if b.flusher {
		b.timer.Reset(0)
	}
	b.mu.Unlock()
	b.flushers.Wait()
}

// dueWithin reports whether r is due within d of now.
func dueWithin(r *JobRecord, now time.Time, d time.Duration) bool {
	due := r.Schedule.DueAt
	return !due.IsZero() && due.Before(now.Add(d))
}

// flushPending records the pending outcomes until none is left, or until
// those added during its store calls may linger (see outcomeBatch): a
// timer then flushes them a linger after the first of them ended. b.mu
// is held, and released on return.
func (s *Scheduler) flushPending() {
	b := &s.outcomes
	b.flushing = true
	for again := false; b.n > 0; again = true {
		if again && !b.urgent {
			if b.timed() && b.n < recordBatch {
				break // the timer armed flushes them, a linger after an earlier outcome
			}
			if d := s.linger(); d > 0 {
				now := time.Now()
				wait := b.pending[0][0].res.end.Add(d).Sub(now)
				if wait > 0 && b.n < recordBatch && s.ahead.startsWithin(now, d) {
					s.flushAfter(wait)
					break
				}
			}
		}
		b.urgent = false
		all := b.pending
		b.pending, b.n = b.spare, 0
		b.flushed, b.next = all, 0
		b.mu.Unlock()
		for i, batch := range all {
			s.flush(batch)
			clear(batch) // drop the references; the lease keeper no longer reads it
			all[i] = batch[:0]
		}
		b.mu.Lock()
		b.flushed = nil
		b.free = append(b.free, all...)
		clear(all)
		b.spare = all[:0]
	}
	b.flushing = false
	b.mu.Unlock()
}

// flush records batch, the block next of b.flushed, in one store call,
// then releases the jobs' slots; outcomes that conflicted with an API
// write are recorded again, each on its own goroutine, after a fresh read.
// The lease keeper extends the jobs' leases until RecordBatch returns.
func (s *Scheduler) flush(batch []pendingOutcome) {
	b := &s.outcomes
	reqs, keys := b.reqs[:0], b.keys[:0]
	var due time.Time // the earliest due instant of the jobs, read before the store may keep their records
	// By index here and below: an outcome is several hundred bytes, each
	// copy a memmove.
	for i := range batch {
		p := &batch[i]
		// The step that applied the outcome left the definition as
		// claimed unless it replaced it.
		reqs = append(reqs, RecordRequest{Job: p.r, History: p.all, KeepDefinition: p.r.Job == p.def})
		keys = append(keys, jobKey{p.r.Collection, p.r.Name})
		if d := p.r.Schedule.DueAt; !d.IsZero() && (due.IsZero() || d.Before(due)) {
			due = d
		}
	}
	b.mu.Lock()
	b.next++
	b.inCall, b.keys = true, keys
	b.mu.Unlock()
	s.wakeForSlot() // the outcomes wait for the store, not their workers
	// The call's duration only matters to outcomes that may linger (see
	// enqueue): without a linger, no clock is read for it.
	var start time.Time
	if s.linger() > 0 {
		start = time.Now()
	}
	errs := s.batch.RecordBatch(context.Background(), s.cfg.InstanceID, reqs)
	if !start.IsZero() {
		b.call.Store(int64(time.Since(start)))
	}
	s.storeWrote("record job outcomes", batchAnswer(errs))
	b.mu.Lock()
	b.inCall = false
	b.mu.Unlock()
	clear(reqs)
	clear(keys)
	b.reqs, b.keys = reqs[:0], keys[:0]
	for i := range batch {
		p := &batch[i]
		err := batchErr(errs, i)
		b.idle.Add(-1) // before its slot is released (see Scheduler.busy)
		switch {
		case err == nil:
			s.emit(p.def, p.all)
			s.missed(p.miss, false)
			if p.buf != nil {
				clear(p.all) // the store copied them
				*p.buf = p.all[:0]
				histBufs.Put(p.buf)
			}

			s.release()
		case errors.Is(err, ErrConflict):
			s.retryOutcome(*p)
		case transient(err):
			s.recordPendingAgain(*p, err)
		default:
			s.recordFailed(p.res.spanContext(), p.r, err)
			s.release()
		}
	}
	s.notifyDue(due) // the jobs may be due again, or the loop may wait for slots
}
