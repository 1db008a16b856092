package scheduler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// aheadClaims are the jobs that the run loop claimed ahead of their due
// instants (see Config.ClaimAhead) and holds until then, and what the loop
// needs to know when to claim again.
type aheadClaims struct {
	held    []heldClaim   // by start instant, earliest first; in s.wg, not in s.inFlight; the loop's
	claimAt time.Time     // when the loop claims next; zero: at its next step. The loop's
	next    atomic.Int64  // claimAt in Unix nanoseconds for notifyDue; 0: zero; math.MaxInt64: a claim is under way (or failed: the loop tries again within a second), or the loop waits for the jobs it claimed to be taken by workers
	first   atomic.Int64  // the start of held[0] in Unix nanoseconds, for startsWithin; 0: none held
	window  time.Duration // Config.FiringWindow, 0 when negative (see wakeAt)
	starts  []*JobRecord  // the loop's, reused by startHeld
	// woken is the loop's: a wake-up (a write, a job due again: see
	// notifyDue) came since its last claim began. With no slot free, the
	// loop then claims when the next attempt ends (slotWanted) rather
	// than halfway to its last held claim (see reachCut): the job written
	// may be due now.
	woken      bool
	slotWanted atomic.Bool // the next attempt that ends wakes the loop (see enqueue)

	mu      sync.Mutex
	marks   []jobKey // what was written through this Scheduler since the loop last looked
	running bool     // the loop runs: without it, writes leave one mark for every job (see wrote)
}

// run tells wrote whether the loop runs; a loop that stops drops the
// marks left.
func (a *aheadClaims) run(running bool) {
	a.mu.Lock()
	a.running = running
	if !running {
		a.marks = nil
	}
	a.mu.Unlock()
}

// heldClaim is a job claimed ahead, to start at start.
type heldClaim struct {
	r     *JobRecord
	start time.Time
}

// jobKey names a job; an empty name stands for every job of the
// collection, an empty collection for every job.
type jobKey struct{ collection, name string }

func (k jobKey) covers(r *JobRecord) bool {
	return k.collection == "" || k.collection == r.Collection && (k.name == "" || k.name == r.Name)
}

// claimAhead returns how far ahead of now the loop claims: Config.ClaimAhead
// when the store is an AheadClaimer, 0 when it is not or ClaimAhead is
// negative.
func (s *Scheduler) claimAhead() time.Duration {
	if s.claimer == nil {
		return 0
	}
	return max(s.cfg.ClaimAhead, 0)
}

// wrote tells the loop that job collection/name (every job of the
// collection when name is empty, every job when both are) was written
// through this Scheduler, and wakes it: a claim it holds on such a job is
// dropped before the loop starts anything else, then given back (see
// dropWritten), so that the write wins over an occurrence claimed ahead
// of it.
func (s *Scheduler) wrote(collection, name string) {
	a := &s.ahead
	a.mu.Lock()
	switch {
	case a.running:
		a.marks = append(a.marks, jobKey{collection, name})
	case len(a.marks) == 0:
		// The loop does not run (only a step run directly holds claims
		// then): one mark, for every job, rather than one per write,
		// which would pile up in a Scheduler not started.
		a.marks = append(a.marks, jobKey{})
	}
	a.mu.Unlock()
	s.notify()
}

// listen makes the store's notifications of writes by other processes
// wake the loop from Start to Stop, when the store is a Notifier (without
// one, they are found at the next poll). Any of them may be to a job the
// loop holds a claim on (see wrote): a WriteNotifier's notifications give
// back the claims on the jobs they name; a Notifier's, which name no job,
// give back every held claim.
func (s *Scheduler) listen(ctx context.Context) error {
	if n, ok := s.store.(WriteNotifier); ok {
		ch, err := n.NotifyWrites(ctx)
		if err != nil {
			return err
		}
		s.workers.Add(1)
		go func() {
			defer s.workers.Done()
			for ws := range ch {
				s.wroteAll(ws)
			}
		}()
		return nil
	}
	n, ok := s.store.(Notifier)
	if !ok {
		return nil
	}
	ch, err := n.Notify(ctx)
	if err != nil {
		return err
	}
	s.workers.Add(1)
	go func() {
		defer s.workers.Done()
		for range ch {
			s.wrote("", "")
		}
	}()
	return nil
}

// wroteAll is wrote for each of ws, with one wake-up.
func (s *Scheduler) wroteAll(ws []Written) {
	a := &s.ahead
	a.mu.Lock()
	for _, w := range ws {
		a.marks = append(a.marks, jobKey{w.Collection, w.Name})
	}
	a.mu.Unlock()
	s.notify()
}

