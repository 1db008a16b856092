// Package memory is a [scheduler.Store] that keeps everything in the
// process's memory: the store for programs whose jobs need not outlive
// them and for tests, and the reference implementation of the Store
// contract.
//
// Everything it holds is lost when the process exits. Since nothing is
// kept at rest, the store is [scheduler.Ephemeral]: a Scheduler without
// Config.Secrets keeps job secrets in it unsealed.
//
// It behaves as [scheduler.Store] documents (store/storetest checks it as
// it checks every store), and it implements [scheduler.BatchRecorder],
// [scheduler.LeaseExtender] and [scheduler.StatsReader]. The records it returns are copies that the
// caller owns, and it keeps copies of the records it is given (except
// those RecordBatch takes over, as its contract allows). It is safe for
// concurrent use: each call holds the store's one mutex while it runs.
// Several Schedulers in one process may share one Store.
//
// What calls cost: reading, writing or deleting a job costs about the same
// however many jobs the store holds, and so does each job that ClaimDue
// claims or Record records, as long as jobs come due in the order they
// were written and leases end in the order they were taken (as in a
// burst, or when jobs were registered in the order they come due);
// otherwise a small part grows with the logarithm of the number of due
// jobs. Every read but a claim copies the job's definition; a claim hands
// out the stored one, which nobody modifies (see [scheduler.Store]), and
// sets the claimed record's Handle to the job, so that recording it looks
// nothing up. ListJobs sorts a collection's names after jobs were created
// or deleted in it, then reads only the page asked for. CountJobs costs nothing per job and CountDue a
// step per job that is due; CountHistory and RecentHistory visit every
// job with history. Prune visits only what it deletes.
//
// What it keeps: a job that has not run yet takes about 200 bytes besides
// its definition (with a small definition, a million such jobs take less
// than 400 MB); a job that has run about 110 more, and each of its
// history entries about 250; each owner that ever claimed, its name
// once (every claim adds its owner, even one that claims nothing, and
// none is dropped). Records that RecordBatch took over are kept
// for later claims to fill in, up to as many as were out on claims at once
// (at most 16,384 of about 500 bytes).
package memory

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

var (
	_ scheduler.Store         = (*Store)(nil)
	_ scheduler.BatchRecorder = (*Store)(nil)
	_ scheduler.LeaseExtender = (*Store)(nil)
	_ scheduler.StatsReader   = (*Store)(nil)
	_ scheduler.Ephemeral     = (*Store)(nil)
)

// Store is an in-memory [scheduler.Store]. The zero value is not ready;
// use [New]. It is safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	colls map[string]*coll
	// due and leased hold the jobs that have a DueAt in an Enabled
	// collection, by the instant ClaimDue may take them: leased those
	// whose lease ends after their DueAt, by the lease's end, and due the
	// others, by their DueAt.
	due, leased index[*job]
	seq         uint64 // jobs created so far (modulo 2^48: see job.incarnation)
	hseq        uint64 // history entries recorded so far
	// randomTies breaks ties in the due order at random rather than by
	// creation order (for tests: the contract leaves ties open).
	randomTies bool

	// What Prune needs, kept up to date by every write so that it
	// visits only what it deletes.
	finals index[*job] // jobs in a final state, by Updated
	// aged holds the jobs with history, by the EndTime of their oldest
	// entry, or of an entry deleted since: deleting entries does not
	// move a job, Prune does when it reaches it.
	aged   index[*job]
	over   map[*job]struct{} // jobs with more than perJob history entries
	perJob int               // the PerJob of the last Prune; 0 before any

	// spare holds records that RecordBatch took over and did not keep
	// (their jobs went back to compact form), zeroed: ClaimDue fills them
	// in rather than allocate. In a burst of attempts that spares about
	// 400 bytes per occurrence, a quarter of the Scheduler's CPU time.
	spare []*scheduler.JobRecord
	// spareMax bounds spare: the most leases held at once so far, at
	// least minSpare and at most maxSpare. Each record out on a claim
	// comes back as a spare one when its outcome is recorded: a spare
	// that held fewer than were out at the peak would drop records as
	// the attempts in flight fall and allocate new ones as they rise
	// again (with a thousand attempts in flight, one claimed record in
	// eight was new under a fixed bound of 1,024).
	spareMax int

	permits permits // the permits of collections' limits; a lock of their own

	// owners holds every owner that claimed so far, by the number a
	// job's more part keeps (4 bytes rather than a string's 16: more
	// takes 112 bytes, not 128); owners[0] is "", no lease. ownerIDs
	// gives their numbers. Both grow by one entry for each owner that
	// ever claimed, whether its claim took a job or none, and never
	// shrink.
	owners   []string
	ownerIDs map[string]uint32
}

