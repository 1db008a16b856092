package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
)

// DefaultCollection is the job collection of [Scheduler.Schedule]. It is
// created when first needed, with the Standard plan's 50 jobs and a
// maxRecurrence of one second ({"frequency": "Second", "interval": 1}), so
// that Schedule takes recurrence.Every(10, recurrence.Second) as it is;
// create it yourself with PutCollection to give it another plan or quota.
// (A default collection created by an earlier version keeps the Standard
// plan's once a minute: PutCollection changes it.)
const DefaultCollection = "default"

// DefaultCollectionDefinition returns the definition with which
// [DefaultCollection] is created when first needed: the Standard plan, and
// a quota whose maxRecurrence is one second. Each call returns a new one.
// The jobclock command gives the collection "default" of a file of one
// job this definition too, so that the name means one quota everywhere.
func DefaultCollectionDefinition() *JobCollection {
	return &JobCollection{Properties: CollectionProperties{Quota: &Quota{
		MaxRecurrence: &MaxRecurrence{Frequency: recurrence.Second, Interval: 1}}}}
}

// Schedule makes sure that the job name of [DefaultCollection] runs act on
// the recurrence when, and returns its record. It is the short way to
// schedule a Go function (an [action.Handler]'s Action) or any other
// action, without writing a definition:
//
//	s.Schedule(ctx, "nightly-report", recurrence.Daily(2, 0), report.Action(Report{To: "ops"}))
//
// Schedule is meant to be called each time the program starts. It creates
// the collection and the job when they do not exist, replaces the job
// (as PutJob does, but a Disabled job stays Disabled and keeps its tags) when its definition
// differs from act and when, and leaves it alone when they are the same:
// a job that is already scheduled keeps its place in its recurrence, its
// counters and the occurrences it missed while the program was down, and
// a job that an operator disabled stays disabled (with the reason and the
// resume time of its pause, as one that pauseAfterFaults paused). A nil when runs act once, when the job is first created
// (and never again while it exists, even once Completed). For a start
// time, an end, a retry policy (set it on act) or another collection, use
// PutJob.
func (s *Scheduler) Schedule(ctx context.Context, name string, when *recurrence.Recurrence, act action.Action) (*JobRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	if err := checkJobKey(DefaultCollection, name); err != nil {
		return nil, err
	}
	now := time.Now()
	def := &Job{Action: act, Recurrence: when}
	judged := anySealed(jobSecrets(def))
	var plain, job *Job
	var t *Timing
	var col *CollectionRecord
	for range maxWriteAttempts {
		old, err := s.store.GetJob(ctx, DefaultCollection, name)
		switch {
		case errors.Is(err, ErrNotFound):
			old = nil
		case err != nil:
			return nil, err
		}
		if plain == nil || judged {
			// Sealed secrets in act are kept from the job's definition:
			// they are judged against the version the write replaces.
			if plain, job, t, err = s.checkScheduled(def, name, now, jobOf(old)); err != nil {
				return nil, err
			}
		}
		if col == nil {
			if col, err = s.defaultCollection(ctx); err != nil {
				return nil, err
			}
		}
		if old != nil && s.sameDefinition(old.Job, plain, DefaultCollection, name) {
			return old, nil
		}
		state, put := JobEnabled, job
		var tags map[string]string
		if old != nil {
			tags = old.Tags // labels an operator gave the job stay
			if old.State == JobDisabled {
				state, put = JobDisabled, paused(job, old)
			}
		}
		r, err := s.storeJob(ctx, s.store, col, name, put, tags, state, t, now, old)
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := s.recheckPut(ctx, s.store, old, r, col.Definition.RecurrenceLimit(time.Now())); err != nil {
			return nil, err
		}
		s.wrote(DefaultCollection, name)
		return r, nil
	}
	return nil, fmt.Errorf("schedule job %q: too many concurrent writes: %w", name, ErrConflict)
}

// checkScheduled checks def, the definition of job name of
// DefaultCollection that Schedule puts at now, against stored, the
// definition the store holds (nil: none), and returns it with its secrets
// plain, sealed, and its timing.
func (s *Scheduler) checkScheduled(def *Job, name string, now time.Time, stored *Job) (plain, sealed *Job, t *Timing, err error) {
	if plain, err = s.checkDefinition(def, DefaultCollection, name, now, anchorAt(now), false, stored); err != nil {
		return nil, nil, nil, err
	}
	if sealed, err = s.sealDefinition(plain, DefaultCollection, name); err != nil {
		return nil, nil, nil, err
	}
	if t, err = sealed.Timing(DefaultCollection, name, anchorAt(now)); err != nil {
		return nil, nil, nil, err
	}
	return plain, sealed, t, nil
}

// paused returns job with the reason and the resume time of the pause of
// old, a Disabled job (one an operator set, or one of pauseAfterFaults),
// so that a put of it keeps them; job itself when old has none.
func paused(job *Job, old *JobRecord) *Job {
	p := old.Schedule.Policy
	if p == nil || (p.StateReason == "" && p.ResumeTime.IsZero()) {
		return job
	}
	j := *job
	j.StateReason = p.StateReason
	if !p.ResumeTime.IsZero() {
		rt := p.ResumeTime
		j.ResumeTime = &rt
	}
	return &j
}

// defaultCollection returns DefaultCollection, creating it when missing.
func (s *Scheduler) defaultCollection(ctx context.Context) (*CollectionRecord, error) {
	col, err := s.store.GetCollection(ctx, DefaultCollection)
	if !errors.Is(err, ErrNotFound) {
		return col, err
	}
	now := time.Now()
	col = &CollectionRecord{Name: DefaultCollection, ETag: newETag(), Created: now, Updated: now,
		Definition: *DefaultCollectionDefinition()}
	err = s.store.PutCollection(ctx, col)
	if errors.Is(err, ErrConflict) { // created meanwhile by another instance
		return s.store.GetCollection(ctx, DefaultCollection)
	}
	if err != nil {
		return nil, err
	}
	col.Version++
	return col, nil
}