// notifyDue wakes the loop after outcomes were recorded, the earliest of
// whose jobs is due again at due (zero: none is), unless the loop will claim
// by then anyway: it wakes when the loop waits for no instant (it waits for a
// free slot, or claims at its next step), or when due comes before its next
// claim. While a claim is under way, only a job due again wakes it (the
// claim may have missed it): a slot that an outcome frees meanwhile does not,
// as the claim asked for every slot free when it began, and claims again at
// once when it got them all.
func (s *Scheduler) notifyDue(due time.Time) {
	n := s.ahead.next.Load()
	if n == 0 || !due.IsZero() && due.UnixNano() < n {
		s.notify()
	}
}

// heldChanged publishes the start of the earliest held claim.
func (a *aheadClaims) heldChanged() {
	var n int64
	if len(a.held) > 0 {
		n = a.held[0].start.UnixNano()
	}
	a.first.Store(n)
}

// startsWithin reports whether a held claim starts within d of now.
func (a *aheadClaims) startsWithin(now time.Time, d time.Duration) bool {
	n := a.first.Load()
	return n != 0 && n-now.UnixNano() < int64(d)
}

// linger is how long an outcome may wait for others to be recorded with it
// while claims held ahead start meanwhile (see outcomeBatch):
// Config.ClaimAhead, 0 when nothing is claimed ahead. Its job is due again
// no sooner (or the outcome is recorded at once), and ClaimAhead is at most
// a tenth of the lease, so only the history's readers wait for it.
func (s *Scheduler) linger() time.Duration { return s.claimAhead() }

// setClaimAt makes t the instant of the loop's next claim.
func (a *aheadClaims) setClaimAt(t time.Time) {
	a.claimAt = t
	a.next.Store(t.UnixNano())
}

// reachCut sets the loop's next claim halfway from now to the instant of
// the last held claim, and reports whether it did: whether one is held
// nearReach or more after now (closer, the halves would shrink towards
// it step after step; the loop then claims as before, at once or when a
// slot frees).
// The held claims then reach less far than ClaimAhead, cut short by the
// slots MaxConcurrency leaves free (at a steady rate, once rate ×
// ClaimAhead nears it), and every job due before the last of them is held:
// claiming at once, or as each attempt ends and frees its slot, would take
// a claim for every job or two. Halfway there, the jobs held have started
// and those that ended have freed their slots, and the next claim takes
// them all in one call, with half the held reach left for its round trip.
// A loop woken by a write or a job due again (woken) does not wait so
// when no slot is free: it claims when the next attempt ends.
func (a *aheadClaims) reachCut(now time.Time) bool {
	if len(a.held) == 0 {
		return false
	}
	last := a.held[len(a.held)-1].start
	if last.Sub(now) < nearReach {
		return false
	}
	a.setClaimAt(now.Add(last.Sub(now) / 2))
	return true
}

// claiming tells notifyDue that a claim is under way (see there); the
// loop sets the instant of its next claim once the claim returns.
func (a *aheadClaims) claiming() { a.next.Store(math.MaxInt64) }

// claimNow makes the loop claim at its next step.
func (a *aheadClaims) claimNow() {
	a.claimAt = time.Time{}
	a.next.Store(0)
}

// nearReach is the least reach of the held claims for which reachCut
// claims halfway to the last of them.
const nearReach = 2 * time.Millisecond

// wakeAt returns t, or the instant at which the loop starts the earliest
// held claims when that is earlier: the start of the last held claim due
// within the firing window (Config.FiringWindow) of the earliest one, so
// that those due that close together start from one wake-up of the loop
// and one hand-off to the workers, none before its instant and, when the
// loop is free at that instant, none more than the window after it (a
// loop busy in a store call then starts them once the call returns, as it
// would one claim alone). A held claim with none due within the window
// after it starts at its instant.
func (a *aheadClaims) wakeAt(t time.Time) time.Time {
	if len(a.held) == 0 {
		return t
	}
	first := a.held[0].start
	w := first
	for _, h := range a.held[1:] {
		if h.start.Sub(first) > a.window {
			break
		}
		w = h.start
	}
	return minTime(t, w)
}

// hold keeps claims until their due instants. A claim that took over a
// lease took one that had expired at the claim (see ClaimDueBy), so
// nothing keeps a held job from starting at its due instant.
func (a *aheadClaims) hold(claims []*JobRecord) {
	for _, r := range claims {
		a.held = append(a.held, heldClaim{r, r.Schedule.DueAt})
	}
	slices.SortStableFunc(a.held, func(x, y heldClaim) int { return x.start.Compare(y.start) })
	a.heldChanged()
}