// The bounds of Store.spareMax: the spare records of an idle store take
// at most about 8 MB (a record takes 512 bytes).
const (
	minSpare = 1024
	maxSpare = 16384
)

// coll is a stored collection with its jobs.
type coll struct {
	rec  *scheduler.CollectionRecord
	jobs map[string]*job
	// counts counts the jobs in each of compactStates, and others those
	// in any other state (states without jobs have no key).
	counts [len(compactStates)]int
	others map[scheduler.JobState]int
	// names lists the jobs' names in order; nil after a create or delete
	// until the next ListJobs sorts them again.
	names []string
}

// job is a stored job. Its fields are ordered to take 80 bytes: a store
// of a million jobs holds a million of them.
type job struct {
	coll *coll // nil once the job is deleted (a claimed record's Handle may still point to it)
	name string
	more *more   // nil until the job is claimed, has history, is final, or its record is kept whole
	rec  compact // the record in compact form, while more.whole is nil (see compact.go); rec.seq is the creation order (modulo 2^32), which breaks ties in Store.due, and with rec.seqHigh makes the job's Incarnation
	due  int32   // place in Store.due (see index)
	ver  uint32  // Version, below bigVersion; from there on in more.whole.Version
}

// bigVersion marks a job whose Version is kept in the Version of its
// record, which is then kept whole: a job reaches it only after four
// billion writes, and its more part has no room to spare for it.
const bigVersion = math.MaxUint32

// version returns the job's Version.
func (j *job) version() int64 {
	if j.ver == bigVersion {
		return j.more.whole.Version
	}
	return int64(j.ver)
}

// setVersion sets the job's Version to v.
func (j *job) setVersion(v int64) {
	if v < bigVersion {
		j.ver = uint32(v)
		return
	}
	j.keepWhole()
	j.more.whole.Version = v
	j.ver = bigVersion
}

// tie orders jobs whose keys are equal in an index: by creation (see
// Store.randomTies).
func (j *job) tie() uint32 { return j.rec.seq }

// more is what a job keeps once it has been claimed, has history, is in a
// final state, or has a record without compact form.
// Its fields take 112 bytes (a size class): every job that has run keeps
// one.
type more struct {
	whole      *scheduler.JobRecord // the record, when it has no compact form (or the job's Version is bigVersion or more)
	ran        ran                  // the rest of the compact form of a job that has run (see compact.go)
	leaseUntil int64                // the lease's end, as a timeKey (8 bytes rather than a Time's 24)
	hist       []histEntry          // in recording order
	// places in Store.leased, Store.finals and Store.aged
	leased, final, aged int32
	owner               uint32 // the lease's owner, by its number in Store.owners; 0 when the job is not leased
}

// histEntry is a history entry with its place in the order in which the
// store recorded the entries of all jobs.
type histEntry struct {
	scheduler.HistoryEntry
	seq uint64
}

// New returns an empty Store.
func New() *Store {
	s := &Store{colls: make(map[string]*coll), over: make(map[*job]struct{}), owners: []string{""}, ownerIDs: map[string]uint32{"": 0}}
	s.due.place = func(j *job) *int32 { return &j.due }
	s.leased.place = func(j *job) *int32 { return &j.ext().leased }
	s.finals.place = func(j *job) *int32 { return &j.ext().final }
	s.aged.place = func(j *job) *int32 { return &j.ext().aged }
	return s
}

// Ephemeral returns true: nothing the store holds outlives the process, so
// a Scheduler without Config.Secrets keeps job secrets in it unsealed
// (see [scheduler.Ephemeral]).
func (s *Store) Ephemeral() bool { return true }

// ext returns j.more, making it if need be.
func (j *job) ext() *more {
	if j.more == nil {
		j.more = new(more)
	}
	return j.more
}

// leaseOwner returns the owner of j's lease, empty when j is not leased.
func (s *Store) leaseOwner(j *job) string {
	if j.more == nil {
		return ""
	}
	return s.owners[j.more.owner]
}

// ownerID returns the number of lease owner name in s.owners, adding it
// when it is new; 0 for "".
func (s *Store) ownerID(name string) uint32 {
	id, ok := s.ownerIDs[name]
	if !ok {
		name = strings.Clone(name)
		id = uint32(len(s.owners))
		s.owners = append(s.owners, name)
		s.ownerIDs[name] = id
	}
	return id
}

// read returns a copy of j's record that the caller owns.
func (s *Store) read(j *job) *scheduler.JobRecord {
	return j.readInto(nil, extraSlots{}, false, s.leaseOwner(j))
}

