package scheduler

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

// machine is the job state machine: pure functions of a record, its
// timing, a policy and an instant. They modify the record in place and
// return the history entries they produce.
type machine struct {
	// policy is the job's run policy over its collection's, with Missed
	// and Overlap always set (the Scheduler's defaults fill them in).
	policy RunPolicy
	// threshold is Config.MisfireThreshold: the catch-up window of the
	// Skip missed policy when the run policy sets none.
	threshold time.Duration
	// occ, when not nil, is where step starts a scheduled occurrence
	// rather than in a new allocation: a worker's, reused from attempt to
	// attempt. The caller moves it to the heap (see ownOccurrence) before
	// the record outlives the worker's use of it; most attempts end the
	// occurrence, and then nothing is moved.
	occ *Occurrence
	// spare, when not nil, is an instant of the record's own that nothing
	// points to any more (the NextExecutionTime that the claim's step
	// dropped, see dropped), where complete writes the attempt's start
	// when the record has no LastExecutionTime of its own yet (none, or
	// the one NextExecutionTime points to; see lastExecution). Only the
	// process step that dropped it sets it: a machine made for a record
	// re-read (recordOutcome, replay) has none, and allocates.
	spare *time.Time
	// noEntries says that nothing wants history entries (the Scheduler
	// keeps none and nothing observes them): the functions make none and
	// return nil for them, and change the record as they would otherwise.
	noEntries bool
	// tagLater says that nothing reads the execution tag of an
	// occurrence that step starts before its attempt ends, unless the
	// executor asks for it (see attemptState) or the occurrence waits for
	// a limit: the machine makes no entries (so nothing observes the
	// Scheduler) and the job's occurrences do not run side by side
	// (OverlapAllowAll knows its runs by their tags). start then leaves
	// Occurrence.Tag empty, and tagged fills it in where it is read or
	// the occurrence is kept in the record: a record is never written
	// with a current occurrence without its tag.
	tagLater bool
	// owner, when not empty, is the instance that steps the record and
	// will run the attempt step returns: step then starts occurrences of
	// OverlapAllowAll as runs of their own (PolicyState.Running), claimed
	// by owner for hold. Empty when the caller records an outcome and
	// runs nothing.
	owner string
	hold  time.Duration
	// runs, when not nil, reports whether owner's attempt of the run with
	// an execution tag still runs here: resume then renews its claim
	// rather than starting it again. Nil: none does.
	runs func(tag string) bool
	// held is the stepping instance's takeover grace after an outage of
	// its own (see cutOff): resume takes over no claim on a run that it
	// holds off, and settle has the job looked at again when it ends, as
	// the loop takes over no lease of a job that expired in the outage
	// until then. Zero: none.
	held heldOff
	// tookOver says that the step's claim replaced an expired lease,
	// another instance's or this instance's own (a process restarted
	// under its InstanceID, a claim that lapsed while the store stalled):
	// the occurrences the lapsed lease made due are merged into the one
	// taken only when later than the recurrence interval (see
	// mergedUntil), whichever instance claims the job.
	tookOver bool
	// during, when not 0, is the number of the occurrence whose
	// attempt's outcome applyOutcome applies before it steps the record:
	// the occurrences due by then came due while that attempt was in
	// progress, not while nothing ran, and the entry of those merged into
	// the next says so. replaced says that a new definition of the job
	// was put while it ran.
	during   int
	replaced bool
	// began, when during is not 0, is when the attempt of occurrence
	// during began: the occurrences that came due while it was in
	// progress get their Postponed entries stamped when they came due
	// (see postponed), not when its outcome is applied.
	began time.Time
}

// add appends h to hist, unless the machine makes no entries.
func (m machine) add(hist []HistoryEntry, h HistoryEntry) []HistoryEntry {
	if m.noEntries {
		return hist
	}
	return append(hist, h)
}

// window returns how late a missed occurrence may be found and still run;
// 0 means without limit.
func (m machine) window() time.Duration {
	switch {
	case m.policy.CatchUpWindow > 0:
		return time.Duration(m.policy.CatchUpWindow)
	case m.policy.Missed == MissedSkip:
		return m.threshold
	}
	return 0
}

// step brings r up to date at now: it resumes a paused job whose
// resumeTime has come, handles occurrences that came due while one is in
// progress by the overlap policy, passes over the missed ones the policy
// does not run, starts the next occurrence when none is in progress, and
// settles DueAt, the status and the final state. It returns a copy of
// the occurrence whose attempt is due now, with ok reporting whether
// there is one (by value: the run loop keeps it without a heap
// allocation).
func (m machine) step(r *JobRecord, t *Timing, now time.Time) (run Occurrence, ok bool, hist []HistoryEntry) {
	sc := &r.Schedule
	sc.RunRequestedInClaim = 0 // the step sees the run requested
	if r.State.Final() {
		sc.DueAt = time.Time{}
		if p := sc.Policy; p != nil && (p.Ends != nil || p.Skipping != nil) { // the last occurrences' entries
			hist = endSkipping(sc, nil)
			hist, p.Ends = append(hist, p.Ends...), nil
			sc.tidy()
		}
		return Occurrence{}, false, hist
	}
	if rt := sc.resumeTime(); r.State == JobDisabled && !rt.IsZero() && !rt.After(now) {
		r.State = JobEnabled
		sc.enabledAgain(now)
	}
	if p := sc.Policy; p != nil && p.Passed != nil {
		hist = m.add(hist, *p.Passed)
		p.Passed = nil
	}
	if planDue(r, now) {
		hist = m.follow(r, t, now, hist)
	}
	if p := sc.Policy; p != nil && p.Ends != nil {
		hist = append(hist, p.Ends...) // empty when the machine makes no entries
		p.Ends = nil
	}
	if sc.Current != nil {
		hist = m.postpone(r, t, now, hist, false)
	}
	if sc.Current == nil {
		hist = endSkipping(sc, hist) // the occurrence that was in progress ended
	}
	full := m.full(sc)
	if sc.Current == nil && full && r.State == JobEnabled && !sc.NextOccurrence.IsZero() && !sc.NextOccurrence.After(now) {
		hist = m.passOver(r, t, now, now, hist, false, fmt.Sprintf("%d occurrences were still in progress (runPolicy.overlap AllowAll runs at most %d at once)", sc.running(), MaxRunning))
	}
	if sc.Current == nil && !full {
		switch {
		case sc.Waiting != nil:
			w := sc.Waiting
			sc.Waiting = nil
			m.start(r, w, now)
		case !sc.RunRequested.IsZero() && !sc.RunRequested.After(now):
			sc.Occurrences++
			m.start(r, requested(sc), now)
		case r.State == JobEnabled && !sc.NextOccurrence.IsZero() && !sc.NextOccurrence.After(now):
			hist = m.catchUp(r, t, now, hist)
			if sc.NextOccurrence.IsZero() || sc.NextOccurrence.After(now) {
				break
			}
			var exp time.Time
			exp, hist = m.take(r, t, now, hist)
			if m.merges(sc, now) {
				hist = m.passOver(r, t, m.mergedUntil(sc, exp, now), now, hist, true, m.mergedWhy(exp))
			}
			sc.Occurrences++
			o := m.occ
			if o == nil {
				o = new(Occurrence)
			}
			*o = Occurrence{Number: sc.Occurrences, Expected: exp}
			m.start(r, o, now)
		case r.State == JobEnabled && sc.backfills() > 0:
			p := sc.Policy
			exp := p.Backfill[0]
			p.Backfill = p.Backfill[1:]
			if len(p.Backfill) == 0 {
				p.Backfill = nil
			}
			sc.Occurrences++
			m.start(r, &Occurrence{Number: sc.Occurrences, Expected: exp, Backfill: true}, now)
		}
		// A run requested while an occurrence starts waits its turn
		// (under AllowAll, for the next step, which starts it beside).
		if sc.Current != nil && m.policy.Overlap != OverlapAllowAll {
			hist = m.postpone(r, t, now, hist, true)
		}
	}
	if c := sc.Current; c != nil && !c.At.After(now) {
		if pastDeadline(r, c, now) {
			hist = m.add(hist, m.expire(r, c, now))
		}
	}
	if c := sc.Current; c != nil && !c.At.After(now) {
		run, ok = *c, true
		if m.owner != "" && m.policy.Overlap == OverlapAllowAll {
			m.detach(r, now)
		}
	} else if c == nil && m.owner != "" {
		run, ok = m.resume(r, now)
		if p := sc.Policy; p != nil && p.Ends != nil { // of runs that faulted past their deadline
			hist = append(hist, p.Ends...)
			p.Ends = nil
		}
	}
	m.settle(r, now)
	return run, ok, hist
}