// startHeld hands the held claims whose instant is not after now to the
// workers, as claimed at now; they are in flight from then on. Held claims
// and the jobs in flight together are at most Config.MaxConcurrency (and
// at most claimBatch are held at once), so that a worker is free for each
// held job when it starts: one waiting for a worker would outlive its
// lease, as the lease keeper starts only with the attempt.
//
// A held claim whose lease has less than leaseToStart left at clock (the
// instant by the clock at which the jobs start: later than now when the
// claim's answer came late, a store call hung, the process paused for
// long or the clock jumped) does not start: its lease has ended, or may
// end before the lease keeper extends it, and then another instance may
// take the job over and run it too. startHeld returns such claims,
// appended to stale, for the loop to give back: the job is then due at
// once, for the next claim, this instance's or another's, which runs it
// once; a claim that another instance took over meanwhile, or that this
// one claimed again once its lease lapsed, is no longer this claim's, and
// GiveBack leaves it (ErrLeaseLost).
func (s *Scheduler) startHeld(now, clock time.Time, stale []*JobRecord) []*JobRecord {
	a := &s.ahead
	n := 0
	for n < len(a.held) && !a.held[n].start.After(now) {
		n++
	}
	if n == 0 {
		return stale
	}
	starts := a.starts[:0]
	given := len(stale)
	for _, h := range a.held[:n] {
		if s.leaseTooShort(h.r, clock) {
			stale = append(stale, h.r)
			continue
		}
		starts = append(starts, h.r)
	}
	if late := stale[given:]; len(late) > 0 {
		s.warnTooLate(late, clock)
	}
	k := copy(a.held, a.held[n:])
	clear(a.held[k:])
	a.held = a.held[:k]
	a.heldChanged()
	if len(starts) == 0 {
		return stale
	}
	s.inFlight.Add(int64(len(starts)))
	held := s.cut.heldOff(now, s.takeoverGrace())
	if s.pool {
		s.work.push(starts, now, held)
	} else {
		for _, r := range starts {
			go s.process(s.execCtx, task{r, now, held}, nil) // runDue driven without Start, in tests
		}
	}
	clear(starts)
	a.starts = starts[:0]
	return stale
}

// warnTooLate warns that the held claims late, found in one pass of
// startHeld, had too little of their leases left at clock to start, and
// will be given back unrun (the loop gives them back after the pass). It
// does so in one line however many there are: a slow store or an outage
// finds many at once, and a line each would flood the log. The line says
// how many, the IDs of the first keptSample jobs, and lease_until and
// lease_left of the first one, the earliest due (held claims are in the
// order of their start): not the least lease left among them, which a
// claim taken earlier for a later instant may have.
func (s *Scheduler) warnTooLate(late []*JobRecord, clock time.Time) {
	ids := make([]string, min(len(late), keptSample))
	for i := range ids {
		ids[i] = late[i].ID()
	}
	s.log.Warn("claimed jobs have too little of their leases left to start, and will be given back unrun",
		"to_give_back", len(late), "jobs", ids, "lease_until", late[0].LeaseUntil, "lease_left", late[0].LeaseUntil.Sub(clock))
}

// leaseTooShort reports whether the claim on r has too little of its
// lease left at clock to start (see leaseToStart): its job is then given
// back unrun.
func (s *Scheduler) leaseTooShort(r *JobRecord, clock time.Time) bool {
	return r.LeaseUntil.Sub(clock) < s.leaseToStart()
}

// leaseToStart is the least lease a held claim needs left to start: two
// thirds of Config.LeaseDuration. The lease keeper first extends a lease
// a third of LeaseDuration after its attempt starts, or as soon as it has
// two thirds of LeaseDuration left if that comes first (see
// firstExtension), by the first of its passes, a sixth of LeaseDuration
// apart, that comes within a sixth of that instant: a claim that starts
// with two thirds left is extended within a sixth of LeaseDuration, with
// at least half a LeaseDuration left. A claim held no longer than
// Config.ClaimAhead (at most a tenth of LeaseDuration) has nine tenths
// left.
func (s *Scheduler) leaseToStart() time.Duration { return s.cfg.LeaseDuration * 2 / 3 }

