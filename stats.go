package scheduler

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
)

// MaxHistoryBuckets is the most buckets of time [Scheduler.HistoryCounts]
// counts in one call.
const MaxHistoryBuckets = 10_000

// statsPage is the number of jobs read per ListJobs call when the store is
// no [StatsReader].
const statsPage = 1000

// JobCounts returns how many jobs each collection holds in each state, as
// [StatsReader.CountJobs] does: only non-zero counts, ordered by
// collection, then state. With a store that is a StatsReader it is one
// store call; otherwise it reads every job, a page at a time, and the
// answer is not a snapshot (jobs written meanwhile may or may not be
// counted).
func (s *Scheduler) JobCounts(ctx context.Context) ([]JobCount, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	if r, ok := s.store.(StatsReader); ok {
		return r.CountJobs(ctx)
	}
	colls, err := s.store.ListCollections(ctx)
	if err != nil {
		return nil, err
	}
	var out []JobCount
	for _, c := range colls {
		n := map[JobState]int{}
		if err := s.eachJob(ctx, c.Name, func(j *JobRecord) { n[j.State]++ }); err != nil {
			return nil, err
		}
		for _, st := range slices.Sorted(maps.Keys(n)) {
			out = append(out, JobCount{Collection: c.Name, State: st, Jobs: n[st]})
		}
	}
	return out, nil
}

// DueCount returns the backlog: how many jobs are due at time.Now and not
// under a live lease, that is, how many the run loop of a Scheduler could
// claim at once if it had no limit (see [StatsReader.CountDue]). Jobs of
// collections that are not Enabled are not counted. With a store that is a
// StatsReader it is one store call; otherwise it reads every job.
func (s *Scheduler) DueCount(ctx context.Context) (int, error) {
	if err := s.readable(); err != nil {
		return 0, err
	}
	now := time.Now()
	if r, ok := s.store.(StatsReader); ok {
		return r.CountDue(ctx, now)
	}
	colls, err := s.store.ListCollections(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range colls {
		if c.Definition.State() != CollectionEnabled {
			continue
		}
		err := s.eachJob(ctx, c.Name, func(j *JobRecord) {
			due := j.Schedule.DueAt
			if !due.IsZero() && !due.After(now) && (j.LeaseOwner == "" || !j.LeaseUntil.After(now)) {
				n++
			}
		})
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}

// HistoryCountsOptions are the options of [Scheduler.HistoryCounts].
type HistoryCountsOptions struct {
	// Collections counts only the history of jobs in these collections;
	// nil counts all, an empty non-nil list none. A dashboard limited to
	// some tenants passes their collections.
	Collections []string
}

// HistoryCounts counts the history entries of all jobs whose EndTime lies
// in [from, to), in buckets of width step starting at from, by action name
// and status, as [StatsReader.CountHistory] does: only non-zero counts,
// ordered by bucket start, action name and status, each with how many of
// its entries are retries and how many faulted their occurrence. It is
// what a chart of occurrences and failures over time needs. opts may be
// nil (every collection).
//
// step must be positive, from before to, both within the years 1678 to
// 2262, and the range must hold at most MaxHistoryBuckets buckets; an
// error matching ErrInvalid names the argument at fault otherwise. With a
// store that is a StatsReader it is one store call; otherwise it reads the
// whole history of every job.
func (s *Scheduler) HistoryCounts(ctx context.Context, from, to time.Time, step time.Duration, opts *HistoryCountsOptions) ([]HistoryCount, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	if err := checkHistoryRange(from, to, step); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &HistoryCountsOptions{}
	}
	from, to = from.Round(0).UTC(), to.Round(0).UTC()
	if r, ok := s.store.(StatsReader); ok {
		return r.CountHistory(ctx, from, to, step, opts.Collections)
	}
	type key struct {
		bucket int64
		action ActionName
		status ExecutionStatus
	}
	n := map[key]*HistoryCount{}
	err := s.eachJobHistory(ctx, HistoryFilter{Collections: opts.Collections}, func(hist []HistoryEntry) {
		for _, h := range hist {
			if h.EndTime.IsZero() || h.EndTime.Before(from) || !h.EndTime.Before(to) {
				continue
			}
			k := key{int64(h.EndTime.Sub(from) / step), h.ActionName, h.Status}
			c := n[k]
			if c == nil {
				c = &HistoryCount{Start: from.Add(time.Duration(k.bucket) * step), ActionName: k.action, Status: k.status}
				n[k] = c
			}
			c.Add(&h)
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([]HistoryCount, 0, len(n))
	for _, c := range n {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b HistoryCount) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.ActionName, b.ActionName), cmp.Compare(a.Status, b.Status))
	})
	return out, nil
}

// Add counts h in c: one more entry, and one more retry or faulted entry
// when h is one. It does not check that h belongs to c's bucket.
func (c *HistoryCount) Add(h *HistoryEntry) {
	c.Entries++
	if h.RetryCount > 0 {
		c.Retries++
	}
	if h.Faulted {
		c.Faulted++
	}
}