func (j *job) history() []histEntry {
	if j.more == nil {
		return nil
	}
	return j.more.hist
}

// set stores r as j's record (keep: r itself, see job.setRecord), keeping
// the collection's counts and s.finals up to date. A job being created
// (Version 0) is counted for the first time.
func (s *Store) set(j *job, r *scheduler.JobRecord, keep bool) {
	old := j.state()
	j.setRecord(r, keep)
	if st := j.state(); j.version() == 0 {
		j.coll.count(st, 1)
	} else if st != old {
		j.coll.count(old, -1)
		j.coll.count(st, 1)
	}
	if j.state().Final() {
		s.finals.set(j, timeKey(j.updated()))
	} else if j.more != nil {
		s.finals.remove(j)
	}
}

// reindex puts j in s.due or s.leased, moves it there, or takes it out,
// according to its record, lease and collection's state.
func (s *Store) reindex(j *job) {
	due, m := j.dueAt(), j.more
	switch {
	case due.IsZero() || j.coll.rec.Definition.State() != scheduler.CollectionEnabled:
		s.due.remove(j)
		if m != nil {
			s.leased.remove(j)
		}
	case m != nil && m.owner != 0 && m.leaseUntil > timeKey(due):
		s.due.remove(j)
		s.leased.set(j, m.leaseUntil)
	default:
		if m != nil {
			s.leased.remove(j)
		}
		s.due.set(j, timeKey(due))
	}
}

// next returns the job that ClaimDue would take first, and its key in its
// index; ok is false when there is none.
func (s *Store) next() (j *job, key int64, ok bool) {
	d, l := s.due.first(), s.leased.first()
	if d == nil || l != nil && l.before(d) {
		d = l
	}
	if d == nil {
		return nil, 0, false
	}
	return d.v, d.key, true
}

// forget drops what refers to j, which is being deleted, and takes it out
// of its collection's counts.
func (s *Store) forget(j *job) {
	s.due.remove(j)
	if j.more != nil {
		s.leased.remove(j)
		s.finals.remove(j)
		s.aged.remove(j)
		delete(s.over, j)
	}
	j.coll.count(j.state(), -1)
}

// appendHistory appends hist to j's history, keeping s.aged and s.over up
// to date.
func (s *Store) appendHistory(j *job, hist []scheduler.HistoryEntry) {
	if len(hist) == 0 {
		return
	}
	m := j.ext()
	oldest, ok := s.aged.key(j)
	for _, h := range hist {
		h.ExpectedExecutionTime, h.StartTime, h.EndTime = utc(h.ExpectedExecutionTime), utc(h.StartTime), utc(h.EndTime)
		s.hseq++
		m.hist = append(m.hist, histEntry{h, s.hseq})
		if k := timeKey(h.EndTime); !ok || k < oldest {
			oldest, ok = k, true
		}
	}
	s.aged.set(j, oldest)
	if s.perJob > 0 && len(m.hist) > s.perJob {
		s.over[j] = struct{}{}
	}
}

// trimmed updates s.aged and s.over after entries were deleted from j's
// history. A job that still has history keeps its place in s.aged: the
// entries left end no earlier than the one it was placed by.
func (s *Store) trimmed(j *job) {
	m := j.more
	if len(m.hist) == 0 {
		s.aged.remove(j)
	}
	if s.perJob == 0 || len(m.hist) <= s.perJob {
		delete(s.over, j)
	}
}

