package memory

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// CountJobs implements [scheduler.StatsReader] from the counts each
// collection keeps: its cost grows with the number of collections, not of
// jobs.
func (s *Store) CountJobs(ctx context.Context) ([]scheduler.JobCount, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []scheduler.JobCount
	for _, name := range slices.Sorted(maps.Keys(s.colls)) {
		c := s.colls[name]
		counts := maps.Clone(c.others)
		if counts == nil {
			counts = make(map[scheduler.JobState]int)
		}
		for i, n := range c.counts {
			if n != 0 {
				counts[compactStates[i]] = n
			}
		}
		for _, st := range slices.Sorted(maps.Keys(counts)) {
			out = append(out, scheduler.JobCount{Collection: name, State: st, Jobs: counts[st]})
		}
	}
	return out, nil
}

// CountDue implements [scheduler.StatsReader]. It visits the jobs of
// s.due and s.leased that are ready at now (and in the indexes' heaps
// their children), not the whole indexes.
func (s *Store) CountDue(ctx context.Context, now time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := timeKey(now)
	return s.due.countUpTo(k) + s.leased.countUpTo(k), nil
}

// CountHistory implements [scheduler.StatsReader] by visiting every
// history entry of the collections counted.
func (s *Store) CountHistory(ctx context.Context, from, to time.Time, step time.Duration, collections []string) ([]scheduler.HistoryCount, error) {
	if step <= 0 || !from.Before(to) {
		return nil, fmt.Errorf("memory: count history: step %v from %v to %v is no range", step, from, to)
	}
	from, to = utc(from), utc(to)
	type key struct {
		bucket int64
		action scheduler.ActionName
		status scheduler.ExecutionStatus
	}
	n := map[key]*scheduler.HistoryCount{}
	s.mu.Lock()
	for name, c := range s.colls {
		if collections != nil && !slices.Contains(collections, name) {
			continue
		}
		for _, j := range c.jobs {
			hist := j.history()
			for i := range hist {
				h := &hist[i].HistoryEntry
				end := h.EndTime
				if end.IsZero() || end.Before(from) || !end.Before(to) {
					continue
				}
				k := key{int64(end.Sub(from) / step), h.ActionName, h.Status}
				hc := n[k]
				if hc == nil {
					hc = &scheduler.HistoryCount{Start: from.Add(time.Duration(k.bucket) * step), ActionName: k.action, Status: k.status}
					n[k] = hc
				}
				hc.Add(h)
			}
		}
	}
	s.mu.Unlock()
	out := make([]scheduler.HistoryCount, 0, len(n))
	for _, hc := range n {
		out = append(out, *hc)
	}
	slices.SortFunc(out, func(a, b scheduler.HistoryCount) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.ActionName, b.ActionName), cmp.Compare(a.Status, b.Status))
	})
	return out, nil
}

// RecentHistory implements [scheduler.StatsReader]. It merges the jobs'
// histories from their newest entries, so it reads about f.Skip+f.Top
// entries plus one per job that has history.
func (s *Store) RecentHistory(ctx context.Context, f scheduler.HistoryFilter) ([]scheduler.HistoryEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var cs cursors
	for name, c := range s.colls {
		if f.Collections != nil && !slices.Contains(f.Collections, name) {
			continue
		}
		for _, j := range c.jobs {
			hist := j.history()
			cur := cursor{hist: hist, i: len(hist)}
			if cur.next(&f) {
				cs = append(cs, cur)
			}
		}
	}
	heap.Init(&cs)
	var out []scheduler.HistoryEntry
	for skip := f.Skip; len(cs) > 0 && (f.Top <= 0 || len(out) < f.Top); {
		h := cs[0].hist[cs[0].i].HistoryEntry
		if cs[0].next(&f) {
			heap.Fix(&cs, 0)
		} else {
			heap.Pop(&cs)
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, h)
	}
	return out, nil
}

// cursor walks a job's history from the newest entry back.
type cursor struct {
	hist []histEntry
	i    int // the current entry
}

// next moves to the previous entry that f keeps and reports whether there
// is one.
func (c *cursor) next(f *scheduler.HistoryFilter) bool {
	for c.i--; c.i >= 0; c.i-- {
		if f.Keeps(&c.hist[c.i].HistoryEntry) {
			return true
		}
	}
	return false
}

// cursors is a heap of cursors, the one at the most recently recorded
// entry first.
type cursors []cursor

func (c cursors) Len() int           { return len(c) }
func (c cursors) Less(i, j int) bool { return c[i].hist[c[i].i].seq > c[j].hist[c[j].i].seq }
func (c cursors) Swap(i, j int)      { c[i], c[j] = c[j], c[i] }
func (c *cursors) Push(x any)        { *c = append(*c, x.(cursor)) }
func (c *cursors) Pop() any {
	old := *c
	x := old[len(old)-1]
	*c = old[:len(old)-1]
	return x
}
