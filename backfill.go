package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// MaxBackfill is the most occurrences that one BackfillJob may ask for,
// and the most that may wait to be backfilled for one job.
const MaxBackfill = 1000

// BackfillOnly says which occurrences of a range BackfillJob runs.
type BackfillOnly string

// The values of BackfillOptions.Only.
const (
	// BackfillMissing runs the occurrences of the range that have no
	// attempt on record (those that were skipped, or that the job's
	// history no longer holds, included) and that neither wait to be
	// backfilled nor are in progress. A Scheduler that keeps no history
	// (Config.HistoryPerJob NoHistory) refuses it: it cannot know which
	// occurrences ran.
	BackfillMissing BackfillOnly = "Missing"
	// BackfillAll runs every occurrence of the range that neither waits
	// to be backfilled nor is in progress: those that ran run again, but
	// asking twice while the first request's occurrences have not all
	// ended (a form posted twice) runs each of them once.
	BackfillAll BackfillOnly = "All"
)

// BackfillOptions are the options of [Scheduler.BackfillJob].
type BackfillOptions struct {
	// Only is Missing (the default) or All, in any case.
	Only BackfillOnly
	// DryRun answers which occurrences would run, and runs none.
	DryRun bool
}

// BackfillJob runs the job's scheduled occurrences whose expected times
// fall in [from, to] (the occurrences of its schedule from startTime on,
// whether or not the job existed then, where the schedule runs them: one
// that the job's exclusion calendar skips is left out, and one it moves
// runs at the instant it was moved to, which is its expected time and
// which the range must hold; endTime applies, count does not),
// each once, in order, as ordinary occurrences: each with its
// own execution tag (stable across its retries, other than the tag a
// live occurrence of the same instant gets), its retries and its
// errorAction; the receiver gets the original expected time, and their
// history entries are marked Backfill. They run one at a time while the
// job is Enabled and nothing else of it is due (scheduled occurrences and
// RunJob's runs go first), after the backfills asked for before; they do
// not count toward recurrence.count. They keep waiting while the job is
// paused or disabled, and when a new definition of it is put (PutJob,
// PutJobs, PatchJob): they then run under that definition, whether or
// not its schedule has their expected times.
//
// An occurrence that waits to be backfilled (asked for earlier), or that is
// in progress (its attempt runs, or it waits for a retry, its errorAction
// or its turn; the job's scheduled occurrence due now included, unless
// the job's catch-up window passes it over), is left
// out, with Missing and All alike: two requests for one range run each
// occurrence once, also from two Schedulers over one store (what is left
// out and what is added are decided within the one atomic update of the
// job that adds them).
//
// It returns the expected times it will run (with DryRun, would run): none
// when all of them wait or run already.
// from must not be after to, to not after now; the range may hold at most
// MaxBackfill occurrences, and the job at most MaxBackfill waiting ones. A
// job in a final state cannot be backfilled (ErrFinalState), nor one of a
// collection that is not Enabled (ErrCollectionNotEnabled). opts may be
// nil.
func (s *Scheduler) BackfillJob(ctx context.Context, collection, name string, from, to time.Time, opts *BackfillOptions) ([]time.Time, error) {
	if opts == nil {
		opts = &BackfillOptions{}
	}
	only := BackfillMissing
	var errs []error
	switch {
	case opts.Only == "" || strings.EqualFold(string(opts.Only), string(BackfillMissing)):
	case strings.EqualFold(string(opts.Only), string(BackfillAll)):
		only = BackfillAll
	default:
		errs = append(errs, &ValidationError{Path: "only", Value: strconv.Quote(string(opts.Only)), Reason: "is not Missing or All"})
	}
	if only == BackfillMissing && s.cfg.HistoryPerJob == NoHistory {
		// Which occurrences ran is known from history alone.
		errs = append(errs, &ValidationError{Path: "only", Value: strconv.Quote(string(BackfillMissing)),
			Reason: "needs the job's history to know which occurrences ran, and this Scheduler keeps none (Config.HistoryPerJob NoHistory): ask for All"})
	}
	now := time.Now()
	switch {
	case from.IsZero():
		errs = append(errs, &ValidationError{Path: "from", Reason: "is required"})
	case to.IsZero():
		errs = append(errs, &ValidationError{Path: "to", Reason: "is required"})
	case from.After(to):
		errs = append(errs, &ValidationError{Path: "to", Value: quoteTime(to), Reason: "is before from (" + from.UTC().Format(time.RFC3339Nano) + ")"})
	case to.After(now):
		errs = append(errs, &ValidationError{Path: "to", Value: quoteTime(to), Reason: "is in the future: a backfill runs occurrences that are due"})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var times []time.Time
	plan := func(r *JobRecord) error {
		if r.State.Final() {
			return fmt.Errorf("backfill job %q: it is %s: %w", name, r.State, ErrFinalState)
		}
		t, err := s.backfillTiming(r, now)
		if err != nil {
			return err
		}
		times = times[:0]
		// The schedule's occurrences from startTime on, whether or not
		// the job existed then (a one-time job has its one), where they
		// run: those the exclusion calendar skips left out, and those it
		// moves at the instant they were moved to.
		next := func(after time.Time) time.Time {
			if first := t.First(); t.Rule() == nil {
				if first.After(after) {
					return first
				}
				return time.Time{}
			}
			return t.Next(after)
		}
		for at := next(from.Add(-time.Nanosecond)); !at.IsZero() && !at.After(to); {
			if len(times) == MaxBackfill {
				return &ValidationError{Path: "to", Value: quoteTime(to), Reason: fmt.Sprintf("makes a range of more than %d occurrences (the most one backfill may ask for)", MaxBackfill)}
			}
			times = append(times, at)
			n := next(at)
			if !n.After(at) {
				break
			}
			at = n
		}
		if len(times) > 0 {
			taken := pending(s.machine(r, now), r, now)
			if only == BackfillMissing {
				ran, err := s.attempted(ctx, r, times[0], times[len(times)-1])
				if err != nil {
					return err
				}
				for at := range ran {
					taken[at] = true
				}
			}
			times = slices.DeleteFunc(times, func(at time.Time) bool { return taken[at.UnixNano()] })
		}
		if n := r.Schedule.backfills() + len(times); n > MaxBackfill {
			return &ValidationError{Path: "to", Value: quoteTime(to), Reason: fmt.Sprintf("would make %d occurrences wait to be backfilled, more than %d", n, MaxBackfill)}
		}
		return nil
	}
	if opts.DryRun {
		r, err := s.GetJob(ctx, collection, name)
		if err != nil {
			return nil, err
		}
		if err := plan(r); err != nil {
			return nil, err
		}
		return slices.Clone(times), nil
	}
	_, err := s.update(ctx, s.store, collection, name, "", func(r *JobRecord, now time.Time) error {
		if err := plan(r); err != nil {
			return err
		}
		col, err := s.store.GetCollection(ctx, collection)
		if err != nil {
			return err
		}
		if st := col.Definition.State(); st != CollectionEnabled {
			return fmt.Errorf("backfill job %q: job collection %q is %s: %w", name, collection, st, ErrCollectionNotEnabled)
		}
		p := r.Schedule.policy()
		p.Backfill = append(p.Backfill, times...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.wrote(collection, name)
	return slices.Clone(times), nil
}

// backfillTiming returns the timing by which BackfillJob walks the
// occurrences of r's job at now: its timing (see Scheduler.timing), or,
// for a recurring job created after its startTime, the same schedule
// under the same exclusion calendar as if it had been created at its
// startTime, so that its occurrences from startTime on are there, each
// where the calendar places it.
func (s *Scheduler) backfillTiming(r *JobRecord, now time.Time) (*Timing, error) {
	t, err := s.timing(r, now)
	if err != nil || t.Rule() == nil || r.Job.StartTime == nil || !r.Job.StartTime.Before(t.First()) {
		return t, err
	}
	var cal *recurrence.Exclusions
	if name := r.Job.Recurrence.Ext().Calendar; name != "" {
		cal = s.policies.calendar(s, r, name, now)
	}
	return r.Job.TimingUnder(r.Collection, r.Name, *r.Job.StartTime, cal)
}

// pending returns the expected times, as Unix nanoseconds, of the
// occurrences of r's job that wait to be backfilled or that are in progress
// at now: those of PolicyState.Backfill (which still holds the one whose
// first attempt runs, as the store holds a claimed job until its outcome
// is recorded), the current, waiting and side-by-side ones, and, while the
// job is Enabled, its next scheduled occurrence once it is due and m's
// step would run it (it is about to start, or its first attempt runs; one
// later than the catch-up window is passed over instead, and a backfill
// may run it). Runs requested with RunJob are not occurrences of the
// schedule and are left out.
func pending(m machine, r *JobRecord, now time.Time) map[int64]bool {
	sc := &r.Schedule
	taken := make(map[int64]bool)
	add := func(o *Occurrence) {
		if o != nil && !o.Manual {
			taken[o.Expected.UnixNano()] = true
		}
	}
	add(sc.Current)
	add(sc.Waiting)
	if p := sc.Policy; p != nil {
		for _, at := range p.Backfill {
			taken[at.UnixNano()] = true
		}
		for i := range p.Running {
			add(&p.Running[i].Occurrence)
		}
	}
	if r.State == JobEnabled && !sc.NextOccurrence.IsZero() && !sc.NextOccurrence.After(now) {
		// catchUp passes over a due occurrence later than the window
		// unless it waits under OverlapBufferAll.
		if w := m.window(); w == 0 || !sc.NextOccurrence.After(sc.buffered()) || now.Sub(sc.NextOccurrence) <= w {
			taken[sc.NextOccurrence.UnixNano()] = true
		}
	}
	return taken
}

// attempted returns the expected times, as Unix nanoseconds, of the
// occurrences of r's job from first to last that have an attempt of the
// main action on record.
func (s *Scheduler) attempted(ctx context.Context, r *JobRecord, first, last time.Time) (map[int64]bool, error) {
	hist, err := s.store.ListHistory(ctx, r.Collection, r.Name, HistoryFilter{}) // at most Config.HistoryPerJob
	if err != nil {
		return nil, err
	}
	ran := make(map[int64]bool)
	for _, h := range hist {
		if h.ActionName == MainAction && (h.Status == StatusCompleted || h.Status == StatusFailed) &&
			!h.ExpectedExecutionTime.Before(first) && !h.ExpectedExecutionTime.After(last) {
			ran[h.ExpectedExecutionTime.UnixNano()] = true
		}
	}
	return ran, nil
}

func quoteTime(t time.Time) string { return strconv.Quote(t.UTC().Format(time.RFC3339Nano)) }