// dropWritten takes the held claims on the jobs written through this
// Scheduler since the loop last looked (see wrote) out of those it holds,
// so that none of them starts, and reports whether anything was written;
// the loop gives them back (giveBackWritten) once it has started the held
// claims that are due: a store that is slow to give back keeps those from
// starting no later than their instants.
func (s *Scheduler) dropWritten() (drop []*JobRecord, wrote bool) {
	a := &s.ahead
	a.mu.Lock()
	marks := a.marks
	a.marks = nil
	a.mu.Unlock()
	if len(marks) == 0 {
		return nil, false
	}
	a.held = slices.DeleteFunc(a.held, func(h heldClaim) bool {
		if slices.ContainsFunc(marks, func(k jobKey) bool { return k.covers(h.r) }) {
			drop = append(drop, h.r)
			return true
		}
		return false
	})
	a.heldChanged()
	return drop, true
}

// giveBackWritten gives back the claims dropWritten took, and those
// startHeld found with too little lease left to start (kept past their
// leases, or claimed by a claim answered late), within giveBackTimeout: the
// loop starts nothing meanwhile, and the other claims it holds must keep
// enough of their leases to start (see startHeld). A claim not given back
// in time stays leased until its lease expires; nothing runs it
// meanwhile.
func (s *Scheduler) giveBackWritten(ctx context.Context, drop []*JobRecord) {
	if len(drop) == 0 {
		return
	}
	ctx, cancel := uncut(ctx, s.giveBackTimeout())
	defer cancel()
	s.giveBack(ctx, drop)
}

// uncut returns a context for a store call of the loop that changes
// leases, which Stop must not cut short: ctx's values without its
// cancellation, ending after d. A claim or give-back cancelled while its
// statement was under way may still have been committed, its answer lost:
// the jobs it claimed would then stay leased to this instance, which does
// not know it holds them, and wait out the lease before another instance
// may run them. Left to end, the claims it took are held and Stop gives
// them back.
func uncut(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), d)
}

// giveBackTimeout bounds an AheadClaimer.GiveBack: a tenth of
// Config.LeaseDuration. A held claim keeps at least nine tenths of its
// lease until its instant, so one held through the loop's GiveBack of
// claims on written jobs that took all of it still has the lease it needs
// to start; and Stop's give-backs end soon after Stop.
func (s *Scheduler) giveBackTimeout() time.Duration { return s.cfg.LeaseDuration / 10 }

// takeHeld returns every held claim's record and holds none.
func (a *aheadClaims) takeHeld() []*JobRecord {
	recs := make([]*JobRecord, len(a.held))
	for i, h := range a.held {
		recs[i] = h.r
	}
	a.held = nil
	a.heldChanged()
	return recs
}

// releaseHeld gives back every held claim as the loop ends (Stop), the
// claims of the loop's last claim, which Stop does not cut short (see
// uncut), included: another instance may then claim those jobs at once,
// rather than once their leases expire. It does so within
// giveBackTimeout, under a context that Stop's does not cut short either:
// Stop's may have ended already, the loop's last claim having outlived
// it. See leaveUnstarted.
func (s *Scheduler) releaseHeld(stopCtx context.Context) {
	recs := s.ahead.takeHeld()
	if len(recs) == 0 {
		return
	}
	ctx, cancel := uncut(stopCtx, s.giveBackTimeout())
	defer cancel()
	s.giveBack(ctx, recs)
}

// giveBack is leaveUnstarted for held claims, which are in s.wg.
func (s *Scheduler) giveBack(ctx context.Context, recs []*JobRecord) {
	s.leaveUnstarted(ctx, recs)
	s.wg.Add(-len(recs)) // not in flight: they did not start
}

// leaveUnstarted gives back claims on recs that will not start, in one
// AheadClaimer.GiveBack: each job's lease goes back to what it was before
// the claim (a takeover stays one for the next claim), and what was
// written to the job meanwhile stays. A job deleted meanwhile needs
// nothing; a claim whose lease another instance took over is no longer
// this Scheduler's to give back. Over a store that is not an AheadClaimer
// (a claim of a due job that came back after Stop began), releaseLeases
// releases the leases instead. A claim that cannot be given back (the
// store fails, or ctx ends first) stays leased until its lease expires;
// nothing runs it meanwhile. Those are logged in one line (see kept).
func (s *Scheduler) leaveUnstarted(ctx context.Context, recs []*JobRecord) {
	if len(recs) == 0 {
		return
	}
	if s.claimer == nil {
		s.releaseLeases(ctx, recs)
		return
	}
	errs := s.claimer.GiveBack(ctx, s.cfg.InstanceID, recs)
	var k kept
	for i, r := range recs {
		var err error
		if i < len(errs) {
			err = errs[i]
		}
		k.add(r, err)
	}
	k.log(s, "give back jobs claimed ahead of their due times", len(recs))
}