// count adds d to the number of jobs in state st.
func (c *coll) count(st scheduler.JobState, d int) {
	if i := slices.Index(compactStates[:], st); i >= 0 {
		c.counts[i] += d
		return
	}
	if c.others == nil {
		c.others = make(map[scheduler.JobState]int)
	}
	if n := c.others[st] + d; n != 0 {
		c.others[st] = n
	} else {
		delete(c.others, st)
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
			return &scheduler.NotFoundError{Collection: c.Name}
		}
		s.colls[c.Name] = &coll{rec: rec, jobs: make(map[string]*job)}
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
		for _, j := range old.jobs {
			s.reindex(j)
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
		return nil, &scheduler.NotFoundError{Collection: name}
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
func (s *Store) DeleteCollection(ctx context.Context, name, etag string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.colls[name]
	if c == nil {
		return &scheduler.NotFoundError{Collection: name}
	}
	if etag != "" && c.rec.ETag != etag {
		return fmt.Errorf("store/memory: delete job collection %q: ETag %q, not %q: %w", name, c.rec.ETag, etag, scheduler.ErrPreconditionFailed)
	}
	for _, j := range c.jobs {
		s.forget(j)
		j.coll = nil // see job.coll
	}
	delete(s.colls, name)
	return nil
}

func (s *Store) lookup(collection, name string) (*job, error) {
	c := s.colls[collection]
	if c == nil {
		return nil, &scheduler.NotFoundError{Collection: collection}
	}
	j := c.jobs[name]
	if j == nil {
		return nil, &scheduler.NotFoundError{Collection: collection, Job: name}
	}
	return j, nil
}

// PutJob implements [scheduler.Store].
func (s *Store) PutJob(ctx context.Context, r *scheduler.JobRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, j, err := s.checkPut(r)
	if err == nil && j == nil {
		err = quota(c, 1)
	}
	if err != nil {
		return err
	}
	s.apply(c, j, r)
	return nil
}

// checkPut returns the collection of r and the job r replaces (nil for a
// create), or why r cannot be put; it checks no quota.
func (s *Store) checkPut(r *scheduler.JobRecord) (*coll, *job, error) {
	c := s.colls[r.Collection]
	if c == nil {
		return nil, nil, &scheduler.NotFoundError{Collection: r.Collection}
	}
	j := c.jobs[r.Name]
	switch {
	case j == nil && r.Version != 0:
		return nil, nil, &scheduler.NotFoundError{Collection: r.Collection, Job: r.Name}
	case j != nil && r.Version != j.version():
		return nil, nil, fmt.Errorf("memory: put job %q in collection %q: version %d, stored %d: %w", r.Name, r.Collection, r.Version, j.version(), scheduler.ErrConflict)
	}
	return c, j, nil
}

// quota reports whether c can take n more jobs.
func quota(c *coll, n int) error {
	if limit := c.rec.Definition.MaxJobCount(); len(c.jobs)+n > limit {
		err := &scheduler.QuotaError{Collection: c.rec.Name, Quota: "maxJobCount", Limit: fmt.Sprint(limit),
			Reason: fmt.Sprintf("the collection already holds %d jobs", len(c.jobs))}
		if n > 1 {
			err.Reason += fmt.Sprintf(", and the batch creates %d", n)
		}
		return err
	}
	return nil
}

// apply stores r, checked by checkPut, over j (nil: creates the job).
func (s *Store) apply(c *coll, j *job, r *scheduler.JobRecord) {
	if j == nil {
		s.seq = (s.seq + 1) & (1<<48 - 1)
		j = &job{coll: c, name: r.Name, rec: compact{seq: uint32(s.seq), seqHigh: uint16(s.seq >> 32)}}
		if s.randomTies {
			j.rec.seq = rand.Uint32()
		}
		c.jobs[r.Name] = j
		c.names = nil
		r.Incarnation = j.incarnation() // the answer says what is stored
	}
	s.set(j, r, false) // the stored lease stays
	j.setVersion(j.version() + 1)
	s.reindex(j)
}

var (
	_ scheduler.BulkPutter   = (*Store)(nil)
	_ scheduler.AheadClaimer = (*Store)(nil)
)

// GetJobs implements [scheduler.BulkPutter].
func (s *Store) GetJobs(ctx context.Context, collection string, names []string) ([]*scheduler.JobRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*scheduler.JobRecord, len(names))
	if c := s.colls[collection]; c != nil {
		for i, n := range names {
			if j := c.jobs[n]; j != nil {
				out[i] = s.read(j)
			}
		}
	}
	return out, nil
}

// PutJobs implements [scheduler.BulkPutter]: every job is checked, and
// the quota once, before any is stored.
func (s *Store) PutJobs(ctx context.Context, collection string, jobs []*scheduler.JobRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	olds := make([]*job, len(jobs))
	seen := make(map[string]bool, len(jobs))
	creates := 0
	var c *coll
	for i, r := range jobs {
		if r.Collection != collection || seen[r.Name] {
			return fmt.Errorf("memory: put jobs of collection %q: job %q of collection %q is not of the collection, or put twice", collection, r.Name, r.Collection)
		}
		seen[r.Name] = true
		var err error
		if c, olds[i], err = s.checkPut(r); err != nil {
			return err
		}
		if olds[i] == nil {
			creates++
		}
	}
	if c == nil {
		return nil
	}
	if err := quota(c, creates); err != nil {
		return err
	}
	for i, r := range jobs {
		s.apply(c, olds[i], r)
	}
	return nil
}

// GetJob implements [scheduler.Store].
func (s *Store) GetJob(ctx context.Context, collection, name string) (*scheduler.JobRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, err := s.lookup(collection, name)
	if err != nil {
		return nil, err
	}
	return s.read(j), nil
}

// ListJobs implements [scheduler.Store].
func (s *Store) ListJobs(ctx context.Context, collection string, f scheduler.JobFilter) ([]*scheduler.JobRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.colls[collection]
	if c == nil {
		return nil, &scheduler.NotFoundError{Collection: collection}
	}
	if c.names == nil {
		c.names = slices.Sorted(maps.Keys(c.jobs))
	}
	if f.OrderBy != scheduler.JobsByName || f.Descending {
		return s.listOrdered(c, f), nil
	}
	var out []*scheduler.JobRecord
	names, skip := c.names, f.Skip
	if f.State == "" && f.Tag.Name == "" {
		// Every job counts: skip without looking them up.
		names, skip = names[min(max(skip, 0), len(names)):], 0
	}
	for _, n := range names {
		if f.Top > 0 && len(out) >= f.Top {
			break
		}
		j := c.jobs[n]
		if f.State != "" && j.state() != f.State || !f.Tag.Keeps(j.tags()) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, s.read(j))
	}
	return out, nil
}

