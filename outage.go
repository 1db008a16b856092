package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// What the Scheduler does while its store cannot be reached (a database
// restarting, a network cut): the loop keeps asking for due work every
// second and logs the outage once when it starts and once when it ends,
// and the outcomes of attempts that end meanwhile are recorded again until
// the store answers, so that their occurrences need not run again.

// The waits between repeats of a Record that failed with an error of the
// store rather than one of its verdicts: doubling from the first to the
// last, and cut short when the loop finds the store answering again.
const (
	recordRetryFirst = 250 * time.Millisecond
	recordRetryLast  = 2 * time.Second
)

// transient reports whether err, from a store call, is a failure of the
// store (a connection refused or cut, an I/O error, a timeout, a database
// restarting) that may go away when the call is repeated, and which the
// outage logic answers (the loop logs an outage and asks again every
// second; an attempt's outcome is recorded again until the store answers).
//
// An error is the store's unless it is one of these, which repeating the
// call does not mend:
//   - a verdict of the store or the Scheduler on the call: ErrNotFound,
//     ErrConflict (and ErrPreconditionFailed), ErrLeaseLost,
//     ErrQuotaExceeded, ErrFinalState, ErrCollectionNotEnabled,
//     ErrCalendarInUse, ErrStopped;
//   - the caller's: context.Canceled (Stop, or a caller that went away; a
//     store's own deadline, context.DeadlineExceeded, is a timeout and
//     the store's);
//   - a definition's or one record's: a [*ValidationError], or a JSON error
//     of encoding or decoding a record (a row that does not decode), which
//     the SQL stores wrap.
//
// Any other error, a user's store's own included, counts as the store's.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	for _, verdict := range verdicts {
		if errors.Is(err, verdict) {
			return false
		}
	}
	var (
		invalid   *ValidationError
		syntax    *json.SyntaxError
		typ       *json.UnmarshalTypeError
		value     *json.UnsupportedValueError
		unsup     *json.UnsupportedTypeError
		marshaler *json.MarshalerError
	)
	return !errors.As(err, &invalid) && !errors.As(err, &syntax) && !errors.As(err, &typ) &&
		!errors.As(err, &value) && !errors.As(err, &unsup) && !errors.As(err, &marshaler)
}

// verdicts are the sentinels of errors that are no failure of the store
// (see transient).
var verdicts = []error{ErrNotFound, ErrConflict, ErrLeaseLost, ErrQuotaExceeded, ErrFinalState,
	ErrCollectionNotEnabled, ErrCalendarInUse, ErrStopped}

// storeHealth follows the loop's store calls and the writes of the
// attempts' outcomes and of lease extensions, so that an outage is logged
// once when it starts and once when it ends, rather than once a second,
// and Ready reports it.
type storeHealth struct {
	isDown    atomic.Bool // downSince is set; read without the lock
	faulted   atomic.Bool // fault is set; read without the lock
	mu        sync.Mutex
	downSince time.Time // zero while the store answers
	// outages counts the outages so far, kept after each ends, so that
	// the loop learns of one it made no call in (see cutOff).
	outages  atomic.Int64
	failures int
	last     error         // the last failure of the outage
	wrote    time.Time     // when a write last failed in the outage; zero: none did
	back     chan struct{} // closed when the store answers again
	fault    string        // the last error of the loop's calls that is no outage (see transient)
}