// kept tallies the claims that a give-back or a release of leases could
// not undo (the store failed, or the context ended), so that they are
// logged in one line however many there are: when Stop's context has
// ended, or the store is away, every claim fails alike, and a line each
// would flood the log. Safe for concurrent use.
type kept struct {
	mu     sync.Mutex
	n      int
	sample []string // the IDs of the first keptSample jobs kept
	err    error    // the first one's error
}

// keptSample bounds the job IDs that kept's warning names.
const keptSample = 10

// add notes the error of the give-back or release of the claim on r,
// when it leaves the claim leased (see leftLeased).
func (k *kept) add(r *JobRecord, err error) {
	if leftLeased(err) {
		k.note(r.ID(), err)
	}
}

// note counts a failure of job id with err, keeping the first error and
// the first keptSample IDs.
func (k *kept) note(id string, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.n++; k.n == 1 {
		k.err = err
	}
	if len(k.sample) < keptSample {
		k.sample = append(k.sample, id)
	}
}

// log warns, when claims were kept, that what (a give-back or a release
// of leases, of claims in all) left them leased: how many, the IDs of the
// first keptSample jobs and the first one's error, and that their leases
// expire by themselves at their end.
func (k *kept) log(s *Scheduler, what string, claims int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.n == 0 {
		return
	}
	s.log.Warn(what+": some stay leased to this instance, and their leases expire by themselves at their end",
		"kept", k.n, "claims", claims, "jobs", k.sample, "first_err", k.err)
}

// leftLeased reports whether err, of the give-back or release of a claim,
// leaves the claim leased until its lease expires: nil, ErrNotFound (the
// job was deleted meanwhile) and ErrLeaseLost (another instance took it
// over, or this one claimed it again once the claim's lease lapsed, and
// that later claim runs it) leave no claim behind that nothing runs. (A
// claim both written and extended since is not given back either, with
// ErrLeaseLost, see AheadClaimer.GiveBack: it stays leased until its end;
// only a late extension of an earlier attempt's lease does that.)
func leftLeased(err error) bool {
	return err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrLeaseLost)
}

// releaseLeases releases the leases of claims on recs that will not
// start, over a store that is not an AheadClaimer (which has no GiveBack):
// it records each job as the store holds it, read afresh (the claimed
// record may have been stepped since, and a write may have come), with no
// history. Store.Record then releases the lease and changes nothing else
// of the job but its Version (one higher, as after any write: a
// conditional write with the ETag still matches). What it cannot do is
// put back the lease the claim replaced: a claim that took over another
// instance's expired lease leaves the job unleased, and the next claim
// reports no takeover. A job deleted meanwhile needs nothing, and neither
// does one whose lease is no longer this Scheduler's; a job written
// meanwhile is read again. A job deleted and created again under its name
// needs nothing either: it is another job, whose lease, even one held by
// this Scheduler's InstanceID, is not the claim's. Up to releaseAtOnce
// leases are released at once: each takes a read and a write, and the
// caller's context bounds them all (see giveBackTimeout).
func (s *Scheduler) releaseLeases(ctx context.Context, recs []*JobRecord) {
	var next atomic.Int64 // the index of the next claim to release
	var wg sync.WaitGroup
	var k kept
	for range min(len(recs), releaseAtOnce) {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(recs)); i = next.Add(1) - 1 {
				r := recs[i]
				k.add(r, s.releaseLease(ctx, r))
			}
		})
	}
	wg.Wait()
	k.log(s, "release the leases of jobs claimed as the scheduler stopped", len(recs))
}

// releaseAtOnce bounds the leases that releaseLeases releases at once.
const releaseAtOnce = 16

// releaseLease is releaseLeases for the job of one claim.
func (s *Scheduler) releaseLease(ctx context.Context, claim *JobRecord) error {
	for range maxWriteAttempts {
		r, err := s.runStore.GetJob(ctx, claim.Collection, claim.Name)
		if err != nil {
			return err
		}
		if r.LeaseOwner != s.cfg.InstanceID || !r.sameJob(claim) {
			return nil
		}
		if err := s.runStore.Record(ctx, s.cfg.InstanceID, r, nil); !errors.Is(err, ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("release the lease of job %q: too many concurrent writes: %w", claim.Name, ErrConflict)
}
