package scheduler

import (
	"context"
	"errors"
	"slices"
	"time"
)

// loop is the goroutine that owns the timer: it runs runDue, then sleeps
// until the instant runDue returned, a wake-up from notify, or ctx's end.
// A wake-up makes the next step claim (see aheadClaims.claimAt). When ctx
// ends, the claims held ahead of their instants are given back.
func (s *Scheduler) loop(ctx context.Context) {
	defer close(s.loopDone)
	s.ahead.run(true) // before the first claim: nothing is held before it
	defer s.ahead.run(false)
	defer func() {
		s.mu.Lock()
		stopCtx := s.stopCtx
		s.mu.Unlock()
		s.releaseHeld(stopCtx)
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		s.stepped.Store(now.UnixNano())
		wake := s.runDue(ctx, now)
		if ctx.Err() != nil {
			return
		}
		timer.Reset(max(time.Until(wake), 0))
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
			s.ahead.claimNow()
			s.ahead.woken = true
		case <-timer.C:
		}
	}
}

// runDue is one step of the loop at now: it starts retention when due,
// drops the claims held on jobs written since the last step, starts the
// held claims whose instant came, gives back the dropped ones, claims the jobs due within
// Config.ClaimAhead when the time for that came (holding those not due
// yet), hands each job to start to a worker (which records what needs no
// attempt, or runs the attempt), and returns when the loop should look
// again.
//
// The loop claims again at once after a claim that took all it asked for
// and holds nothing due later (there may be more jobs due now); halfway to
// the last held claim's instant after one that took all it asked for and
// holds claims due later, and when no slot is free while it holds claims
// (see reachCut); once the last of the jobs it claimed is taken by a
// worker, while any of them waits for one (see nextTask); half a
// ClaimAhead after one that took some, when the jobs
// that were not due within the first claim's reach may be; otherwise
// ClaimAhead before the store's next due instant (NextDue), or after
// PollInterval. A wake-up (an API write, a freed slot while nothing is
// held, an outcome whose job is due again before then: see notifyDue)
// makes it claim at its next step.
func (s *Scheduler) runDue(ctx context.Context, now time.Time) time.Time {
	began := time.Now() // the clock when the step began, for the leases its claim takes at now
	if ctx.Err() != nil {
		return now // Stop was called: nothing starts, nothing is claimed
	}
	if !now.Before(s.nextPrune) && s.pruning.CompareAndSwap(false, true) {
		s.nextPrune = now.Add(pruneInterval)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.pruning.Store(false)
			s.prune(ctx, now)
		}()
	}
	a := &s.ahead
	drop, wrote := s.dropWritten()
	if ctx.Err() == nil { // Stop may have been called since the check above
		drop = s.startHeld(now, now, drop)
	}
	if wrote || len(drop) > 0 {
		s.giveBackWritten(ctx, drop)
		a.claimNow() // the jobs given back are due again (see startHeld)
	}
	if ctx.Err() != nil {
		return now // Stop was called: no claim begins, the loop gives back what it holds
	}
	wakeBy := now.Add(s.cfg.PollInterval)
	if now.Before(a.claimAt) {
		return a.wakeAt(minTime(wakeBy, a.claimAt))
	}
	// While jobs it claimed wait for a worker to take them, the loop
	// claims nothing: the worker that takes the last of them wakes it
	// (see nextTask), and it then claims the slots freed meanwhile in one
	// call, rather than one or two slots each time an attempt ends (a
	// call for every job or two, each with its fixed cost, while the
	// jobs claimed before wait for the workers on their way). Meanwhile,
	// as during a claim, only a job due again wakes it (see notifyDue).
	if s.work.waitTaken() {
		a.claiming()
		return a.wakeAt(wakeBy)
	}
	a.claimNow() // outcomes recorded from now on wake the loop, until a claim begins (claiming)
	// The claims held take workers as the jobs that run do: a claim
	// beyond the free workers would wait for one, unleased once its
	// lease ends, and another instance would take it over and run it too.
	// Outcomes that wait for a slow store keep their slots but not their
	// workers, up to waitingMost of them: they must not keep the loop
	// from claiming what comes due; the worker that records them is
	// busy meanwhile, and with every worker busy or recording nothing is
	// claimed (see outcomeBatch.idle). The loop says it waits for a slot
	// before it counts them, so that an outcome or a recording worker
	// that frees one after the count wakes it (see wakeForSlot).
	s.outcomes.loopWaits.Store(true)
	free := min(s.cfg.MaxConcurrency-s.busy()-len(a.held), claimBatch-len(a.held))
	if free <= 0 {
		if a.woken {
			// Woken by a write or a job due again, which may be due
			// now: the loop claims when the next attempt ends.
			a.slotWanted.Store(true)
			return a.wakeAt(wakeBy)
		}
		if a.reachCut(now) {
			// It claims at claimAt, whatever ends before: a slot freed
			// meanwhile would wake it for a step that claims nothing.
			s.outcomes.loopWaits.Store(false)
			return a.wakeAt(minTime(wakeBy, a.claimAt))
		}
		return a.wakeAt(wakeBy) // the next job that ends wakes the loop
	}
	s.outcomes.loopWaits.Store(false)
	a.claiming()
	a.woken = false
	a.slotWanted.Store(false)
	horizon := s.claimAhead()
	limit := free
	var claims []*JobRecord
	var err error
	// After an outage of its own, the loop takes no lease over that
	// expired since it lost the store, until the grace is over (see
	// cutOff): leases are compared with leaseNow rather than now.
	if s.claimer != nil {
		// Over a store whose ClaimDue has one clock for due times and
		// leases, the grace would hold back the jobs that came due too:
		// there only the loop's own failures start one.
		s.cut.sawOutages(s.health.outages.Load())
	}
	leaseNow := s.cut.leaseClock(now)
	cctx, cancel := uncut(ctx, s.cfg.LeaseDuration) // Stop must not drop a claim's answer
	if horizon > 0 || (s.claimer != nil && leaseNow.Before(now)) {
		claims, err = s.claimer.ClaimDueBy(cctx, ClaimRequest{Now: leaseNow, DueBy: now.Add(horizon), Owner: s.cfg.InstanceID, LeaseUntil: now.Add(s.cfg.LeaseDuration), Limit: limit})
	} else {
		claims, err = s.runStore.ClaimDue(cctx, leaseNow, s.cfg.InstanceID, now.Add(s.cfg.LeaseDuration), limit)
	}
	cancel()
	if err != nil {
		s.cut.failed(err)
		s.storeFailed(ctx, "claim due jobs", err, now)
		return a.wakeAt(minTime(wakeBy, now.Add(time.Second)))
	}
	// The grace counts from the claim's answer, which after an outage may
	// come late (a store still recovering).
	s.cut.answered(now.Add(time.Since(began)), s.takeoverGrace())
	s.storeAnswered(now)
	s.wg.Add(len(claims))
	a.hold(claims)
	if ctx.Err() != nil {
		// Stop began during the claim: none of its jobs starts; the
		// loop ends and gives them all back (see releaseHeld).
		return now
	}
	// The leases were taken at now, and the claim's answer may have
	// come late (a slow store, a network stall): the lease each job has
	// left is measured on the clock, now and what the step took since.
	if stale := s.startHeld(now, now.Add(time.Since(began)), nil); len(stale) > 0 {
		s.giveBackWritten(ctx, stale)
		a.claimNow() // the jobs given back are due again
		return now
	}
	if len(claims) == limit {
		if horizon > 0 && a.reachCut(now) {
			return a.wakeAt(minTime(wakeBy, a.claimAt))
		}
		return now // there may be more, due now
	}
	if horizon > 0 && len(claims) > 0 {
		a.setClaimAt(now.Add(horizon / 2))
		return a.wakeAt(minTime(wakeBy, a.claimAt))
	}
	next, err := s.runStore.NextDue(ctx)
	if err != nil {
		s.cut.failed(err)
		s.storeFailed(ctx, "next due job", err, now)
		return a.wakeAt(minTime(wakeBy, now.Add(time.Second)))
	}
	claimAt := wakeBy
	if !next.IsZero() {
		claimAt = minTime(wakeBy, maxTime(next.Add(-horizon), now.Add(horizon/2)))
	}
	if hold := s.cut.until; now.Before(hold) && !claimAt.After(now) {
		// What is due is a lease held off (see cutOff): the loop looks
		// again each second, for the jobs that come due meanwhile, and
		// takes it over once the grace is over.
		claimAt = minTime(hold, now.Add(time.Second))
	}
	a.setClaimAt(claimAt)
	return a.wakeAt(claimAt)
}

