// Package memory is the in-memory reference implementation of
// [scheduler.Store]. It keeps everything in maps guarded by one mutex and
// indexes due jobs in a binary heap, so claiming the next due job costs
// O(log n) in the number of jobs. Data is lost when the process exits.
// Several Schedulers in one process may share one Store.
package memory

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

var _ scheduler.Store = (*Store)(nil)

// Store is an in-memory [scheduler.Store]. The zero value is not ready;
// use [New]. It is safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	colls map[string]*coll
	due   dueHeap
	seq   uint64 // creation order of entries, the heap's tie-breaker
}

type coll struct {
	rec  *scheduler.CollectionRecord
	jobs map[string]*entry
	// names lists the jobs' names in order; nil after a create or delete
	// until the next ListJobs sorts them again.
	names []string
}

type entry struct {
	rec   *scheduler.JobRecord
	coll  *coll
	hist  []scheduler.HistoryEntry
	idx   int   // position in the heap; -1 when not in it
	ready int64 // when ClaimDue may take it, in Unix nanoseconds
	seq   uint64
}

// New returns an empty Store.
func New() *Store {
	return &Store{colls: make(map[string]*coll)}
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.Round(0).UTC()
}

func utcp(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := utc(*t)
	return &u
}

// normJob returns a copy of j with its times in UTC.
func normJob(j *scheduler.JobRecord) *scheduler.JobRecord {
	r := j.Clone()
	r.Created, r.Updated, r.LeaseUntil = utc(r.Created), utc(r.Updated), utc(r.LeaseUntil)
	r.Status.LastExecutionTime = utcp(r.Status.LastExecutionTime)
	r.Status.NextExecutionTime = utcp(r.Status.NextExecutionTime)
	s := &r.Schedule
	s.DueAt, s.Anchor, s.NextOccurrence, s.RunRequested = utc(s.DueAt), utc(s.Anchor), utc(s.NextOccurrence), utc(s.RunRequested)
	for _, o := range []*scheduler.Occurrence{s.Current, s.Waiting} {
		if o != nil {
			o.Expected, o.At = utc(o.Expected), utc(o.At)
		}
	}
	return r
}

func normHist(h scheduler.HistoryEntry) scheduler.HistoryEntry {
	h.ExpectedExecutionTime, h.StartTime, h.EndTime = utc(h.ExpectedExecutionTime), utc(h.StartTime), utc(h.EndTime)
	return h
}

// reindex puts e in the due heap, moves it, or takes it out, according to
// its record and its collection's state.
func (s *Store) reindex(e *entry) {
	r := e.rec
	in := !r.Schedule.DueAt.IsZero() && e.coll.rec.Definition.State() == scheduler.CollectionEnabled
	if !in {
		if e.idx >= 0 {
			heap.Remove(&s.due, e.idx)
		}
		return
	}
	ready := r.Schedule.DueAt
	if r.LeaseOwner != "" && r.LeaseUntil.After(ready) {
		ready = r.LeaseUntil
	}
	e.ready = ready.UnixNano()
	if e.idx >= 0 {
		heap.Fix(&s.due, e.idx)
	} else {
		heap.Push(&s.due, e)
	}
}

// PutCollection implements [scheduler.Store].
func (s *Store) PutCollection(ctx context.Context, c *scheduler.CollectionRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.colls[c.Name]
	rec := c.Clone()
	rec.Created, rec.Updated = utc(rec.Created), utc(rec.Updated)
	rec.Version = c.Version + 1
	if old == nil {
		if c.Version != 0 {
			return fmt.Errorf("memory: put collection %q: %w", c.Name, scheduler.ErrNotFound)
		}
		s.colls[c.Name] = &coll{rec: rec, jobs: make(map[string]*entry)}
		return nil
	}
	if c.Version != old.rec.Version {
		return fmt.Errorf("memory: put collection %q: version %d, stored %d: %w", c.Name, c.Version, old.rec.Version, scheduler.ErrConflict)
	}
	if n, limit := len(old.jobs), rec.Definition.MaxJobCount(); n > limit {
		return &scheduler.QuotaError{Collection: c.Name, Quota: "maxJobCount", Limit: fmt.Sprint(limit),
			Reason: fmt.Sprintf("the collection holds %d jobs", n)}
	}
	stateChanged := old.rec.Definition.State() != rec.Definition.State()
	old.rec = rec
	if stateChanged {
		for _, e := range old.jobs {
			s.reindex(e)
		}
	}
	return nil
}

// GetCollection implements [scheduler.Store].
func (s *Store) GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.colls[name]
	if c == nil {
		return nil, fmt.Errorf("memory: job collection %q: %w", name, scheduler.ErrNotFound)
	}
	return c.rec.Clone(), nil
}