// ordered is a job and its value in the order of a list of jobs.
type ordered struct {
	j    *job
	key  int64 // the count, or the time as a timeKey
	none bool  // no time: after every job with one
}

// listOrdered returns the page f asks for of c's jobs, in f's order other
// than the ascending name order: the jobs that f keeps sorted by their
// value, ties by name, and, with f.Descending, reversed. The store keeps
// no index by these values (each would cost the engine's writes): the
// sort costs O(n log n) of the n jobs f keeps, at each call.
func (s *Store) listOrdered(c *coll, f scheduler.JobFilter) []*scheduler.JobRecord {
	var at func(j *job) (time.Time, bool)
	switch f.OrderBy {
	case scheduler.JobsByNextExecution:
		at = (*job).nextExecution
	case scheduler.JobsByLastExecution:
		at = (*job).lastExecution
	}
	all := make([]ordered, 0, len(c.names))
	for _, n := range c.names {
		j := c.jobs[n]
		if f.State != "" && j.state() != f.State || !f.Tag.Keeps(j.tags()) {
			continue
		}
		o := ordered{j: j}
		switch {
		case at != nil:
			t, ok := at(j)
			o.key, o.none = timeKey(t), !ok
		case f.OrderBy == scheduler.JobsByFailures:
			o.key = int64(j.failures())
		}
		all = append(all, o)
	}
	if f.OrderBy != scheduler.JobsByName {
		slices.SortFunc(all, func(a, b ordered) int {
			switch {
			case a.none != b.none:
				if a.none {
					return 1
				}
				return -1
			case a.key != b.key:
				return cmp.Compare(a.key, b.key)
			case at != nil && !a.none && (a.key == math.MaxInt64 || a.key == math.MinInt64+1):
				// Times beyond the range of a timeKey: compared
				// as they are.
				ta, _ := at(a.j)
				tb, _ := at(b.j)
				if c := ta.Compare(tb); c != 0 {
					return c
				}
			}
			return strings.Compare(a.j.name, b.j.name)
		})
	}
	if f.Descending {
		slices.Reverse(all)
	}
	all = all[min(max(f.Skip, 0), len(all)):]
	if f.Top > 0 && len(all) > f.Top {
		all = all[:f.Top]
	}
	out := make([]*scheduler.JobRecord, len(all))
	for i, o := range all {
		out[i] = s.read(o.j)
	}
	return out
}

// DeleteJob implements [scheduler.Store].
func (s *Store) DeleteJob(ctx context.Context, collection, name, etag string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, err := s.lookup(collection, name)
	if err != nil {
		return err
	}
	if etag != "" && !j.etagIs(etag) {
		return fmt.Errorf("store/memory: delete job %q of collection %q: ETag %q, not %q: %w",
			name, collection, j.etag(), etag, scheduler.ErrPreconditionFailed)
	}
	s.delete(j)
	return nil
}

// etagIs reports whether the ETag of j's record is etag, without writing
// out the ETag of a record in compact form.
func (j *job) etagIs(etag string) bool {
	if w := j.whole(); w != nil {
		return w.ETag == etag
	}
	v, ok := etagBits(etag)
	return ok && v == j.rec.etag
}

// etag returns the ETag of j's record.
func (j *job) etag() string {
	if w := j.whole(); w != nil {
		return w.ETag
	}
	return etagText(j.rec.etag, new([16]byte))
}

// delete deletes j and its history.
func (s *Store) delete(j *job) {
	s.forget(j)
	delete(j.coll.jobs, j.name)
	j.coll.names = nil
	j.coll = nil // see job.coll
}