// cutOff is the loop's record of its own outages: an instance that lost
// the store does not take over, until a grace after its loop finds the
// store back, the leases that expired since it lost it. Their owners most
// likely lost the store too, for as long: their attempts may have ended
// meanwhile, their outcomes waiting to be recorded, or may still run, their
// leases waiting to be extended. Within the grace the owners record those
// outcomes (recordAgain tries again at most recordRetryLast after its last
// try) and extend those leases (the lease keeper tries again at its next
// pass or the one after, within a third of LeaseDuration), so that an
// occurrence that ran is not run again by the instance that happened to
// find the store back first. A lease that expired before the loop lost the
// store (its owner stopped extending it while the store answered) is
// taken over at once, and one whose owner is gone for good a grace later
// than without the outage. Over a store that is no AheadClaimer, whose
// ClaimDue has one clock for due times and leases, the jobs that came due
// since the loop lost the store wait for the grace too. The claims on the
// runs of OverlapAllowAll, which are no leases of the store but part of a
// job's schedule, are held off by the steps of the jobs (see heldOff and
// machine.held). Only the loop's goroutine (or the test that drives
// runDue) uses it.
type cutOff struct {
	outages    int64     // the Scheduler's outages the loop has taken as its own (see sawOutages)
	answeredAt time.Time // the loop's last call that succeeded outside a grace
	lost       bool      // a call of the loop failed for the store since answeredAt
	since      time.Time // during a grace: the lease clock of the loop's claims (answeredAt when it began)
	until      time.Time // the grace's end; zero or past: none
}