// full reports whether, under OverlapAllowAll, MaxRunning occurrences are
// in progress: a scheduled occurrence due is then passed over, and a run
// requested or backfilled waits.
func (m machine) full(sc *JobSchedule) bool {
	return m.policy.Overlap == OverlapAllowAll && sc.running() >= MaxRunning
}

// detach moves the current occurrence of r, whose attempt is due, to the
// runs of its own (PolicyState.Running), claimed by m.owner from now.
func (m machine) detach(r *JobRecord, now time.Time) {
	sc := &r.Schedule
	p := sc.policy()
	p.Running = append(p.Running, Run{Occurrence: *sc.Current, Owner: m.owner, Until: now.Add(m.hold)})
	sc.Current = nil
}

// resume claims for m.owner the first of r's runs whose next attempt is
// due at now (a retry, an error action, or an attempt whose owner's claim
// expired: it runs again with the same execution tag, unless m.runs says
// that it still runs here, and then its claim is renewed), and returns a
// copy of its occurrence; ok is false when none is due.
func (m machine) resume(r *JobRecord, now time.Time) (run Occurrence, ok bool) {
	if r.Schedule.Policy == nil {
		return Occurrence{}, false
	}
	p := r.Schedule.Policy
	for i := 0; i < len(p.Running); i++ {
		ru := &p.Running[i]
		switch {
		case !ru.due(now):
		case ru.Owner == m.owner && m.runs != nil && m.runs(ru.Tag):
			// Its attempt runs here, and its claim could not be
			// extended in time (the store failed).
			ru.Until = now.Add(m.hold)
		case ru.Owner != "" && m.held.holds(ru.Until, now):
			// Its claim expired while this instance had lost the
			// store: its owner most likely lost it as long, and may
			// record the attempt's outcome or extend the claim within
			// the grace.
		case ru.Dropped:
			// Its owner stopped before the outcome of its last attempt
			// was recorded.
			p.Running = slices.Delete(p.Running, i, i+1)
			i--
		case ru.Owner == "" && pastDeadline(r, &ru.Occurrence, now):
			// A retry past its deadline does not start: the run faults
			// (its errorAction, if any, is due at once, and is looked at
			// next).
			o := ru.Occurrence
			m.settleRun(r, &o, "", now, func(m machine) HistoryEntry { return m.expire(r, r.Schedule.Current, now) })
			i--
		default:
			ru.Owner, ru.Until = m.owner, now.Add(m.hold)
			return ru.Occurrence, true
		}
	}
	return Occurrence{}, false
}

// catchUp passes over the due occurrences of r that are later than the
// catch-up window at now (those older than the window), unless they wait
// under OverlapBufferAll. The occurrences at or after now-w are within
// the window: the missed policy runs them (under Skip, as under RunOnce,
// the first runs once for all of them).
func (m machine) catchUp(r *JobRecord, t *Timing, now time.Time, hist []HistoryEntry) []HistoryEntry {
	sc := &r.Schedule
	w := m.window()
	if w == 0 || !sc.NextOccurrence.After(sc.buffered()) || now.Sub(sc.NextOccurrence) <= w {
		return hist
	}
	why := "missed, and later than the catch-up window of " + retry.Duration(w).String() + " when found"
	if m.policy.Missed == MissedSkip {
		why += " (runPolicy.missed Skip)"
	}
	return m.passOver(r, t, now.Add(-w-time.Nanosecond), now, hist, false, why)
}

// merges reports whether the due occurrences left after one is taken at
// now are merged into it: under the RunOnce and Skip missed policies,
// except those that wait under OverlapBufferAll.
func (m machine) merges(sc *JobSchedule, now time.Time) bool {
	return m.policy.Missed != MissedRunAll && !sc.NextOccurrence.IsZero() && !sc.NextOccurrence.After(now) &&
		sc.NextOccurrence.After(sc.buffered())
}

// mergedWhy returns why the due occurrences merged into the one expected
// at exp were passed over: they were missed, or they came due while the
// attempt of occurrence m.during was in progress (under runPolicy.overlap CancelRunning,
// whose next occurrence starts once that attempt ended, or an attempt
// that held the job: one begun under the job's earlier definition).
func (m machine) mergedWhy(exp time.Time) string {
	ran := "the job ran once for them, as the occurrence expected at " + stamp(exp)
	switch {
	case m.during == 0:
		return "missed; " + ran + " (runPolicy.missed " + string(m.policy.Missed) + ")"
	case m.replaced:
		return fmt.Sprintf("they came due while occurrence %d, begun under the job's earlier definition, was in progress (a new definition was put while it ran); %s (runPolicy.overlap %s)", m.during, ran, m.policy.Overlap)
	}
	return fmt.Sprintf("they came due while occurrence %d was in progress; %s (runPolicy.overlap %s)", m.during, ran, m.policy.Overlap)
}

// mergedUntil returns the latest expected time of the due occurrences
// that merges merges into the one expected at exp, taken at now: every one
// due, except after a takeover, where only those later at now than the
// recurrence interval (from exp to the next occurrence) are missed; the
// others run after it, by the overlap policy. Under OverlapCancelRunning
// every one due is merged after a takeover too: one left due would cancel
// the occurrence taken before its attempt.
func (m machine) mergedUntil(sc *JobSchedule, exp, now time.Time) time.Time {
	if !m.tookOver || m.policy.Overlap == OverlapCancelRunning {
		return now
	}
	return now.Add(-sc.NextOccurrence.Sub(exp) - time.Nanosecond)
}

// start makes o the current occurrence, due at now.
func (m machine) start(r *JobRecord, o *Occurrence, now time.Time) {
	o.Tag = ""
	if !m.tagLater {
		o.Tag = executionTag(r, o.Number)
	}
	o.At = now
	o.Retry = 0
	o.ErrorAction = false
	o.Limited = nil
	r.Schedule.Current = o
}