// checkHistoryRange validates the arguments of HistoryCounts.
func checkHistoryRange(from, to time.Time, step time.Duration) error {
	var errs []error
	for _, a := range []struct {
		name string
		t    time.Time
	}{{"from", from}, {"to", to}} {
		if !time.Unix(0, a.t.UnixNano()).Equal(a.t) {
			errs = append(errs, &ValidationError{Path: a.name, Value: strconv.Quote(a.t.Format(time.RFC3339Nano)), Reason: "is outside the years 1678 to 2262"})
		}
	}
	if step <= 0 {
		errs = append(errs, &ValidationError{Path: "step", Value: strconv.Quote(step.String()), Reason: "is not positive"})
	}
	if !from.Before(to) {
		errs = append(errs, &ValidationError{Path: "to", Value: strconv.Quote(to.Format(time.RFC3339Nano)),
			Reason: fmt.Sprintf("is not after from (%s)", from.Format(time.RFC3339Nano))})
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	span := to.Sub(from)
	if !from.Add(span).Equal(to) { // the difference does not fit in a Duration
		return &ValidationError{Path: "to", Value: strconv.Quote(to.Format(time.RFC3339Nano)), Reason: "is 292 years or more after from"}
	}
	if buckets := (span + step - 1) / step; buckets > MaxHistoryBuckets {
		return &ValidationError{Path: "step", Value: strconv.Quote(step.String()),
			Reason: fmt.Sprintf("divides the range from %s to %s into %d buckets, more than %d", from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano), buckets, MaxHistoryBuckets)}
	}
	return nil
}

// RecentHistory returns the history entries of all jobs, newest first,
// one page at a time, as [StatsReader.RecentHistory] does; opts (which may
// be nil) filters and pages as in [Scheduler.ListHistory]: at most 100
// entries per call, 100 when opts.Top is 0. It is what a list of the
// latest failures (opts.Status Failed) or faulted occurrences
// (opts.Faulted) needs.
//
// With a store that is a StatsReader the order is the reverse of the
// order in which entries were recorded, and it is one store call.
// Otherwise it reads up to opts.Skip+opts.Top entries of every job and
// merges them by EndTime, newest first, keeping each job's own order; that
// is the same order whenever entries are recorded as their attempts end,
// as the Scheduler does.
func (s *Scheduler) RecentHistory(ctx context.Context, opts *ListHistoryOptions) ([]HistoryEntry, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &ListHistoryOptions{}
	}
	errs := []error{checkPage(opts.Top, opts.Skip)}
	errs = append(errs, checkHistoryOptions(opts))
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	f := historyFilter(opts)
	if r, ok := s.store.(StatsReader); ok {
		return r.RecentHistory(ctx, f)
	}
	// Merge each job's newest Skip+Top entries, newest EndTime first.
	var lists historyLists
	perJob := f
	perJob.Skip, perJob.Top = 0, f.Skip+f.Top
	err := s.eachJobHistory(ctx, perJob, func(h []HistoryEntry) {
		if len(h) > 0 {
			lists = append(lists, h)
		}
	})
	if err != nil {
		return nil, err
	}
	heap.Init(&lists)
	var out []HistoryEntry
	for skip := f.Skip; len(lists) > 0 && len(out) < f.Top; {
		h := lists[0][0]
		if lists[0] = lists[0][1:]; len(lists[0]) == 0 {
			heap.Pop(&lists)
		} else {
			heap.Fix(&lists, 0)
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, h)
	}
	return out, nil
}

// historyLists is a max-heap of non-empty lists of history entries by
// the EndTime of their first entry.
type historyLists [][]HistoryEntry

func (l historyLists) Len() int           { return len(l) }
func (l historyLists) Less(i, j int) bool { return l[i][0].EndTime.After(l[j][0].EndTime) }
func (l historyLists) Swap(i, j int)      { l[i], l[j] = l[j], l[i] }
func (l *historyLists) Push(x any)        { *l = append(*l, x.([]HistoryEntry)) }
func (l *historyLists) Pop() any {
	old := *l
	x := old[len(old)-1]
	*l = old[:len(old)-1]
	return x
}

// eachJob calls fn for every job of the collection, a page at a time. A
// collection deleted meanwhile has no jobs.
func (s *Scheduler) eachJob(ctx context.Context, collection string, fn func(*JobRecord)) error {
	for skip := 0; ; skip += statsPage {
		jobs, err := s.store.ListJobs(ctx, collection, JobFilter{Skip: skip, Top: statsPage})
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, j := range jobs {
			fn(j)
		}
		if len(jobs) < statsPage {
			return nil
		}
	}
}

// eachJobHistory calls fn with the history of every job of the
// collections f keeps, as ListHistory returns it with f. Jobs deleted
// meanwhile are left out.
func (s *Scheduler) eachJobHistory(ctx context.Context, f HistoryFilter, fn func([]HistoryEntry)) error {
	colls, err := s.store.ListCollections(ctx)
	if err != nil {
		return err
	}
	for _, c := range colls {
		if f.Collections != nil && !slices.Contains(f.Collections, c.Name) {
			continue
		}
		var names []string
		if err := s.eachJob(ctx, c.Name, func(j *JobRecord) { names = append(names, j.Name) }); err != nil {
			return err
		}
		for _, name := range names {
			h, err := s.store.ListHistory(ctx, c.Name, name, f)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			fn(h)
		}
	}
	return nil
}