// failed notes the failure of a call of the loop with err: a failure of
// the store (see transient) starts an outage.
func (c *cutOff) failed(err error) {
	if transient(err) {
		c.lost = true
	}
}

// sawOutages takes the Scheduler's outages so far, n (storeHealth's
// count), as the loop's own: one that began since the loop last looked
// is an outage of the loop even if the loop made no call in it (every
// worker busy, or claimed jobs waiting for one), as the lease keeper's or
// the recorder's failures showed it; its leases' owners lost the store
// as it did.
func (c *cutOff) sawOutages(n int64) {
	if n > c.outages {
		c.outages = n
		c.lost = true
	}
}

// answered notes that a claim of the loop succeeded at now: after an
// outage, a grace of grace begins, whose lease clock is the instant of the
// last call that succeeded before it (zero when none did: the loop then
// takes over no lease during the grace).
func (c *cutOff) answered(now time.Time, grace time.Duration) {
	if c.lost {
		c.lost = false
		c.since, c.until = c.answeredAt, now.Add(grace)
	}
	if !now.Before(c.until) {
		c.answeredAt = now
	}
}

// leaseClock returns the instant by which a claim at now finds leases
// expired: now, but during an outage (the claim may be the first that
// succeeds) and its grace the instant the loop lost the store.
func (c *cutOff) leaseClock(now time.Time) time.Time {
	if c.lost {
		return c.answeredAt
	}
	if now.Before(c.until) {
		return c.since
	}
	return now
}

// heldOff is a takeover grace as a step of a job sees it: a claim on one
// of the job's runs (see Run) that expired after since is not taken over
// before until. The zero heldOff holds nothing off.
type heldOff struct{ since, until time.Time }