// take consumes the due scheduled occurrence and returns its expected
// time, moving NextOccurrence on to the one after it. The occurrences
// between them that the job's exclusion calendar drops get their Skipped
// entry now, at the take of the occurrence before them, appended to hist.
func (m machine) take(r *JobRecord, t *Timing, now time.Time, hist []HistoryEntry) (time.Time, []HistoryEntry) {
	sc := &r.Schedule
	exp := sc.NextOccurrence
	sc.Counted++
	sc.LastSkipped = false
	m.advance(r, t, exp)
	if p := sc.Policy; p != nil && sc.NextOccurrence.After(p.Buffered) {
		p.Buffered = time.Time{} // the buffer is empty
	}
	if !m.noEntries && !sc.NextOccurrence.IsZero() {
		hist = excluded(r, t, exp, sc.NextOccurrence, now, hist)
	}
	return exp, hist
}

// excluded appends to hist the Skipped entry of the occurrences scheduled
// strictly between after and before (zero: without end) that t's
// calendar drops, passed over at now, when there are any.
func excluded(r *JobRecord, t *Timing, after, before, now time.Time, hist []HistoryEntry) []HistoryEntry {
	name := t.Calendar()
	if name == "" {
		return hist
	}
	n, first, last := t.Skipped(after, before, MaxSkippedCounted)
	if n == 0 {
		return hist
	}
	on := t.OnExcluded()
	if on == "" {
		on = recurrence.OnExcludedSkip
	}
	return append(hist, skipped(r, first, last, n, now, "excluded by calendar "+strconv.Quote(name)+" (recurrence.onExcluded "+string(on)+")"))
}

// planDue reports whether r's next scheduled occurrence is due at now:
// the occurrence a step would take, pass over or postpone.
func planDue(r *JobRecord, now time.Time) bool {
	return r.State == JobEnabled && !r.Schedule.NextOccurrence.IsZero() && !r.Schedule.NextOccurrence.After(now)
}

// follow plans r's next scheduled occurrence again under the calendar t
// follows (see [Timing.Replan]) when it was planned under another
// version of it: one the calendar now excludes is skipped or moved, one
// an older version moved goes back where the calendar now places it. The
// occurrences the calendar drops from its scheduled instant on get their
// Skipped entry, appended to hist. A moved occurrence that is no longer
// due waits for its new instant.
func (m machine) follow(r *JobRecord, t *Timing, now time.Time, hist []HistoryEntry) []HistoryEntry {
	sc := &r.Schedule
	at, scheduled := t.Replan(sc.NextOccurrence)
	if at.Equal(sc.NextOccurrence) {
		return hist
	}
	sc.NextOccurrence = at
	if m.noEntries {
		return hist
	}
	before := at
	if s, moved := t.Moved(at); moved {
		before = s
	}
	return excluded(r, t, scheduled.Add(-time.Nanosecond), before, now, hist)
}

// advance moves NextOccurrence to the first occurrence after base; to
// none when count is used up.
func (m machine) advance(r *JobRecord, t *Timing, base time.Time) {
	sc := &r.Schedule
	sc.NextOccurrence = time.Time{}
	if c := t.Count(); c == 0 || sc.Counted < c {
		sc.NextOccurrence = t.Next(base)
	}
}

// MaxSkippedCounted bounds the count of a Skipped history entry: a longer
// run of occurrences passed over is counted that far, and its entry says
// "at least".
const MaxSkippedCounted = 10_000

// passOver moves NextOccurrence past until without taking the occurrences
// it passes (they do not count towards recurrence.count), and appends a
// Skipped history entry for them, which says why, when there are any.
// merged says that a run stands for them (RunOnce, Postpone), so that the
// job's latest occurrence does not count as skipped.
func (m machine) passOver(r *JobRecord, t *Timing, until, now time.Time, hist []HistoryEntry, merged bool, why string) []HistoryEntry {
	sc := &r.Schedule
	first := sc.NextOccurrence
	if first.IsZero() || first.After(until) {
		return hist
	}
	n, last, after := span(t, first, until, MaxSkippedCounted)
	if !after.IsZero() && !after.After(until) {
		after = t.Next(until) // the count stopped: jump past the rest
	}
	sc.NextOccurrence = after
	if p := sc.Policy; p != nil && sc.NextOccurrence.After(p.Buffered) {
		p.Buffered = time.Time{}
	}
	sc.LastSkipped = !merged
	if m.noEntries {
		return hist
	}
	return append(hist, skipped(r, first, last, n, now, why))
}

// passOverWhile passes over the scheduled occurrences of r due at now
// while an occurrence is in progress, for why, as passOver does, but
// leaves their Skipped entry in PolicyState.Skipping, extending the one
// there when they continue its run for the same reason: a job whose
// occurrence waits for a retry is stepped as each of its next occurrences
// comes due, and one entry stands for all of them. hist gets the entry of
// a run that this one does not continue.
func (m machine) passOverWhile(r *JobRecord, t *Timing, now time.Time, hist []HistoryEntry, merged bool, why string) []HistoryEntry {
	var buf [1]HistoryEntry
	skip := m.passOver(r, t, now, now, buf[:0], merged, why)
	if len(skip) == 0 {
		return hist // none, or no entries are kept
	}
	h := skip[0]
	p := r.Schedule.policy()
	if q := p.Skipping; q != nil {
		if strings.HasSuffix(q.Message, ": "+why) && t.Next(q.LastExpectedTime).Equal(h.ExpectedExecutionTime) {
			n := min(q.Skipped+h.Skipped, MaxSkippedCounted)
			e := skipped(r, q.ExpectedExecutionTime, h.LastExpectedTime, n, q.StartTime, why)
			e.EndTime = now
			*q = e
			return hist
		}
		hist = append(hist, *q)
	}
	p.Skipping = &h
	return hist
}

// endSkipping appends to hist the Skipped entry of the run under way in
// sc.Policy.Skipping, if any, which ended, and returns hist.
func endSkipping(sc *JobSchedule, hist []HistoryEntry) []HistoryEntry {
	if p := sc.Policy; p != nil && p.Skipping != nil {
		hist = append(hist, *p.Skipping)
		p.Skipping = nil
		sc.tidy()
	}
	return hist
}

// span counts the occurrences of t from first (an occurrence, or zero for
// none) up to until, at most limit of them, and returns how many, the last
// of them, and the occurrence after them (zero when there is none).
func span(t *Timing, first, until time.Time, limit int) (n int, last, after time.Time) {
	for at := range t.From(first) {
		if at.After(until) || n == limit {
			return n, last, at
		}
		n, last = n+1, at
	}
	return n, last, time.Time{}
}