// ClaimDue implements [scheduler.Store]: ClaimDueBy with DueBy = now.
func (s *Store) ClaimDue(ctx context.Context, now time.Time, owner string, leaseUntil time.Time, limit int) ([]*scheduler.JobRecord, error) {
	return s.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: now, DueBy: now, Owner: owner, LeaseUntil: leaseUntil, Limit: limit})
}

// ClaimDueBy implements [scheduler.AheadClaimer].
func (s *Store) ClaimDueBy(ctx context.Context, c scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	if c.Limit < 1 {
		return nil, nil // as the SQL stores: before the other checks
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now, leaseUntil := c.Now, utc(c.LeaseUntil)
	if c.DueBy.Before(now) {
		return nil, fmt.Errorf("memory: claim: due horizon %v is before now %v", c.DueBy, now)
	}
	if !leaseUntil.After(c.DueBy) {
		return nil, fmt.Errorf("memory: claim: lease end %v is not after %v", leaseUntil, c.DueBy)
	}
	untilKey, owner := timeKey(leaseUntil), s.ownerID(c.Owner)
	var out []*scheduler.JobRecord
	// live are the jobs ready by c.DueBy whose leases end after now:
	// out of the indexes until the claim ends.
	var live []*job
	// What the compact records filled in from s.spare point to, up to
	// extraChunk records to an allocation rather than one each, in
	// freshExtras for jobs that have not run. (A record that RecordBatch
	// keeps whole gets its own, see ownExtra; an ETag string the caller
	// keeps keeps its chunk, at most 1 KiB.)
	var extras []recordExtra
	var fresh []freshExtra
	for nowKey, byKey := timeKey(now), timeKey(c.DueBy); len(out) < c.Limit; {
		j, ready, ok := s.next()
		if !ok || ready > byKey {
			break
		}
		m := j.ext()
		if m.owner != 0 && m.leaseUntil > nowKey {
			s.due.remove(j)
			s.leased.remove(j)
			live = append(live, j)
			continue
		}
		prev := s.owners[m.owner] // set only while a lease that expired is still in place
		var prevUntil time.Time
		if prev != "" {
			prevUntil = instant(m.leaseUntil)
		}
		m.owner, m.leaseUntil = owner, untilKey
		j.setVersion(j.version() + 1)
		s.reindex(j)
		var into *scheduler.JobRecord
		if n := len(s.spare); n > 0 {
			into, s.spare = s.spare[n-1], s.spare[:n-1]
		}
		var x extraSlots // empty: a new record, in one allocation with its own
		if into != nil && j.whole() == nil {
			n := min(c.Limit-len(out), len(s.spare)+1, extraChunk)
			// record writes a last execution instant only for a job
			// with ranPart, the flag chosen on here: a freshExtra has
			// no slot for one.
			if j.rec.flags&ranPart != 0 {
				if len(extras) == 0 {
					extras = make([]recordExtra, n)
				}
				x, extras = extras[0].slots(), extras[1:]
			} else {
				if len(fresh) == 0 {
					fresh = make([]freshExtra, n)
				}
				x, fresh = fresh[0].slots(), fresh[1:]
			}
		}
		r := j.readInto(into, x, true, c.Owner)
		r.PreviousLeaseOwner, r.PreviousLeaseUntil, r.Handle = prev, prevUntil, j
		if out == nil {
			out = make([]*scheduler.JobRecord, 0, min(c.Limit, s.due.len()+s.leased.len()))
		}
		out = append(out, r)
	}
	for _, j := range live {
		s.reindex(j)
	}
	if n := s.leased.len(); n > s.spareMax {
		s.spareMax = min(n, maxSpare)
	}
	return out, nil
}

// GiveBack implements [scheduler.AheadClaimer]: under the store's mutex,
// with no other wait, so it needs no bound of its own when ctx has no
// deadline.
func (s *Store) GiveBack(ctx context.Context, owner string, claims []*scheduler.JobRecord) []error {
	errs := make([]error, len(claims))
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range claims {
		j, ok := r.Handle.(*job) // set by ClaimDueBy
		if !ok || j.coll == nil || j.name != r.Name || j.coll.rec.Name != r.Collection {
			var err error
			if j, err = s.lookup(r.Collection, r.Name); err != nil {
				errs[i] = fmt.Errorf("memory: give back: %w", err)
				continue
			}
		}
		if created := j.created(); j.incarnation() != r.Incarnation || !created.Equal(r.Created) {
			errs[i] = fmt.Errorf("memory: give back: %w", scheduler.NewRecreatedErrorOf(r, created, j.incarnation()))
			continue
		}
		if held := s.leaseOwner(j); held != owner || owner == "" {
			errs[i] = fmt.Errorf("memory: give back job %q: lease held by %q, not %q: %w", r.ID(), held, owner, scheduler.ErrLeaseLost)
			continue
		}
		if until := j.more.leaseUntil; until != timeKey(utc(r.LeaseUntil)) && j.version() != r.Version {
			// owner claimed the job again once this claim's lease lapsed
			// (which changes both; a write changes only the version, an
			// extension only the lease's end): that claim is not this
			// one's to give back.
			errs[i] = fmt.Errorf("memory: give back job %q: %q claimed it again (lease until %v, not %v): %w",
				r.ID(), owner, instant(until), r.LeaseUntil, scheduler.ErrLeaseLost)
			continue
		}
		j.more.owner, j.more.leaseUntil = s.ownerID(r.PreviousLeaseOwner), timeKey(r.PreviousLeaseUntil)
		if r.PreviousLeaseOwner == "" {
			j.more.leaseUntil = 0
		}
		s.reindex(j)
	}
	return errs
}

// NextDue implements [scheduler.Store].
func (s *Store) NextDue(ctx context.Context) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, _, ok := s.next()
	if !ok {
		return time.Time{}, nil
	}
	if m := j.more; m != nil && m.leased != 0 {
		return instant(m.leaseUntil), nil
	}
	return j.dueAt(), nil
}