// heldOff returns the takeover grace of a step at now: during an outage
// of the loop, the claims that expired since it lost the store are held
// off at least a grace from now (the grace begins when the loop finds the
// store back); during a grace, those that expired since it lost the store
// until the grace ends; otherwise none (nil).
func (c *cutOff) heldOff(now time.Time, grace time.Duration) *heldOff {
	switch {
	case c.lost:
		return &heldOff{c.answeredAt, now.Add(grace)}
	case now.Before(c.until):
		return &heldOff{c.since, c.until}
	}
	return nil
}

// holds reports whether h holds off, at now, the takeover of a claim that
// expired at expired.
func (h heldOff) holds(expired, now time.Time) bool {
	return now.Before(h.until) && expired.After(h.since)
}

// takeoverGrace is how long an instance whose loop lost the store holds
// off the takeovers of leases that expired meanwhile (see cutOff): half of
// LeaseDuration, and at least twice recordRetryLast.
func (s *Scheduler) takeoverGrace() time.Duration {
	return max(s.cfg.LeaseDuration/2, 2*recordRetryLast)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// worker processes claimed jobs until s.work is closed. Config.MaxConcurrency
// workers run from Start to Stop; reusing them spares a goroutine (and its
// stack growth) per attempt.
func (s *Scheduler) worker() {
	defer s.workers.Done()
	// A context per worker, so that the attempts' contexts do not all
	// register with one parent (a lock every attempt would contend on).
	ctx, cancel := context.WithCancel(s.execCtx)
	defer cancel()
	w := &workerState{lease: s.leases.addSlot()}
	defer s.leases.removeSlot(w.lease)
	wake := make(chan struct{}, 1)
	for {
		t, ok := s.nextTask(wake)
		if !ok {
			return
		}
		s.process(ctx, t, w)
	}
}

// nextTask is the calling worker's next task (see dispatch.take). The
// worker that takes the last one waiting wakes the loop if it waits for
// that (see runDue): the loop then claims in one call the slots that
// attempts freed meanwhile, which did not wake it (see wakeForSlot).
func (s *Scheduler) nextTask(wake chan struct{}) (task, bool) {
	t, wakeLoop, ok := s.work.take(wake)
	if wakeLoop {
		s.notify()
	}
	return t, ok
}

// workerState is what a worker reuses from attempt to attempt.
type workerState struct {
	occ    Occurrence // see machine.occ
	timing Timing     // see Scheduler.timingIn
	lease  *leaseSlot
}

// process advances a claimed job and runs its attempt, or records the
// bookkeeping when no attempt is due. It holds a slot of the semaphore.
// w is the calling worker's state, nil when no worker calls; no record
// refers to w.occ once process returns.
func (s *Scheduler) process(execCtx context.Context, tk task, w *workerState) {
	r, now := tk.r, tk.now
	var occ *Occurrence
	var slot *leaseSlot
	var tbuf *Timing
	if w != nil {
		occ, slot, tbuf = &w.occ, w.lease, &w.timing
	}
	handedOff := false // the slot goes with the outcome to the batch
	defer func() {
		if !handedOff {
			s.freeSlot()
		}
	}()
	if execCtx.Err() != nil {
		// Stop returned (its context ended) before the job started: it
		// does not start now, and nothing is recorded.
		s.leaveStopped(execCtx, r, leaseBefore{r.PreviousLeaseOwner, r.PreviousLeaseUntil}, nil)
		return
	}
	if s.retries.stale(r) {
		// The outcome of its last attempt is being recorded again, or
		// was recorded over this claim (see recordAgain).
		return
	}
	if now := time.Now(); s.leaseTooShort(r, now) {
		// It waited for a worker longer than startHeld allows for (the
		// process paused, say): as a held claim found so, it is given
		// back, and the claim that runs it next (here or elsewhere) runs
		// it once; one taken over meanwhile is left to its new owner.
		s.log.Warn("a claimed job waited for a worker until too little of its lease was left to start, and is given back unrun",
			"job", r.Name, "collection", r.Collection, "lease_until", r.LeaseUntil, "lease_left", r.LeaseUntil.Sub(now))
		s.leaveStopped(execCtx, r, leaseBefore{r.PreviousLeaseOwner, r.PreviousLeaseUntil}, nil)
		return
	}
	ctx := context.Background()
	var info attemptInfo
	claim := leaseBefore{r.PreviousLeaseOwner, r.PreviousLeaseUntil} // for a give-back
	// The claim replaced an expired lease: another instance's, or this
	// instance's own (the process restarted under its InstanceID, or its
	// claim lapsed while the store stalled). The occurrences due meanwhile
	// are merged alike, whichever instance claims the job (see
	// machine.tookOver); only another's is reported as a takeover.
	reclaimed := claim.owner != ""
	if prev := r.PreviousLeaseOwner; prev != "" {
		r.PreviousLeaseOwner, r.PreviousLeaseUntil = "", time.Time{}
		if prev != s.cfg.InstanceID {
			info.prevOwner = prev // reported once the attempt starts (see tookOver)
		}
	}
	for range 5 {
		t, err := s.timingIn(r, now, tbuf)
		if err != nil {
			s.log.Error("job timing", "job", r.Name, "collection", r.Collection, "err", err)
			r.Schedule.DueAt = time.Time{}
			s.record(r, nil)
			return
		}
		m := s.machine(r, now)
		m.occ = occ
		m.tookOver = reclaimed
		if tk.held != nil {
			m.held = *tk.held
		}
		if m.policy.Overlap == OverlapAllowAll || r.Schedule.running() > 0 {
			m.owner, m.hold = s.cfg.InstanceID, s.runHold(r.Job)
			if r.Schedule.running() > 0 {
				coll, name := r.Collection, r.Name // not r, which would then live on the heap
				m.runs = func(tag string) bool { return s.keepsRun(coll, name, tag) }
			}
		}
		// r is this goroutine's own copy: step may change it in place.
		next0, counted0 := r.Schedule.NextOccurrence, r.Schedule.Counted
		var prevRuns []Run // the runs before the step, whose claims it may take over
		if p := r.Schedule.Policy; p != nil && len(p.Running) > 0 {
			prevRuns = slices.Clone(p.Running)
		}
		requested := r.Schedule.RunRequested // for a replay of the step (see machine.replay)
		next := r.Status.NextExecutionTime   // which the step may drop, for the attempt's start
		run, due, hist := m.step(r, t, now)
		m.spare = dropped(r, next)
		miss := s.passedOver(r, t, next0, counted0, misfireOf(m.policy.Missed), now)
		var held *heldPermits
		if due {
			switch limits, known := s.policies.limits(s, r.Collection, now); {
			case !known:
				// As when the store fails to give permits: the attempt
				// waits, and the occurrence is due again then.
				m.waitForLimit(r, &run, now, now.Add(limitWaitMax), nil, -1)
				due = false
			case len(limits) > 0:
				var retryAt time.Time
				var refused int
				if held, retryAt, refused = s.takePermits(r, &run, limits, now, max(s.cfg.LeaseDuration, m.hold)); !retryAt.IsZero() {
					// The occurrence stays in progress and waits: its job
					// is recorded, due again at retryAt.
					m.waitForLimit(r, &run, now, retryAt, limits, refused)
					due = false
				}
			}
		}
		if due && execCtx.Err() != nil {
			// Stop returned while the step waited for the store (the
			// run policy, the permits): the attempt does not start.
			s.leaveStopped(execCtx, r, claim, held)
			return
		}
		// An occurrence that runs beside others (see Run) starts once the
		// job is written with it: the job's lease is then released.
		detached := due && r.Schedule.Current == nil
		var start time.Time // the attempt's start, on the clock its lease is checked by
		if due && !detached {
			if start = time.Now(); s.leaseTooShort(r, start) {
				// The store's calls since the check above (the permits, a
				// reread) took so long that the lease would lapse before
				// its first extension: as there, it is given back unrun.
				s.log.Warn("a claimed job's store calls before its attempt took until too little of its lease was left to start, and is given back unrun",
					"job", r.Name, "collection", r.Collection, "lease_until", r.LeaseUntil, "lease_left", r.LeaseUntil.Sub(start))
				s.leaveStopped(execCtx, r, claim, held)
				return
			}
		}
		if detached && prevRuns != nil {
			s.tookOverRun(&run, prevRuns, &info)
		}
		if due && !detached {
			// A catch-up occurrence that absorbed the missed ones shows
			// them on its attempt's span.
			absorbed := miss != nil && run.Retry == 0 && !run.ErrorAction && run.Expected.Equal(next0)
			if absorbed {
				info.missed = miss
			}
			s.missed(miss, absorbed)
			a := attempt{r: r, t: t, o: run, hist: hist, claimed: now, requested: requested, start: start, m: m, info: info, buf: occ, slot: slot, permits: held}
			if m.policy.Overlap == OverlapCancelRunning && r.State == JobEnabled {
				a.cancelAt = r.Schedule.NextOccurrence
			}
			handedOff = s.runAttempt(execCtx, &a)
			return
		}
		ownOccurrence(r, occ)
		err = s.runStore.Record(ctx, s.cfg.InstanceID, r, hist)
		if err == nil {
			s.emit(r.Job, hist)
			s.missed(miss, false)
			if !detached {
				// The record released the lease this claim took over:
				// the claim that later starts the job takes over none.
				s.tookOver(r, &run, &info)
			}
			if detached && execCtx.Err() != nil {
				// Stop returned during the write: the occurrence's
				// claim is written, and another instance takes it
				// over once it expires.
				if held != nil {
					s.releasePermits(held.holder)
				}
				return
			}
			if detached {
				s.notify() // the job's next occurrence may start on another worker
				a := attempt{r: r, t: t, o: run, claimed: now, m: m, info: info, detached: true, permits: held}
				var holder string // the permits' holder, extended with the claim
				if held != nil {
					holder = held.holder
				}
				h := s.holdRun(r.Collection, r.Name, &a.o, now.Add(m.hold), holder)
				a.start = time.Now()
				res := s.execute(execCtx, &a)
				if held != nil {
					s.releasePermits(held.holder)
				}
				s.recordRun(r.Collection, r.Name, &a.o, &res)
				s.dropRun(h)
			}
			return
		}
		if held != nil {
			// The occurrence did not start: the permits are not its
			// attempt's. Kept, they would refuse the step taken again
			// over a fresh read (a new holder) until they expire.
			s.releasePermits(held.holder)
		}
		if !errors.Is(err, ErrConflict) {
			s.recordFailed(ctx, r, err)
			return
		}
		fresh, gerr := s.reread(r)
		if gerr != nil {
			s.recordFailed(ctx, r, gerr)
			return
		}
		if fresh.LeaseOwner != s.cfg.InstanceID || !fresh.LeaseUntil.Equal(r.LeaseUntil) {
			// The job was claimed again since this claim's lease lapsed
			// (a lease is extended only once its attempt starts): that
			// claim runs it. Taking its lease over here would run the job
			// beside it, and a give-back would release it.
			s.log.Debug("a claimed job's lease lapsed before its attempt started, and the job was claimed again: left to that claim",
				"job", r.Name, "collection", r.Collection, "lease_until", r.LeaseUntil)
			return
		}
		r = fresh
	}
	s.log.Error("record job: too many conflicts", "job", r.Name, "collection", r.Collection)
}

// leaseBefore is a claimed job's lease before the claim, which a
// give-back puts back (see AheadClaimer.GiveBack).
type leaseBefore struct {
	owner string
	until time.Time
}

// leaveStopped gives back the claim on r, whose attempt did not start
// because Stop returned first (execCtx ended) or its lease had too little
// left (see leaseTooShort), and held, the permits it took (nil: none). claim is r's lease before the claim. Nothing is
// recorded.
func (s *Scheduler) leaveStopped(execCtx context.Context, r *JobRecord, claim leaseBefore, held *heldPermits) {
	if held != nil {
		s.releasePermits(held.holder)
	}
	r.PreviousLeaseOwner, r.PreviousLeaseUntil = claim.owner, claim.until
	ctx, cancel := uncut(execCtx, s.giveBackTimeout())
	defer cancel()
	s.leaveUnstarted(ctx, []*JobRecord{r})
}

// tookOverRun notes in info, when the attempt of run that r's step
// claimed was claimed by another instance before (in prev, r's runs before
// the step), that this instance takes it over; tookOver reports it once
// the attempt starts.
func (s *Scheduler) tookOverRun(run *Occurrence, prev []Run, info *attemptInfo) {
	i := slices.IndexFunc(prev, func(ru Run) bool { return ru.Tag == run.Tag })
	if i < 0 || prev[i].Owner == "" || prev[i].Owner == s.cfg.InstanceID {
		return
	}
	info.prevOwner, info.run = prev[i].Owner, true
}

// tookOver reports, as the attempt of occurrence o of r starts, that its
// claim took over info.prevOwner's expired lease of the job (or claim of
// the occurrence's run, see Run): to Config.Observer (TookOver) and the
// log. A claim whose step only records bookkeeping (the occurrence waits
// for a limit, say) reports it once that record is written, which
// releases the lease, so that the claim that later starts the job takes
// over none. A claim given back (at Stop) or that loses a race with a
// write reports nothing: given back, its takeover is reported by the
// claim that starts the job.
func (s *Scheduler) tookOver(r *JobRecord, o *Occurrence, info *attemptInfo) {
	prev := info.prevOwner
	if prev == "" {
		return
	}
	if obs := s.cfg.Observer; obs != nil {
		obs.TookOver(Takeover{Instance: s.cfg.InstanceID, PreviousOwner: prev, Collection: r.Collection, Job: r.Name})
	}
	if info.run {
		s.log.Info("took over an occurrence whose claim expired", "job", r.Name, "collection", r.Collection, "occurrence", o.Number, "previous_owner", prev)
	} else {
		s.log.Info("took over a job whose lease expired", "job", r.Name, "collection", r.Collection, "previous_owner", prev)
	}
}

// busy returns how many workers the jobs in flight take: those whose
// outcomes wait to be recorded take none, up to waitingMost of them,
// while a worker that records them is busy (see outcomeBatch.idle).
func (s *Scheduler) busy() int {
	n := s.inFlight.Load() // first: an outcome leaves idle before it leaves inFlight
	return int(n - min(s.outcomes.idle.Load(), waitingMost))
}

// release gives back the slot of a claimed job whose work is over.
func (s *Scheduler) release() {
	s.inFlight.Add(-1)
	s.wg.Done()
}

// freeSlot releases the slot of a claimed job whose attempt ended and
// whose outcome is recorded (or given up), then wakes the loop: the job
// may be due again, or the loop may wait for a slot. In this order, so
// that the loop woken finds the slot free; woken first, it could find
// every slot taken and sleep until its next poll.
func (s *Scheduler) freeSlot() {
	s.release()
	s.notify()
}

// prune applies the retention limits.
func (s *Scheduler) prune(ctx context.Context, now time.Time) {
	n, err := s.runStore.Prune(ctx, PruneRequest{
		HistoryBefore:   now.Add(-s.cfg.HistoryRetention),
		PerJob:          max(s.cfg.HistoryPerJob, 0), // NoHistory stores none: no limit to apply
		FinalJobsBefore: now.Add(-s.cfg.FinalJobRetention),
		LimitsBefore:    now.Add(-s.cfg.LeaseDuration),
	})
	if err != nil {
		if ctx.Err() == nil {
			s.log.Error("apply retention", "err", err)
		}
		return
	}
	if n > 0 {
		if obs := s.cfg.Observer; obs != nil {
			obs.Pruned(n)
		}
		s.log.Debug("applied retention", "deleted", n)
	}
}