// skipped returns the Skipped entry of n occurrences expected from first
// to last, passed over at now.
func skipped(r *JobRecord, first, last time.Time, n int, now time.Time, why string) HistoryEntry {
	count := strconv.Itoa(n)
	if n >= MaxSkippedCounted {
		count = "at least " + count
	}
	what := "1 occurrence expected at " + stamp(first)
	if n != 1 {
		what = count + " occurrences expected from " + stamp(first) + " to " + stamp(last)
	}
	return HistoryEntry{
		Collection: r.Collection, Job: r.Name, ActionName: MainAction, Status: StatusSkipped,
		ExpectedExecutionTime: first, LastExpectedTime: last, Skipped: n, StartTime: now, EndTime: now,
		Message: "skipped " + what + ": " + why,
	}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// postpone handles a scheduled occurrence or a requested run that is due
// while r.Schedule.Current is in progress, by the overlap policy. started
// says that the current occurrence started at now, after those came due:
// they wait their turn (under runPolicy.missed RunAll, or a run requested)
// rather than for one that was still in progress when they came due.
func (m machine) postpone(r *JobRecord, t *Timing, now time.Time, hist []HistoryEntry, started bool) []HistoryEntry {
	sc := &r.Schedule
	due := r.State == JobEnabled && !sc.NextOccurrence.IsZero() && !sc.NextOccurrence.After(now)
	switch m.policy.Overlap {
	case OverlapSkip:
		if due {
			hist = m.passOverWhile(r, t, now, hist, false, fmt.Sprintf("occurrence %d was still in progress (runPolicy.overlap Skip)", sc.Current.Number))
		}
	case OverlapBufferAll:
		if due {
			hist = m.buffer(r, t, now, hist)
		}
	case OverlapCancelRunning:
		if due {
			hist = m.add(hist, m.cancel(r, now, m.tookOver && !started && !sc.Current.At.After(now)))
		}
	case OverlapAllowAll:
		// An occurrence in progress from before the job's policy was
		// AllowAll: the due ones wait until it ends, and then each
		// runs (see besideHeld).
	default:
		for due {
			if sc.Waiting != nil {
				if m.policy.Missed == MissedRunAll {
					break
				}
				hist = m.passOverWhile(r, t, now, hist, true, fmt.Sprintf("occurrence %d was still in progress and occurrence %d already waited (runPolicy.overlap Postpone)", sc.Current.Number, sc.Waiting.Number))
				break
			}
			var exp time.Time
			exp, hist = m.take(r, t, now, hist)
			sc.Occurrences++
			sc.Waiting = &Occurrence{Number: sc.Occurrences, Expected: exp}
			hist = m.add(hist, m.postponed(r, sc.Waiting, now, started))
			due = !sc.NextOccurrence.IsZero() && !sc.NextOccurrence.After(now)
		}
	}
	if !sc.RunRequested.IsZero() && !sc.RunRequested.After(now) && sc.Waiting == nil && sc.Current != nil {
		sc.Occurrences++
		sc.Waiting = requested(sc)
		hist = m.add(hist, m.postponed(r, sc.Waiting, now, started))
	}
	return hist
}

// buffer marks the due occurrences of r as waiting under
// OverlapBufferAll, passing over the oldest beyond MaxBuffered.
func (m machine) buffer(r *JobRecord, t *Timing, now time.Time, hist []HistoryEntry) []HistoryEntry {
	sc := &r.Schedule
	// The last MaxBuffered occurrences up to now wait: the ones before
	// them are passed over.
	if n, _, _ := span(t, sc.NextOccurrence, now, MaxSkippedCounted+MaxBuffered); n > MaxBuffered {
		_, older, _ := span(t, sc.NextOccurrence, now, n-MaxBuffered)
		hist = m.passOver(r, t, older, now, hist, false, fmt.Sprintf("more than %d occurrences waited behind occurrence %d (runPolicy.overlap BufferAll)", MaxBuffered, sc.Current.Number))
	}
	sc.policy().Buffered = now
	return hist
}

// cancel ends the occurrence in progress because the next one came due
// under OverlapCancelRunning, and returns its history entry. Its pending
// retry or errorAction does not run. lost says that the claim on the job
// took over an expired lease under which the occurrence's attempt was
// due: the instance that held it stopped before recording that attempt's
// outcome, whether or not the attempt started (see "History").
func (m machine) cancel(r *JobRecord, now time.Time, lost bool) HistoryEntry {
	sc := &r.Schedule
	c := sc.Current
	msg := "cancelled before its next attempt: the occurrence expected at " + stamp(sc.NextOccurrence) + " came due (runPolicy.overlap CancelRunning)"
	if lost {
		msg = "cancelled: the instance that ran or was about to run its attempt stopped before recording the outcome, and the occurrence expected at " +
			stamp(sc.NextOccurrence) + " came due meanwhile (runPolicy.overlap CancelRunning); an attempt lost is not counted"
	}
	h := HistoryEntry{
		Collection: r.Collection, Job: r.Name, ActionName: MainAction, Status: StatusFailed,
		ExpectedExecutionTime: c.Expected, StartTime: now, EndTime: now, RetryCount: c.Retry, RepeatCount: c.Number,
		ExecutionTag: c.Tag,
		Message:      msg,
	}
	if c.ErrorAction {
		h.ActionName = ErrorAction
	}
	sc.Current = nil
	sc.LastFailed, sc.LastCancelled = true, !c.ErrorAction
	return h
}

// requested returns the occurrence of the run RunJob requested, numbered
// sc.Occurrences, and clears the request.
func requested(sc *JobSchedule) *Occurrence {
	o := &Occurrence{Number: sc.Occurrences, Expected: sc.RunRequested, Manual: true, Trace: sc.RunTrace, TraceState: sc.RunTraceState}
	sc.RunRequested, sc.RunTrace, sc.RunTraceState = time.Time{}, "", ""
	return o
}

// postponed returns the Postponed entry of o, which waits at now for r's
// current occurrence to end: one in progress when o came due, or one that
// started at now, after o came due (started), when the occurrences due
// run one at a time. The entry is stamped when o was postponed: now, but
// when o came due while the attempt whose outcome the step follows was in
// progress (see machine.began), when it came due (its expected time, a
// run's request), at the earliest when that attempt began.
func (m machine) postponed(r *JobRecord, o *Occurrence, now time.Time, started bool) HistoryEntry {
	at := now
	if m.during != 0 && !started && o.Expected.Before(now) {
		at = o.Expected
		if at.Before(m.began) {
			at = m.began
		}
	}
	cur := r.Schedule.Current.Number
	why := fmt.Sprintf("postponed: occurrence %d is still in progress", cur)
	switch {
	case started && !o.Manual && m.policy.Missed == MissedRunAll:
		why = fmt.Sprintf("postponed: it runs after occurrence %d, which was due before it and started at %s (runPolicy.missed RunAll runs the occurrences due one at a time)", cur, stamp(now))
	case started:
		why = fmt.Sprintf("postponed: it runs after occurrence %d, which started at %s", cur, stamp(now))
	}
	return HistoryEntry{
		Collection: r.Collection, Job: r.Name, ActionName: MainAction, Status: StatusPostponed,
		ExpectedExecutionTime: o.Expected, StartTime: at, EndTime: at, RepeatCount: o.Number,
		Message: why, Backfill: o.Backfill, Manual: o.Manual,
	}
}

// settle computes DueAt, the status's NextExecutionTime and the final
// state, and marks r as written at now (retention of final jobs counts
// from their last write, so from the run that ended them).
func (m machine) settle(r *JobRecord, now time.Time) { m.settleIn(r, now, nil) }

// settleIn is settle keeping NextExecutionTime, when it has one, in next
// (nil: in the instant r's NextExecutionTime points to already, unless
// LastExecutionTime points there too, else in a new one).
func (m machine) settleIn(r *JobRecord, now time.Time, next *time.Time) {
	r.Updated = now
	sc := &r.Schedule
	sc.tidy()
	enabled := r.State == JobEnabled
	if enabled && sc.Current == nil && sc.Waiting == nil && sc.RunRequested.IsZero() && sc.NextOccurrence.IsZero() && sc.backfills() == 0 && sc.running() == 0 {
		r.State = JobCompleted
		if sc.LastFailed {
			r.State = JobFaulted
		}
	}
	if r.State.Final() {
		sc.DueAt = time.Time{}
		if p := sc.Policy; p != nil && p.Ends != nil {
			sc.DueAt = now // their entries wait to be recorded
		}
		r.Status.NextExecutionTime = nil
		return
	}
	var due time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && (due.IsZero() || t.Before(due)) {
			due = t
		}
	}
	full := m.full(sc)
	if sc.Current != nil {
		earliest(sc.Current.At)
	} else if sc.Waiting != nil || enabled && sc.backfills() > 0 && !full {
		earliest(now)
	}
	if p := sc.Policy; p != nil {
		if p.Passed != nil || p.Ends != nil || p.Skipping != nil && sc.Current == nil {
			earliest(now) // their entries wait to be recorded
		}
		for i := range p.Running {
			if ru := &p.Running[i]; ru.Owner != "" {
				if m.held.holds(ru.Until, now) {
					// Not taken over before the grace ends (see resume),
					// nor before the claim does.
					earliest(maxTime(ru.Until, m.held.until))
				} else {
					earliest(ru.Until)
				}
			} else {
				earliest(ru.At)
			}
		}
	}
	// Scheduled occurrences due while one is in progress were handled by
	// postpone: the job is next looked at when that one goes on.
	if enabled && (sc.Waiting == nil || m.policy.Missed != MissedRunAll) && (sc.Current == nil || sc.NextOccurrence.After(now)) {
		earliest(sc.NextOccurrence)
	}
	if r.State == JobDisabled {
		earliest(sc.resumeTime())
	}
	if (sc.Current == nil || sc.Waiting == nil) && !full {
		earliest(sc.RunRequested)
	}
	sc.DueAt = due
	old := r.Status.NextExecutionTime
	r.Status.NextExecutionTime = nil
	if enabled && !sc.NextOccurrence.IsZero() {
		switch {
		case next != nil:
		case old != nil && old != r.Status.LastExecutionTime:
			next = old // r's own (see lastExecution)
		default:
			next = new(time.Time)
		}
		*next = sc.NextOccurrence
		r.Status.NextExecutionTime = next
	}
}