// ListCollections implements [scheduler.Store].
func (s *Store) ListCollections(ctx context.Context) ([]*scheduler.CollectionRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*scheduler.CollectionRecord, 0, len(s.colls))
	for _, c := range s.colls {
		out = append(out, c.rec.Clone())
	}
	slices.SortFunc(out, func(a, b *scheduler.CollectionRecord) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// DeleteCollection implements [scheduler.Store].
func (s *Store) DeleteCollection(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.colls[name]
	if c == nil {
		return fmt.Errorf("memory: delete job collection %q: %w", name, scheduler.ErrNotFound)
	}
	for _, e := range c.jobs {
		if e.idx >= 0 {
			heap.Remove(&s.due, e.idx)
		}
	}
	delete(s.colls, name)
	return nil
}

func (s *Store) lookup(collection, name string) (*entry, error) {
	c := s.colls[collection]
	if c == nil {
		return nil, fmt.Errorf("memory: job collection %q: %w", collection, scheduler.ErrNotFound)
	}
	e := c.jobs[name]
	if e == nil {
		return nil, fmt.Errorf("memory: job %q in collection %q: %w", name, collection, scheduler.ErrNotFound)
	}
	return e, nil
}

// PutJob implements [scheduler.Store].
func (s *Store) PutJob(ctx context.Context, j *scheduler.JobRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.colls[j.Collection]
	if c == nil {
		return fmt.Errorf("memory: put job %q: job collection %q: %w", j.Name, j.Collection, scheduler.ErrNotFound)
	}
	rec := normJob(j)
	rec.Version = j.Version + 1
	e := c.jobs[j.Name]
	if e == nil {
		if j.Version != 0 {
			return fmt.Errorf("memory: put job %q in collection %q: %w", j.Name, j.Collection, scheduler.ErrNotFound)
		}
		if limit := c.rec.Definition.MaxJobCount(); len(c.jobs) >= limit {
			return &scheduler.QuotaError{Collection: j.Collection, Quota: "maxJobCount", Limit: fmt.Sprint(limit),
				Reason: fmt.Sprintf("the collection already holds %d jobs", len(c.jobs))}
		}
		rec.LeaseOwner, rec.LeaseUntil = "", time.Time{}
		s.seq++
		e = &entry{rec: rec, coll: c, idx: -1, seq: s.seq}
		c.jobs[j.Name] = e
		c.names = nil
		s.reindex(e)
		return nil
	}
	if j.Version != e.rec.Version {
		return fmt.Errorf("memory: put job %q in collection %q: version %d, stored %d: %w", j.Name, j.Collection, j.Version, e.rec.Version, scheduler.ErrConflict)
	}
	rec.LeaseOwner, rec.LeaseUntil = e.rec.LeaseOwner, e.rec.LeaseUntil
	e.rec = rec
	s.reindex(e)
	return nil
}

// GetJob implements [scheduler.Store].
func (s *Store) GetJob(ctx context.Context, collection, name string) (*scheduler.JobRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.lookup(collection, name)
	if err != nil {
		return nil, err
	}
	return e.rec.Clone(), nil
}

// ListJobs implements [scheduler.Store].
func (s *Store) ListJobs(ctx context.Context, collection string, f scheduler.JobFilter) ([]*scheduler.JobRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.colls[collection]
	if c == nil {
		return nil, fmt.Errorf("memory: list jobs: job collection %q: %w", collection, scheduler.ErrNotFound)
	}
	if c.names == nil {
		c.names = make([]string, 0, len(c.jobs))
		for n := range c.jobs {
			c.names = append(c.names, n)
		}
		slices.Sort(c.names)
	}
	var out []*scheduler.JobRecord
	skip := f.Skip
	for _, n := range c.names {
		if f.Top > 0 && len(out) >= f.Top {
			break
		}
		e := c.jobs[n]
		if f.State != "" && e.rec.State != f.State {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, e.rec.Clone())
	}
	return out, nil
}

// DeleteJob implements [scheduler.Store].
func (s *Store) DeleteJob(ctx context.Context, collection, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.lookup(collection, name)
	if err != nil {
		return fmt.Errorf("memory: delete: %w", err)
	}
	if e.idx >= 0 {
		heap.Remove(&s.due, e.idx)
	}
	delete(e.coll.jobs, name)
	e.coll.names = nil
	return nil
}

// ClaimDue implements [scheduler.Store].
func (s *Store) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*scheduler.JobRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	leaseUntil = utc(leaseUntil)
	if !leaseUntil.After(now) {
		return nil, fmt.Errorf("memory: claim: lease end %v is not after now %v", leaseUntil, now)
	}
	var out []*scheduler.JobRecord
	nowNs := now.UnixNano()
	for len(out) < limit && len(s.due) > 0 && s.due[0].ready <= nowNs {
		e := s.due[0]
		e.rec.LeaseOwner, e.rec.LeaseUntil = owner, leaseUntil
		e.rec.Version++
		s.reindex(e)
		out = append(out, e.rec.Clone())
	}
	return out, nil
}

