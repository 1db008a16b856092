package scheduler

import (
	"context"
	"time"
)

// The rules of a job's health (JobStatus.Health).
const (
	// HealthLateAfter is how long an Enabled job may be due without an
	// attempt starting before it is Late.
	HealthLateAfter = time.Minute
	// HealthStalePeriods is how many scheduled occurrences may come due
	// after the job's last success (or its creation, or when it was last
	// enabled again) before it is Stale; those of a Disabled job do not
	// come due.
	HealthStalePeriods = 3
)

// jobHealth returns the health of the job of r at now, the first of these
// that holds:
//   - Failing: its latest finished occurrence faulted (or it is Faulted),
//     not one that was cancelled or dropped before its next attempt
//     (JobSchedule.LastCancelled), which failed without faulting;
//   - Late: it is Enabled, due for more than HealthLateAfter, and no
//     attempt of it is in flight;
//   - Stale: it is Enabled, and HealthStalePeriods scheduled occurrences
//     came due since the latest of: its last successful occurrence
//     ended, it was created or last replaced, it was last enabled again
//     after being Disabled (EnableJob, a PatchJob of its state, or its
//     resumeTime: PolicyState.Resumed); whether they ran, failed or were
//     skipped (a Disabled job's occurrences do not come due: a paused
//     job is not Stale, nor Late, and one enabled again is not Stale
//     until HealthStalePeriods more come due);
//
// Late and Stale hold only when running, that is when the job's
// collection is Enabled: the jobs of one that is not do not come due.
//   - Skipped: its latest scheduled occurrence was passed over by a run
//     policy;
//   - OK otherwise (a Completed job is OK).
func (s *Scheduler) jobHealth(r *JobRecord, now time.Time, running bool) JobHealth {
	sc := &r.Schedule
	switch {
	case r.State == JobFaulted || sc.LastFailed && !sc.LastCancelled:
		return HealthFailing
	case r.State == JobCompleted:
		return HealthOK
	}
	inFlight := r.LeaseOwner != "" && r.LeaseUntil.After(now)
	if r.State == JobEnabled && running && !inFlight && !sc.DueAt.IsZero() && now.Sub(sc.DueAt) > HealthLateAfter {
		return HealthLate
	}
	if r.State == JobEnabled && running && s.stale(r, now) { // a paused job's occurrences do not come due
		return HealthStale
	}
	if sc.LastSkipped {
		return HealthSkipped
	}
	return HealthOK
}

// stale reports whether HealthStalePeriods scheduled occurrences of r's
// job came due by now since its last success, its anchor, or when it was
// last enabled again, whichever is latest (JobSchedule.healthSince).
func (s *Scheduler) stale(r *JobRecord, now time.Time) bool {
	t, err := s.timing(r, now)
	if err != nil {
		return false
	}
	since := r.Schedule.healthSince()
	n, _, _ := span(t, t.Next(since), now, HealthStalePeriods)
	return n >= HealthStalePeriods
}

// withHealth sets the health of r, a record the caller owns, at now,
// with the state of its collection as the run policies' cache holds it
// (see policyCache.running).
//
// A job of a collection that is not Enabled has no nextExecutionTime:
// its occurrences do not come due (the dashboard shows none either).
// The nextExecutionTime of a job that names a calendar is where the
// calendar as this instance holds it places the planned occurrence (see
// [Timing.Replan]): the engine plans it so before it runs it, should an
// instance have planned it under an older version of the calendar.
func (s *Scheduler) withHealth(r *JobRecord, now time.Time) *JobRecord {
	running := s.policies.running(s, r.Collection, now)
	r.Status.Health = s.jobHealth(r, now, running)
	if !running {
		r.Status.NextExecutionTime = nil
	}
	if n := r.Status.NextExecutionTime; n != nil && r.Job.Recurrence.Ext().Calendar != "" {
		if t, err := s.timing(r, now); err == nil {
			if at, _ := t.Replan(*n); at.IsZero() {
				r.Status.NextExecutionTime = nil
			} else if !at.Equal(*n) {
				r.Status.NextExecutionTime = &at
			}
		}
	}
	return r
}

// HealthCounts returns how many jobs of each health the Scheduler's
// store holds, over every collection; jobs are read a page at a time.
func (s *Scheduler) HealthCounts(ctx context.Context) (map[JobHealth]int, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	colls, err := s.store.ListCollections(ctx)
	if err != nil {
		return nil, err
	}
	counts := make(map[JobHealth]int, len(Healths))
	now := time.Now()
	for _, c := range colls {
		running := c.Definition.State() == CollectionEnabled
		for skip := 0; ; skip += MaxPageSize {
			page, err := s.store.ListJobs(ctx, c.Name, JobFilter{Skip: skip, Top: MaxPageSize})
			if err != nil {
				return nil, err
			}
			for _, r := range page {
				counts[s.jobHealth(r, now, running)]++
			}
			if len(page) < MaxPageSize {
				break
			}
		}
	}
	return counts, nil
}