// replay applies the claim-time step at claimed to a record re-read after
// an API write, and adopts o as its current occurrence when the step starts
// the same one (same number, expected time, action and retry). requested
// is the run requested that the claim's step saw (JobSchedule.RunRequested
// before it; zero: none). A run requested since the claim, even at its
// very instant, is left out of the replayed step: the claim's step did not
// take it, so it waits for the attempt's outcome (a Postponed entry and
// the next occurrence number) as it would had the claim been written.
func (m machine) replay(r *JobRecord, t *Timing, o *Occurrence, claimed, requested time.Time) {
	sc := &r.Schedule
	if later := sc.RunRequested; !later.IsZero() && !later.Equal(requested) {
		switch {
		case !later.After(claimed):
			// Out of the step's reach, but still there: a job with a run
			// requested does not end.
			sc.RunRequested = claimed.Add(time.Nanosecond)
			defer func() { sc.RunRequested = later }()
		case o.Manual && o.Expected.Equal(requested):
			// The attempt is the run the claim's step started; a run
			// requested while it ran is noted after it (see RunJob) and
			// runs once after it. The step starts the one in progress
			// again, so that its retries and error action stay.
			sc.RunRequested = requested
			defer func() { sc.RunRequested = later }()
		}
	}
	m.step(r, t, claimed)
	c := r.Schedule.Current
	if c != nil && o.Tag != "" && c.Number == o.Number && c.Expected.Equal(o.Expected) && c.ErrorAction == o.ErrorAction && c.Retry == o.Retry {
		c.Tag = o.Tag
	}
}

// complete applies the outcome of an attempt of occurrence o to r and
// returns its history entry (the zero entry when the machine makes none).
// When r's current occurrence is no longer o (the job was replaced,
// disabled or changed meanwhile), only the counters and the history entry
// are recorded. settles says that the caller settles r afterwards, which
// sets its NextExecutionTime afresh (see lastExecution).
func (m machine) complete(r *JobRecord, o *Occurrence, res outcome, settles bool) HistoryEntry {
	var h HistoryEntry // stays zero when the machine makes no entries
	if !m.noEntries {
		h = attemptEntry(r, o, res)
	}
	failed := res.err != nil
	if !o.ErrorAction {
		r.Status.ExecutionCount++
		if failed {
			r.Status.FailureCount++
		}
		lastExecution(r, res.start, settles, m.spare)
	}
	c := r.Schedule.Current
	if c == nil || !sameAttempt(c, o) {
		return h
	}
	if failed {
		// The occurrence may go on (a retry, the error action): its tag
		// is kept, and a retry's delay may derive from it.
		tagged(r, c)
		o.Tag = c.Tag
	}
	if c.Trace == "" {
		c.Trace, c.TraceState = res.trace, res.traceState
	}
	c.Limited = nil // the attempt ran: its wait is over
	policy := retryPolicyOf(r.Job, c.ErrorAction)
	sc := &r.Schedule
	var plan retryPlan // whether the failure may be retried, and when
	if failed && !res.superseded {
		plan = planRetry(c, policy, &res)
	}
	switch {
	case m.noEntries:
	case plan.noRetry != "":
		h.Message = truncate(h.Message+" ("+plan.noRetry+")", MaxHistoryMessage)
	case plan.waited:
		h.Message = truncate(h.Message+" (the retry waits for the answer's Retry-After, until "+stamp(plan.at)+")", MaxHistoryMessage)
	}
	switch {
	case !failed:
		sc.Current = nil
		sc.LastFailed, sc.LastCancelled = c.ErrorAction, false
		if !c.ErrorAction {
			sc.Faults = 0
			sc.LastSucceeded = res.end
		}
	case res.superseded:
		// Cancelled for the next occurrence: no retry, no fault.
		sc.Current = nil
		sc.LastFailed, sc.LastCancelled = true, !c.ErrorAction
	case plan.retries():
		c.Retry++
		c.At = plan.at
	default:
		m.fault(r, c, &h, res.end)
	}
	return h
}