// NextDue implements [scheduler.Store].
func (s *Store) NextDue(ctx context.Context) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.due) == 0 {
		return time.Time{}, nil
	}
	return time.Unix(0, s.due[0].ready).UTC(), nil
}

// ExtendLease implements [scheduler.Store].
func (s *Store) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.lookup(collection, name)
	if err != nil {
		return fmt.Errorf("memory: extend lease: %w", err)
	}
	if e.rec.LeaseOwner != owner {
		return fmt.Errorf("memory: extend lease of job %q: held by %q, not %q: %w", e.rec.ID(), e.rec.LeaseOwner, owner, scheduler.ErrLeaseLost)
	}
	e.rec.LeaseUntil = utc(until)
	s.reindex(e)
	return nil
}

// Record implements [scheduler.Store].
func (s *Store) Record(ctx context.Context, owner string, j *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.lookup(j.Collection, j.Name)
	if err != nil {
		return fmt.Errorf("memory: record: %w", err)
	}
	if e.rec.LeaseOwner != owner || owner == "" {
		return fmt.Errorf("memory: record job %q: lease held by %q, not %q: %w", j.ID(), e.rec.LeaseOwner, owner, scheduler.ErrLeaseLost)
	}
	if j.Version != e.rec.Version {
		return fmt.Errorf("memory: record job %q: version %d, stored %d: %w", j.ID(), j.Version, e.rec.Version, scheduler.ErrConflict)
	}
	rec := normJob(j)
	rec.Version = j.Version + 1
	rec.LeaseOwner, rec.LeaseUntil = "", time.Time{}
	e.rec = rec
	for _, h := range history {
		e.hist = append(e.hist, normHist(h))
	}
	s.reindex(e)
	return nil
}

// ListHistory implements [scheduler.Store].
func (s *Store) ListHistory(ctx context.Context, collection, job string, f scheduler.HistoryFilter) ([]scheduler.HistoryEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.lookup(collection, job)
	if err != nil {
		return nil, fmt.Errorf("memory: list history: %w", err)
	}
	var out []scheduler.HistoryEntry
	skip := f.Skip
	for i := len(e.hist) - 1; i >= 0; i-- {
		h := e.hist[i]
		if f.Status != "" && h.Status != f.Status {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if f.Top > 0 && len(out) >= f.Top {
			break
		}
		out = append(out, h)
	}
	return out, nil
}

// pruneChunk is the number of jobs Prune visits between releases of the
// lock.
const pruneChunk = 1024

// Prune implements [scheduler.Store]. It visits every job, but lets other
// calls in after every pruneChunk jobs.
func (s *Store) Prune(ctx context.Context, p scheduler.PruneRequest) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, visited := 0, 0
	for _, c := range s.colls {
		for name, e := range c.jobs {
			// Let other callers in now and then: a prune visits every job.
			// (Go allows changes to a map while it is being ranged over.)
			if visited++; visited%pruneChunk == 0 {
				s.mu.Unlock()
				s.mu.Lock()
				if c.jobs[name] != e {
					continue
				}
			}
			if !p.FinalJobsBefore.IsZero() && e.rec.State.Final() && e.rec.Updated.Before(p.FinalJobsBefore) {
				if e.idx >= 0 {
					heap.Remove(&s.due, e.idx)
				}
				delete(c.jobs, name)
				c.names = nil
				n++
				continue
			}
			h := e.hist
			if !p.HistoryBefore.IsZero() {
				h = slices.DeleteFunc(h, func(x scheduler.HistoryEntry) bool { return x.EndTime.Before(p.HistoryBefore) })
			}
			if p.PerJob > 0 && len(h) > p.PerJob {
				h = slices.Delete(h, 0, len(h)-p.PerJob)
			}
			n += len(e.hist) - len(h)
			e.hist = h
		}
	}
	return n, nil
}

// dueHeap orders entries by ready time, then by creation order so that
// claims are deterministic.
type dueHeap []*entry

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.ready != b.ready {
		return a.ready < b.ready
	}
	return a.seq < b.seq
}
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx = i
	h[j].idx = j
}
func (h *dueHeap) Push(x any) {
	e := x.(*entry)
	e.idx = len(*h)
	*h = append(*h, e)
}
func (h *dueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.idx = -1
	return e
}