// outage returns the error that Ready reports during an outage, nil when
// there is none.
func (h *storeHealth) outage() error {
	if !h.isDown.Load() {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.downSince.IsZero() {
		return nil
	}
	return fmt.Errorf("scheduler: the store does not answer (since %s, %d failed calls): %w",
		h.downSince.UTC().Format(time.RFC3339), h.failures, h.last)
}

// down reports whether the store is in an outage (see storeFailed and
// storeWrote), and returns a channel closed when it ends (nil when there
// is none).
func (h *storeHealth) down() (bool, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.downSince.IsZero() {
		return false, nil
	}
	return true, h.back
}

// storeFailed notes that the loop's call what failed with err at now: an
// outage when err is the store's (see transient). Another error (a row
// that does not decode) is logged as an error once while it repeats, and
// the loop asks again a second later as it does in an outage.
func (s *Scheduler) storeFailed(ctx context.Context, what string, err error, now time.Time) {
	if ctx.Err() != nil { // stopping
		if !errors.Is(err, context.Canceled) {
			s.log.Warn("the store failed as the scheduler stopped", "call", what, "err", err)
		}
		return
	}
	h := &s.health
	if !transient(err) {
		h.mu.Lock()
		again := h.fault == err.Error()
		h.fault = err.Error()
		h.faulted.Store(true)
		h.mu.Unlock()
		if again {
			s.log.Debug("a call of the run loop failed again, not for an outage of the store", "call", what, "err", err)
		} else {
			s.log.Error("a call of the run loop failed, not for an outage of the store; asking again every second", "call", what, "err", err)
		}
		return
	}
	s.failed(what, err, now, false)
}

// failed notes the failure of a store call what with err, an error of the
// store (see transient), at now: the first of an outage starts it, and is
// logged. write says that the call was a write (of an outcome, or a lease
// extension): the outage then lasts until a write succeeds (see
// storeAnswered). It reports whether this failure started the outage.
func (s *Scheduler) failed(what string, err error, now time.Time, write bool) bool {
	h := &s.health
	h.mu.Lock()
	first := h.downSince.IsZero()
	if first {
		h.downSince = now
		h.back = make(chan struct{})
		h.isDown.Store(true)
		h.outages.Add(1)
	}
	h.failures++
	h.last = err
	if write {
		h.wrote = now
	}
	h.mu.Unlock()
	if first {
		s.log.Error("the store does not answer; asking again every second", "call", what, "err", err)
		return true
	}
	s.log.Debug("the store still does not answer", "call", what, "err", err)
	return false
}

// storeWrote notes the answer err of a write of the store (an outcome, lease
// extensions): a failure of the store counts toward an outage; success
// ends one. A verdict of the store (ErrConflict, ErrLeaseLost,
// ErrNotFound) does neither: the store wrote nothing, and may answer so
// while its writes fail (a disk full); the outage then ends with the next
// write that succeeds, or the run loop's next call that answers a
// LeaseDuration after the last write failed (see answered). A success
// costs an atomic load while the store answers. It reports whether err
// started an outage.
func (s *Scheduler) storeWrote(what string, err error) (started bool) {
	switch {
	case err == nil:
		if s.health.isDown.Load() {
			s.answered(time.Now(), true)
		}
	case transient(err):
		return s.failed(what, err, time.Now(), true)
	}
	return false
}

// failureLevel is the level of the log line of a call that failed with
// err, counted toward an outage by the caller (see storeWrote): Debug
// for a failure of the store, which the outage logs once as it starts
// and once as it ends, rather than each call that fails; Warn for
// another error.
func failureLevel(err error) slog.Level {
	if transient(err) {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}

// storeAnswered notes that a call of the loop succeeded at now.
func (s *Scheduler) storeAnswered(now time.Time) {
	h := &s.health
	if !h.isDown.Load() && !h.faulted.Load() {
		return // the common case costs no lock
	}
	s.answered(now, false)
}

// answered ends the outage, if any, at now, when write says that a write
// succeeded, or when no write failed within the last LeaseDuration: while
// writes fail (a disk full), reads that succeed do not end it. It clears
// the fault of the loop's calls.
func (s *Scheduler) answered(now time.Time, write bool) {
	h := &s.health
	h.mu.Lock()
	h.fault = ""
	h.faulted.Store(false)
	if !write && !h.wrote.IsZero() && time.Since(h.wrote) < s.cfg.LeaseDuration {
		h.mu.Unlock()
		return
	}
	since, failures := h.downSince, h.failures
	if h.back != nil {
		close(h.back)
	}
	h.downSince, h.failures, h.back, h.last, h.wrote = time.Time{}, 0, nil, nil, time.Time{}
	h.isDown.Store(false)
	h.mu.Unlock()
	if !since.IsZero() {
		s.log.Warn("the store answers again", "down_for", now.Sub(since).Round(time.Millisecond).String(), "failed_calls", failures)
	}
}

// recordRetries tracks the jobs whose outcome this instance is recording
// again, so that the loop does not run one again when it claims the job
// itself once the lease has expired: such a claim is stale, since the
// job's occurrence ran already. A claim is stale when it comes while the
// outcome is being recorded, or when the outcome was recorded over it: the
// Record then met ErrConflict and read the job as the claim left it
// (leased to this instance, at the claim's version), which noteFresh
// remembers.
type recordRetries struct {
	n      atomic.Int32 // pending plus len(claims), read without the lock
	mu     sync.Mutex
	ids    map[string]int   // job ID: outcomes being recorded again
	claims map[string]int64 // job ID: version of a claim recorded over
}

func (p *recordRetries) add(id string) {
	p.mu.Lock()
	if p.ids == nil {
		p.ids = make(map[string]int)
	}
	p.ids[id]++
	p.n.Add(1)
	p.mu.Unlock()
}

func (p *recordRetries) done(id string) {
	p.mu.Lock()
	if p.ids[id]--; p.ids[id] <= 0 {
		delete(p.ids, id)
	}
	p.n.Add(-1)
	p.mu.Unlock()
}

// noteFresh notes the fresh read of a job whose outcome is being recorded
// again: when this instance holds its lease, a claim of this instance's
// own loop left it so, and that claim is stale.
func (p *recordRetries) noteFresh(fresh *JobRecord, instance string) {
	if p.n.Load() == 0 || fresh.LeaseOwner != instance {
		return
	}
	id := fresh.ID()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids[id] == 0 {
		return
	}
	if p.claims == nil {
		p.claims = make(map[string]int64)
	}
	if _, ok := p.claims[id]; !ok {
		p.n.Add(1)
	}
	p.claims[id] = fresh.Version
}

// stale reports whether the claimed job r is to be set aside: its outcome
// is being recorded again, or was recorded over this claim.
func (p *recordRetries) stale(r *JobRecord) bool {
	if p.n.Load() == 0 {
		return false
	}
	id := r.ID()
	p.mu.Lock()
	defer p.mu.Unlock()
	if v, ok := p.claims[id]; ok && v <= r.Version {
		delete(p.claims, id) // later claims are not stale
		p.n.Add(-1)
		if v == r.Version {
			return true
		}
	}
	return p.ids[id] > 0
}

// recordAgain repeats the Record of the outcome of an attempt on the
// claimed job r, with history all, which failed with err, an error of the
// store rather than a verdict, until the store gives one: the attempt ran,
// and recording it spares its occurrence a run again. Meanwhile the lease
// is extended as while the attempt ran, and a claim of the job by this
// instance's own loop is set aside (see process), so that the outcome,
// which then meets ErrConflict, is recorded on the fresh record.
//
// A Record that committed although the store reported an error is
// recognised as such by stores that can (store/postgres returns nil for
// it); on others the repeat meets ErrLeaseLost, as it does when another
// instance took the job over meanwhile. recordAgain logs the outcome and
// returns nil once recorded, ErrConflict for the caller to record on a
// fresh read, another verdict of the store, or the last error a
// LeaseDuration after the loop ended at Stop or Stop's context ended.
//
// The caller has called s.retries.add for the job, and calls done once the
// outcome is recorded, after a fresh read if need be; it keeps the job's
// lease meanwhile (holdLease).
func (s *Scheduler) recordAgain(ctx context.Context, r *JobRecord, all []HistoryEntry, err error) error {
	s.log.WarnContext(ctx, "record job outcome: the store failed; recording again until it answers", "job", r.Name, "collection", r.Collection, "err", err)
	w := s.outcomeRetry()
	for tries := 1; ; tries++ {
		if !w.pause(false) {
			s.log.ErrorContext(ctx, "record job outcome: gave up at stop; its occurrence runs again", "job", r.Name, "collection", r.Collection,
				"tries", tries, "err", err)
			return err
		}
		err = s.runStore.Record(context.Background(), s.cfg.InstanceID, r, all)
		s.storeWrote("record job outcome", err)
		switch {
		case err == nil:
			s.log.InfoContext(ctx, "recorded job outcome after the store failed", "job", r.Name, "collection", r.Collection, "tries", tries+1)
			return nil
		case errors.Is(err, ErrLeaseLost):
			s.log.WarnContext(ctx, "record job outcome: the lease was lost while the store failed: either the first try committed "+
				"though the store reported an error, or another instance took the job over and runs its occurrence again",
				"job", r.Name, "collection", r.Collection, "err", err)
			return err
		case !transient(err): // ErrConflict, or ErrNotFound: deleted meanwhile
			return err
		}
	}
}

// outcomeRetry paces the repeats of a write of an attempt's outcome (see
// recordAgain and recordRun).
type outcomeRetry struct {
	s         *Scheduler
	loopDone  <-chan struct{}  // closed at Stop; nil once seen, or when runDue is driven without Start
	giveUp    <-chan time.Time // a LeaseDuration after Stop
	wait      time.Duration    // before the next repeat after a failure of the store
	conflicts int              // the conflicts met so far
}

// outcomeRetry returns the pacing of the repeats of a write of an
// attempt's outcome.
func (s *Scheduler) outcomeRetry() *outcomeRetry {
	s.mu.Lock()
	loopDone := s.loopDone
	s.mu.Unlock()
	return &outcomeRetry{s: s, loopDone: loopDone, wait: recordRetryFirst}
}

// pause waits before the next repeat of the write: after a failure of the
// store, until the loop finds the store answering again, at most from
// recordRetryFirst the first time to recordRetryLast, doubling; after a
// conflict with another write of the job (conflict), none the first time,
// then a random while of at most recordRetryFirst, so that writers that met
// do not meet again. It
// returns false when the caller is to give up: a LeaseDuration after the
// loop ended at Stop, or after Stop's context ended, whichever came first
// (the lease or claim on the attempt expires then, and another instance
// may run the occurrence again; Stop waits as long for the outcomes).
func (w *outcomeRetry) pause(conflict bool) bool {
	s := w.s
	var back <-chan struct{}
	wait := w.wait
	if conflict {
		if w.conflicts++; w.conflicts == 1 {
			return true // most often the loop's claim of the job: read it again at once
		}
		wait = rand.N(recordRetryFirst) + 1
	} else {
		w.wait = min(2*w.wait, recordRetryLast)
		_, back = s.health.down()
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	stopped := s.execCtx.Done()
	for {
		select {
		case <-back: // the loop found the store answering again
			return true
		case <-w.loopDone:
			w.loopDone = nil
			w.graceFromNow()
		case <-stopped: // Stop's context ended: Stop waits as long for the outcomes
			stopped = nil
			w.graceFromNow()
		case <-w.giveUp:
			return false
		case <-timer.C:
			return true
		}
	}
}

// graceFromNow gives the write a LeaseDuration from now, once the loop
// ended or Stop's context did, unless it already has one.
func (w *outcomeRetry) graceFromNow() {
	if w.giveUp == nil {
		w.giveUp = time.After(w.s.cfg.LeaseDuration)
	}
}

// recordPendingAgain records again, on a goroutine of its own, the outcome
// p that RecordBatch failed to record with err, keeping the job's lease
// from p.leaseAt, then frees its slot.
func (s *Scheduler) recordPendingAgain(p pendingOutcome, err error) {
	id := p.r.ID()
	s.retries.add(id)
	go func() {
		defer s.freeSlot()
		defer s.retries.done(id)
		s.holdLease(p.r, p.leaseAt, nil, nil)
		err := s.recordAgain(p.res.spanContext(), p.r, p.all, err)
		// recordOutcome holds it again, from when it was next due: no
		// store call comes between the two holds, though a pass of the
		// lease keeper may find neither (the lease is then extended on
		// the next).
		p.leaseAt = s.dropLease(p.r, nil)
		switch {
		case err == nil:
			s.emit(p.def, p.all)
			s.missed(p.miss, false)
		case errors.Is(err, ErrConflict):
			s.recordOutcome(&p, true)
		}
	}()
}