// fault ends c, r's current occurrence, whose last attempt failed or whose
// retry may not start, at now, and marks its history entry h Faulted:
// the occurrence of the main action faults (its errorAction, if any,
// starts at now), and that of the errorAction ends.
func (m machine) fault(r *JobRecord, c *Occurrence, h *HistoryEntry, now time.Time) {
	sc := &r.Schedule
	if c.ErrorAction {
		sc.Current = nil
		sc.LastFailed, sc.LastCancelled = true, false
		return
	}
	r.Status.FaultedCount++
	h.Faulted = true
	sc.Faults++
	if n := m.policy.PauseAfterFaults; n > 0 && sc.Faults >= n && r.State == JobEnabled {
		r.State = JobDisabled
		p := sc.policy()
		p.StateReason = fmt.Sprintf("paused after %d consecutive faulted occurrences (runPolicy.pauseAfterFaults %d)", sc.Faults, n)
		p.ResumeTime = time.Time{}
	}
	if r.Job.Action.ErrorAction != nil {
		c.ErrorAction = true
		c.Retry = 0
		c.At = now
	} else {
		sc.Current = nil
		sc.LastFailed, sc.LastCancelled = true, false
	}
}

// retryDeadline returns the latest instant at which retry attempt c of
// r's job may start: its expected time plus its retry policy's
// maxRetryDuration. Zero when c is not a retry or the policy sets none.
func retryDeadline(r *JobRecord, c *Occurrence) time.Time {
	d := maxRetryDuration(retryPolicyOf(r.Job, c.ErrorAction))
	if c.Retry == 0 || d <= 0 {
		return time.Time{}
	}
	return c.Expected.Add(d)
}

// pastDeadline reports whether c, an occurrence of r's job, is a retry
// whose deadline (see retryDeadline) passed by now.
func pastDeadline(r *JobRecord, c *Occurrence, now time.Time) bool {
	d := retryDeadline(r, c)
	return !d.IsZero() && now.After(d)
}

// expire faults r's current occurrence c, a retry due at now past its
// deadline (see retryDeadline): the retry does not start. Its history
// entry, a failure of the retry that did not start, says what kept it: a
// limit of the collection it waited for, or the job not being stepped in
// time.
func (m machine) expire(r *JobRecord, c *Occurrence, now time.Time) HistoryEntry {
	d := retry.Duration(maxRetryDuration(retryPolicyOf(r.Job, c.ErrorAction)))
	why := fmt.Sprintf("retry %d did not start by retryPolicy.maxRetryDuration (%s) from the expected time", c.Retry, d)
	if c.Limited != nil {
		limit := "the collection's limits"
		if c.Limited.Key != "" {
			limit = "the collection's " + string(c.Limited.Key) + " limit"
		}
		why = fmt.Sprintf("%s kept retry %d from starting by retryPolicy.maxRetryDuration (%s) from the expected time (it waited %s)",
			limit, c.Retry, d, limitWaitOf(c).Round(time.Millisecond))
	}
	tagged(r, c)
	h := attemptEntry(r, c, outcome{start: now, end: now, err: errNotRetried, message: "not retried: " + why})
	m.fault(r, c, &h, now)
	return h
}

// errNotRetried is the failure of a retry that did not start (see
// machine.expire).
var errNotRetried = errors.New("the retry did not start by retryPolicy.maxRetryDuration")

// retryPlan is what a failed attempt leads to under its retry policy: a
// retry at at (waited: moved there by the answer's Retry-After), unless
// noRetry says why none follows; none either when at is zero (the
// retries are spent).
type retryPlan struct {
	at      time.Time
	waited  bool
	noRetry string
}

// retries reports whether a retry follows.
func (p retryPlan) retries() bool { return !p.at.IsZero() && p.noRetry == "" }

// planRetry decides what the failure res of attempt o (whose Tag is set:
// a retry's delay may derive from it) leads to under policy. res must
// have failed, and not because the next occurrence superseded it.
func planRetry(o *Occurrence, policy *retry.Policy, res *outcome) (p retryPlan) {
	switch {
	case action.IsPermanent(res.err):
		p.noRetry = "not retried: the error is permanent"
	case permanentStatus(res.err, policy) != 0:
		p.noRetry = fmt.Sprintf("not retried: status %d is one of retryPolicy.permanentStatusCodes", permanentStatus(res.err, policy))
	case o.Retry < policy.Retries():
		p.at = res.end.Add(policy.Delay(o.Retry+1, o.Tag))
		if ra := retryAfter(res.err); ra.After(p.at) {
			p.at = minTime(ra, res.end.Add(MaxRetryAfter))
			p.waited = true
		}
		if d := maxRetryDuration(policy); d > 0 && p.at.After(o.Expected.Add(d)) {
			p.noRetry = fmt.Sprintf("not retried: the next retry would start after retryPolicy.maxRetryDuration (%s) from the expected time", retry.Duration(d))
		}
	}
	return p
}

// sameAttempt reports whether c and o are the same attempt of one
// occurrence of a job: the same number, expected time, action and retry,
// and the same execution tag where both have theirs (start may leave them
// empty, see machine.tagLater; the tag is a function of the job and the
// number). The expected time tells apart two occurrences given one number
// by a claim's step and its replay over a record put meanwhile (the one
// that ran, and one backfilled that the put kept).
func sameAttempt(c, o *Occurrence) bool {
	return c.Number == o.Number && c.Expected.Equal(o.Expected) && c.ErrorAction == o.ErrorAction && c.Retry == o.Retry && (c.Tag == o.Tag || c.Tag == "" || o.Tag == "")
}

// endRun applies the outcome res of owner's attempt of occurrence o, one
// of r's runs under OverlapAllowAll (PolicyState.Running), to r, and keeps
// its history entry in PolicyState.Ends for the next step to record. It
// reports false, changing nothing, when owner no longer holds the attempt
// (its claim expired and another instance took the occurrence over, or
// ran it to its end). When the job was disabled meanwhile (Run.Dropped),
// the occurrence ends with the attempt.
//
// Occurrences end in any order: LastExecutionTime and LastSucceeded keep
// the latest, and an occurrence older than one that ended or faulted
// before it (PolicyState.Ended) changes the counters but not LastFailed
// (the job's health) nor the count of consecutive faults.
func (m machine) endRun(r *JobRecord, o *Occurrence, res outcome, owner string, now time.Time) bool {
	return m.settleRun(r, o, owner, now, func(m machine) HistoryEntry { return m.complete(r, o, res, true) })
}

// settleRun is endRun with end, which ends the run's next attempt as
// r's current occurrence (an attempt's outcome, see complete, or a retry
// that does not start, see expire) under the machine it is given, and
// returns its history entry.
func (m machine) settleRun(r *JobRecord, o *Occurrence, owner string, now time.Time, end func(m machine) HistoryEntry) bool {
	sc := &r.Schedule
	p := sc.policy()
	i := slices.IndexFunc(p.Running, func(ru Run) bool { return ru.Tag == o.Tag })
	if i < 0 || p.Running[i].Owner != owner || p.Running[i].Retry != o.Retry || p.Running[i].ErrorAction != o.ErrorAction {
		sc.tidy()
		return false
	}
	dropped := p.Running[i].Dropped
	late := o.Number < p.Ended
	var last time.Time // before the outcome, which may write it in place (see lastExecution)
	if p := r.Status.LastExecutionTime; p != nil {
		last = *p
	}
	lastFailed, cancelled, faults, succeeded, faulted := sc.LastFailed, sc.LastCancelled, sc.Faults, sc.LastSucceeded, r.Status.FaultedCount
	if late {
		m.policy.PauseAfterFaults = 0
	}
	cur := sc.Current
	sc.Current = new(p.Running[i].Occurrence)
	h := end(m)
	c := sc.Current
	sc.Current = cur
	if dropped {
		c = nil
	}
	if p := r.Status.LastExecutionTime; p != nil && last.After(*p) {
		*p = last
	}
	if succeeded.After(sc.LastSucceeded) {
		sc.LastSucceeded = succeeded
	}
	if late {
		sc.LastFailed, sc.LastCancelled, sc.Faults = lastFailed, cancelled, faults
	}
	if c == nil || r.Status.FaultedCount > faulted {
		p.Ended = max(p.Ended, o.Number)
	}
	if c == nil {
		p.Running = slices.Delete(p.Running, i, i+1)
	} else {
		p.Running[i] = Run{Occurrence: *c}
	}
	if !m.noEntries {
		p.Ends = append(p.Ends, h)
	}
	m.settle(r, now)
	return true
}