// ExtendLease implements [scheduler.Store].
func (s *Store) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.extendLease(collection, name, owner, until)
}

// ExtendLeases implements [scheduler.LeaseExtender]: it extends every
// lease under one acquisition of the lock. It returns nil when every
// lease was extended: a slice of errors is made only for a call with a
// failed job.
func (s *Store) ExtendLeases(ctx context.Context, owner string, until time.Time, jobs []scheduler.JobKey) []error {
	var errs []error
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range jobs {
		if err := s.extendLease(k.Collection, k.Name, owner, until); err != nil {
			if errs == nil {
				errs = make([]error, len(jobs))
			}
			errs[i] = err
		}
	}
	return errs
}

// extendLease moves the lease of job collection/name, which owner must
// hold, to until. s.mu is held.
func (s *Store) extendLease(collection, name, owner string, until time.Time) error {
	j, err := s.lookup(collection, name)
	if err != nil {
		return fmt.Errorf("memory: extend lease: %w", err)
	}
	if held := s.leaseOwner(j); held != owner || owner == "" {
		return fmt.Errorf("memory: extend lease of job %q: held by %q, not %q: %w", j.coll.rec.Name+"/"+j.name, held, owner, scheduler.ErrLeaseLost)
	}
	j.more.leaseUntil = timeKey(until)
	s.reindex(j)
	return nil
}

// Record implements [scheduler.Store].
func (s *Store) Record(ctx context.Context, owner string, r *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.record(owner, r, history, false, false)
}

// RecordBatch implements [scheduler.BatchRecorder]: it records every
// element under one acquisition of the lock, and keeps the definitions it
// records, and the records it keeps whole, rather than copies of them.
// It returns nil when every element was recorded: a slice of errors is
// made only for a batch with a failed element. An element with
// KeepDefinition gets the stored definition put back into its record.
func (s *Store) RecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) []error {
	var errs []error
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, b := range batch {
		if err := s.record(owner, b.Job, b.History, true, b.KeepDefinition); err != nil {
			if errs == nil {
				errs = make([]error, len(batch))
			}
			errs[i] = err
		}
	}
	return errs
}