// lastExecution sets r's Status.LastExecutionTime to start, in the
// instant it points to already, else in spare (an instant of r's own that
// nothing points to; nil: none), else (settles: the caller settles r,
// which sets NextExecutionTime afresh and does not read it) in the one
// NextExecutionTime points to, else in a new one. A record the engine
// works on is its own, with what it points to (see [Store]): reusing its
// instants spares an allocation per occurrence. Not in the attempt's
// request (see attemptState) either: that would keep its opened action and
// context alive as long as the record.
func lastExecution(r *JobRecord, start time.Time, settles bool, spare *time.Time) {
	st := &r.Status
	switch last, next := st.LastExecutionTime, st.NextExecutionTime; {
	case last != nil && last != next:
		*last = start
	case spare != nil:
		*spare = start
		st.LastExecutionTime = spare
	case settles && next != nil:
		*next = start
		st.LastExecutionTime, st.NextExecutionTime = next, nil
	default:
		st.LastExecutionTime = new(start)
	}
}

// dropped returns next, the instant r's NextExecutionTime pointed to
// before a step, when the step left nothing of r pointing to it (see
// machine.spare); nil otherwise.
func dropped(r *JobRecord, next *time.Time) *time.Time {
	if next == nil || r.Status.NextExecutionTime == next || r.Status.LastExecutionTime == next {
		return nil
	}
	return next
}

// attemptEntry returns the history entry of the attempt of occurrence o
// of r's job that ended with res.
func attemptEntry(r *JobRecord, o *Occurrence, res outcome) HistoryEntry {
	h := HistoryEntry{
		Collection: r.Collection, Job: r.Name, ActionName: MainAction, Status: StatusCompleted,
		ExpectedExecutionTime: o.Expected, StartTime: res.start, EndTime: res.end,
		RetryCount: o.Retry, RepeatCount: o.Number, Message: truncate(res.message, MaxHistoryMessage),
		ExecutionTag: o.Tag, Backfill: o.Backfill, Manual: o.Manual,
	}
	if w := limitWaitOf(o); w > 0 {
		h.LimitWaitMillis = int32(min(w.Milliseconds(), math.MaxInt32))
	}
	if o.ErrorAction {
		h.ActionName = ErrorAction
	}
	if res.err != nil {
		h.Status = StatusFailed
		var se *httpaction.StatusError
		if errors.As(res.err, &se) {
			h.HTTPStatus = se.StatusCode
		}
	}
	return h
}

// truncate cuts s to at most n bytes at a UTF-8 boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// machine returns the state machine of r's job at now: its run policy
// over its collection's, over the Scheduler's defaults.
func (s *Scheduler) machine(r *JobRecord, now time.Time) machine {
	return s.machineOver(r, s.policies.get(s, r.Collection, now))
}

// machineOver is machine with the collection's default run policy given.
func (s *Scheduler) machineOver(r *JobRecord, collection *RunPolicy) machine {
	p := r.Job.RunPolicy.Over(collection)
	if p.Missed == "" {
		p.Missed = missedOf(s.cfg.Misfire)
	}
	if p.Overlap == "" {
		p.Overlap = OverlapPostpone
	}
	return machine{policy: p, threshold: s.cfg.MisfireThreshold, noEntries: s.noEntries, tagLater: s.noEntries && p.Overlap != OverlapAllowAll}
}

// missedOf returns the missed policy that stands for a misfire policy.
func missedOf(p MisfirePolicy) MissedPolicy {
	switch p {
	case MisfireSkip:
		return MissedSkip
	case MisfireRunAll:
		return MissedRunAll
	}
	return MissedRunOnce
}

// misfireOf returns the misfire policy that stands for a missed policy.
func misfireOf(p MissedPolicy) MisfirePolicy {
	switch p {
	case MissedSkip:
		return MisfireSkip
	case MissedRunAll:
		return MisfireRunAll
	}
	return MisfireRunOnce
}

// ownOccurrence gives r a copy of its current occurrence when that is
// buf, a worker's buffer (see machine.occ), so that r no longer refers to
// it.
func ownOccurrence(r *JobRecord, buf *Occurrence) {
	if buf != nil && r.Schedule.Current == buf {
		o := *buf
		r.Schedule.Current = &o
	}
}

// applyOutcome applies the outcome res of attempt o to work and returns
// the history to record with it, appended to buf: hist, the attempt's
// entry, and the entries of what comes due meanwhile (only when timed,
// that is when t is usable).
func (m machine) applyOutcome(work *JobRecord, t *Timing, timed bool, o *Occurrence, res outcome, hist, buf []HistoryEntry) []HistoryEntry {
	// Occurrences that came due during the attempt are postponed before
	// the attempt's outcome can end the occurrence.
	var pre []HistoryEntry
	// Under CancelRunning the outcome goes first: a retry it leaves
	// pending is what the next occurrence cancels.
	m.during, m.began = o.Number, res.start
	if sc := &work.Schedule; timed {
		switch {
		case sc.Current != nil:
			if m.policy.Overlap != OverlapCancelRunning {
				pre = m.postpone(work, t, res.end, nil, false)
			}
		default:
			// The job was put again (or disabled) while o's attempt ran,
			// over a record that its claim had not numbered o in: the
			// occurrences that follow are numbered after o, and those of
			// the new definition due by now came due while o was in
			// progress, not while nothing ran. Under CancelRunning the
			// first of them starts now, as when o's attempt ends under
			// one definition; under AllowAll o held the job (it began
			// under the earlier definition, one at a time), and each of
			// them starts now, beside the others (see besideHeld).
			sc.Occurrences = max(sc.Occurrences, o.Number)
			m.replaced = work.State == JobEnabled
			if m.replaced && m.policy.Overlap != OverlapCancelRunning && m.policy.Overlap != OverlapAllowAll {
				sc.Current = new(*o) // o is the caller's: a copy keeps it off the heap
				pre = m.postpone(work, t, res.end, nil, false)
				sc.Current = nil
			}
		}
	}
	h := m.complete(work, o, res, timed) // timed: step settles work
	if res.superseded && m.replaced && !m.noEntries {
		// Cancelled when the next occurrence of the definition it began
		// under came due: the job's definition is the one put since.
		h.Message = truncate("cancelled: a new definition of the job was put while it ran (runPolicy.overlap CancelRunning)"+strings.TrimPrefix(res.message, res.err.Error()), MaxHistoryMessage)
	}
	all := m.add(append(buf, hist...), h)
	all = append(all, pre...)
	if timed {
		if m.policy.Overlap == OverlapAllowAll {
			all = m.besideHeld(work, t, res.end, all)
		}
		_, _, more := m.step(work, t, res.end)
		all = append(all, more...)
	}
	tagged(work, work.Schedule.Current) // it is written with the outcome
	return all
}

// besideHeld runs side by side, under OverlapAllowAll, what waited at
// now for the attempt that held r's job to end (an occurrence begun one at
// a time, before the job's policy was AllowAll): the held occurrence, when
// it goes on (its retry, its errorAction), and each scheduled occurrence
// that came due while its attempt ran, numbered in order, become runs of
// their own (PolicyState.Running) that wait for their next attempt, due at
// once for those that came due, so that the claims that follow start each
// (see machine.resume), as they would have started at their time had the
// attempt not held the job; rather than one for all of them, as the missed
// policy would for occurrences missed. At most MaxRunning occurrences are
// in progress: the step that follows passes over the due ones beyond, on
// record. The Skipped entries of the occurrences the job's exclusion
// calendar drops meanwhile are appended to hist.
func (m machine) besideHeld(r *JobRecord, t *Timing, now time.Time, hist []HistoryEntry) []HistoryEntry {
	sc := &r.Schedule
	if c := sc.Current; c != nil && !m.full(sc) {
		tagged(r, c)
		p := sc.policy()
		p.Running = append(p.Running, Run{Occurrence: *c})
		sc.Current = nil
	}
	if sc.Current != nil || sc.Waiting != nil || !planDue(r, now) {
		return hist
	}
	hist = m.follow(r, t, now, hist)
	for planDue(r, now) && !m.full(sc) {
		var exp time.Time
		exp, hist = m.take(r, t, now, hist)
		sc.Occurrences++
		m.start(r, &Occurrence{Number: sc.Occurrences, Expected: exp}, now)
		p := sc.policy()
		p.Running = append(p.Running, Run{Occurrence: *sc.Current})
		sc.Current = nil
	}
	return hist
}

// timing returns the timing of r's job at now: under the exclusion
// calendar its recurrence names, as the collection holds it at now (see
// policyCache; a calendar the collection no longer has is not applied,
// and that is logged).
//
// When r's next scheduled occurrence is due at now and the calendar held
// does not place it where it was planned (see [Timing.Replan]), the
// collection is read again first: the plan may be newer than what this
// instance holds (another instance wrote the calendar and planned the job
// again), and a step must not plan it back under the older version.
func (s *Scheduler) timing(r *JobRecord, now time.Time) (*Timing, error) {
	return s.timingIn(r, now, nil)
}

// timingIn is timing writing the timing of a job without recurrence in
// buf, which the caller keeps only for a while (a worker's, reused from
// occurrence to occurrence), rather than in a new Timing; nil buf: a new
// one.
func (s *Scheduler) timingIn(r *JobRecord, now time.Time, buf *Timing) (*Timing, error) {
	name := r.Job.Recurrence.Ext().Calendar
	if name == "" {
		return s.timings.get(r, nil, buf)
	}
	t, err := s.timings.get(r, s.policies.calendar(s, r, name, now), buf)
	if err != nil || !planDue(r, now) {
		return t, err
	}
	if at, _ := t.Replan(r.Schedule.NextOccurrence); at.Equal(r.Schedule.NextOccurrence) || !s.policies.refresh(s, r.Collection, now) {
		return t, nil
	}
	return s.timings.get(r, s.policies.calendar(s, r, name, now), buf)
}

// timingCache keeps compiled timings by job, valid while the job's ETag,
// anchor and compiled calendar are unchanged (every API write changes the
// ETag; every write of a calendar, the compiled calendar).
type timingCache struct {
	mu sync.Mutex
	m  map[timingKey]cachedTiming
}

type timingKey struct{ collection, name string }

type cachedTiming struct {
	etag   string
	anchor time.Time
	cal    *recurrence.Exclusions
	t      *Timing
}

// maxCachedTimings bounds the cache; it is emptied when full.
const maxCachedTimings = 1 << 16

// get returns the timing of r's job under cal (see [Job.TimingUnder]).
// The timing of a job without recurrence is cheaper to make than to look
// up: it is made in buf, or in a new Timing when buf is nil.
func (c *timingCache) get(r *JobRecord, cal *recurrence.Exclusions, buf *Timing) (*Timing, error) {
	if r.Job.Recurrence == nil {
		if buf == nil {
			return r.Job.Timing(r.Collection, r.Name, r.Schedule.Anchor)
		}
		if err := r.Job.TimingIn(buf, r.Collection, r.Name, r.Schedule.Anchor, nil); err != nil {
			return nil, err
		}
		return buf, nil
	}
	key := timingKey{r.Collection, r.Name}
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok && e.etag == r.ETag && e.anchor.Equal(r.Schedule.Anchor) && e.cal == cal {
		return e.t, nil
	}
	t, err := r.Job.TimingUnder(r.Collection, r.Name, r.Schedule.Anchor, cal)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedTimings {
		c.m = make(map[timingKey]cachedTiming)
	}
	// Copies of the names and the ETag: a claimed record's strings may
	// share their bytes with others' (the memory store's, a SQL store's
	// claim buffers), which the cache would keep alive.
	key = timingKey{strings.Clone(r.Collection), strings.Clone(r.Name)}
	c.m[key] = cachedTiming{strings.Clone(r.ETag), r.Schedule.Anchor, cal, t}
	c.mu.Unlock()
	return t, nil
}

// retryPolicyOf returns the retry policy of the attempts of j's main
// action, or with errorAction of its errorAction (the main action's when
// the errorAction has none of its own); nil means the default.
func retryPolicyOf(j *Job, errorAction bool) *retry.Policy {
	if ea := j.Action.ErrorAction; errorAction && ea != nil && ea.RetryPolicy != nil {
		return ea.RetryPolicy
	}
	return j.Action.RetryPolicy
}

// permanentStatus returns the status code of an HTTP answer that err
// reports when it is one of policy's permanentStatusCodes; 0 otherwise.
func permanentStatus(err error, policy *retry.Policy) int {
	var se *httpaction.StatusError
	if policy == nil || len(policy.PermanentStatusCodes) == 0 || !errors.As(err, &se) {
		return 0
	}
	if slices.Contains(policy.PermanentStatusCodes, se.StatusCode) {
		return se.StatusCode
	}
	return 0
}

// maxRetryDuration returns policy's maxRetryDuration; 0 for none.
func maxRetryDuration(policy *retry.Policy) time.Duration {
	if policy == nil {
		return 0
	}
	return time.Duration(policy.MaxRetryDuration)
}

// MaxRetryAfter bounds how long a retry waits for an HTTP answer's
// Retry-After: at most this long after the attempt ended.
const MaxRetryAfter = time.Hour

// retryAfter returns the instant an HTTP answer's Retry-After that err
// reports asks retries to wait for; zero without one.
func retryAfter(err error) time.Time {
	var se *httpaction.StatusError
	if !errors.As(err, &se) {
		return time.Time{}
	}
	return se.RetryAfter
}