// record does Record's work with s.mu held. keep stores r itself rather
// than a copy (RecordBatch); keepDef, which only RecordBatch sets, keeps
// the stored definition rather than r.Job.
func (s *Store) record(owner string, r *scheduler.JobRecord, history []scheduler.HistoryEntry, keep, keepDef bool) error {
	j, ok := r.Handle.(*job) // set by ClaimDue
	if !ok || j.coll == nil || j.name != r.Name || j.coll.rec.Name != r.Collection {
		var err error
		if j, err = s.lookup(r.Collection, r.Name); err != nil {
			return fmt.Errorf("memory: record: %w", err)
		}
	}
	if created := j.created(); j.incarnation() != r.Incarnation || !created.Equal(r.Created) {
		return fmt.Errorf("memory: record: %w", scheduler.NewRecreatedErrorOf(r, created, j.incarnation()))
	}
	if held := s.leaseOwner(j); held != owner || owner == "" {
		return fmt.Errorf("memory: record job %q: lease held by %q, not %q: %w", r.ID(), held, owner, scheduler.ErrLeaseLost)
	}
	if r.Version != j.version() {
		return fmt.Errorf("memory: record job %q: version %d, stored %d: %w", r.ID(), r.Version, j.version(), scheduler.ErrConflict)
	}
	if keepDef {
		r.Job = j.def()
	}
	if tags := j.tags(); !maps.Equal(r.Tags, tags) { // the stored tags stay
		if !keep {
			c := *r
			r = &c
		}
		r.Tags = maps.Clone(tags)
	}
	s.set(j, r, keep)
	if keep && j.whole() != r && len(s.spare) < max(s.spareMax, minSpare) {
		*r = scheduler.JobRecord{}
		s.spare = append(s.spare, r)
	}
	j.setVersion(j.version() + 1)
	j.more.owner, j.more.leaseUntil = 0, 0 // the lease made j.more
	s.appendHistory(j, history)
	s.reindex(j)
	return nil
}

// ListHistory implements [scheduler.Store].
func (s *Store) ListHistory(ctx context.Context, collection, name string, f scheduler.HistoryFilter) ([]scheduler.HistoryEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, err := s.lookup(collection, name)
	if err != nil {
		return nil, err
	}
	var out []scheduler.HistoryEntry
	skip := f.Skip
	hist := j.history()
	for i := len(hist) - 1; i >= 0; i-- {
		h := &hist[i].HistoryEntry
		if !f.Keeps(h) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if f.Top > 0 && len(out) >= f.Top {
			break
		}
		out = append(out, *h)
	}
	return out, nil
}

// pruneChunk is the number of jobs Prune deletes or trims between
// releases of the lock.
const pruneChunk = 1024

// Prune implements [scheduler.Store]. It finds what it deletes through the
// store's indexes: final jobs by their last write, jobs by their oldest
// history entry, and jobs with more than PerJob entries. A call whose
// PerJob differs from the previous call's counts every job's history once,
// to know which jobs are over the new limit; the Scheduler always passes
// the same. Other calls get in after every pruneChunk jobs.
func (s *Store) Prune(ctx context.Context, p scheduler.PruneRequest) (int, error) {
	s.permits.prune(p.LimitsBefore)
	s.mu.Lock()
	defer s.mu.Unlock()
	n, done := 0, 0
	pause := func() {
		if done++; done%pruneChunk == 0 {
			s.mu.Unlock()
			s.mu.Lock()
		}
	}
	if !p.FinalJobsBefore.IsZero() {
		cutoff := timeKey(p.FinalJobsBefore)
		for {
			j, updated, ok := s.finals.min()
			if !ok || updated >= cutoff {
				break
			}
			s.delete(j)
			n++
			pause()
		}
	}
	if !p.HistoryBefore.IsZero() {
		cutoff := timeKey(p.HistoryBefore)
		for {
			j, oldest, ok := s.aged.min()
			if !ok || oldest >= cutoff {
				break
			}
			m := j.more
			before := len(m.hist)
			m.hist = slices.DeleteFunc(m.hist, func(h histEntry) bool { return h.EndTime.Before(p.HistoryBefore) })
			n += before - len(m.hist)
			s.trimmed(j)
			if len(m.hist) > 0 { // by its oldest entry now, which does not end before p.HistoryBefore
				oldest := timeKey(m.hist[0].EndTime)
				for _, h := range m.hist[1:] {
					oldest = min(oldest, timeKey(h.EndTime))
				}
				s.aged.set(j, oldest)
			}
			pause()
		}
	}
	if p.PerJob != s.perJob {
		s.perJob = max(p.PerJob, 0)
		clear(s.over)
		if s.perJob > 0 {
			for _, c := range s.colls {
				for _, j := range c.jobs {
					if len(j.history()) > s.perJob {
						s.over[j] = struct{}{}
					}
				}
			}
		}
	}
	if s.perJob > 0 {
		over := make([]*job, 0, len(s.over))
		for j := range s.over {
			over = append(over, j)
		}
		for _, j := range over {
			if _, ok := s.over[j]; !ok {
				continue // deleted while the lock was released
			}
			m := j.more
			if len(m.hist) <= s.perJob {
				delete(s.over, j)
				continue
			}
			// The oldest entries go by slicing them off, without moving
			// the others: appends move them to a new array when this one
			// is full.
			cut := len(m.hist) - s.perJob
			clear(m.hist[:cut])
			m.hist = m.hist[cut:]
			n += cut
			s.trimmed(j)
			pause()
		}
	}
	return n, nil
}
