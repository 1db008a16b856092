package scheduler

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// policyTTL is how long the engine keeps a collection's default run
// policy and its exclusion calendars before reading them again: a change
// to a collection's runPolicy or to one of its calendars reaches every
// instance within it (at once on the instance that made it).
const policyTTL = 5 * time.Second

// policyCache keeps what the state machine reads of collections: their
// default run policies (their properties' runPolicy) and their exclusion
// calendars, compiled. Workers read it without a lock.
//
// A collection is read by one caller at a time: the first that finds its
// entry missing or stale reads it, the others that come meanwhile share
// that read (see policyRead) rather than sending one each, so that a
// burst of attempts of one collection, or the expiry of its entry under
// them, costs the store one read and no extra connection. Who waits for
// the read and who does not:
//   - entry (and get, calendar, limits through it) with a stale entry
//     uses it until the read in flight replaces it: it is at most one
//     read older than it would have been;
//   - entry with no entry waits for the read in flight and takes its
//     result; when that read fails it takes the failure's (noPolicy:
//     limits are then not known, and no attempt runs unlimited), and the
//     next caller reads again;
//   - refresh, which must see what the store holds now, shares only a
//     read begun at its now or later; an older read in flight it waits
//     out, then reads (or shares the read begun meanwhile), whether the
//     older one succeeded or failed, unless it hung past its bound. It
//     has its caller take the entry again whenever the entry is one read
//     at its now or later, whether or not that is the one the caller
//     took.
//
// A read ends a third of LeaseDuration after it began (see policyRead).
// When the store ignores that and does not answer, the first caller that
// comes after that bound begins a read in its place; the read replaced
// sets nothing when it ends at last.
type policyCache struct {
	m       sync.Map // collection name -> *cachedPolicy
	reads   sync.Map // collection name -> *policyRead in flight
	missing sync.Map // timingKey -> ETag of the job warned about
}

type cachedPolicy struct {
	p      *RunPolicy                // nil: the collection has none
	limits []Limit                   // the collection's limits
	cals   map[string]*CalendarEntry // the collection's calendars, not to be changed
	state  CollectionState           // the collection's state; empty in noPolicy
	read   time.Time
	// version is the collection's Version read (see [CollectionRecord]).
	version int64
	// compiled holds calendars of cals compiled, by name
	// (*compiledCalendar); those whose ETag is unchanged are carried
	// into the entry of the collection read again, the others dropped.
	compiled *sync.Map
}

// noPolicy is the entry of a collection never read that the store could
// not give.
var noPolicy cachedPolicy

// compiledCalendar is a calendar compiled, with the ETag of the version
// compiled.
type compiledCalendar struct {
	etag string
	excl *recurrence.Exclusions
}

// limits returns collection's limits at now, read as get reads its run
// policy, and whether they are known: not when the collection was never
// read and the store cannot answer, so that no attempt runs unlimited
// because of a store that failed once.
func (c *policyCache) limits(s *Scheduler, collection string, now time.Time) (limits []Limit, known bool) {
	e := c.entry(s, collection, now)
	return e.limits, e != &noPolicy
}

// running reports whether the jobs of collection come due at now, as far
// as the cache knows (see entry): whether it is Enabled, or was never
// read and the store cannot give it.
func (c *policyCache) running(s *Scheduler, collection string, now time.Time) bool {
	st := c.entry(s, collection, now).state
	return st == "" || st == CollectionEnabled
}

// entry returns what the cache holds of collection at now, read through
// s's store when not known or older than policyTTL. When the store cannot
// answer, what was read last is used (nothing, if it was never read), and
// the failure logged. A stale entry is used as it is while another
// caller reads the collection; a missing one waits for that read (see
// policyCache).
func (c *policyCache) entry(s *Scheduler, collection string, now time.Time) *cachedPolicy {
	var last *cachedPolicy
	if v, ok := c.m.Load(collection); ok {
		e := v.(*cachedPolicy)
		if now.Sub(e.read) < policyTTL {
			return e
		}
		last = e
	}
	rd, mine := c.begin(s, collection, now)
	if !mine {
		if last != nil {
			return last
		}
		if e := rd.wait(); e != nil {
			return e
		}
		return &noPolicy
	}
	if e := c.read(s, rd, collection, "read the collection's run policy and calendars"); e != nil {
		return e
	}
	if last == nil {
		last = &noPolicy
	}
	return last
}

// refresh makes the entry of collection one read at now or later,
// reading it through s's store unless it is one already, and reports
// whether it is. Its caller found what it took from the cache at now out
// of step with the store, and takes it again when refresh reports true.
// That holds for an entry read at now or later that refresh finds as it
// is, too: it need not be the one the caller took (a stale entry is
// handed out while a read is in flight, and that read may end before
// refresh is called); taking it again costs a lookup, not a read. A read
// of collection in flight begun at now or later stands for refresh's
// own (when it fails, refresh reports false); one begun earlier may not
// see what refresh is asked to see, and refresh reads after it, whether
// it succeeded or failed, unless it hung past its bound (then refresh
// reports false, as its caller has waited as long as a read may take).
func (c *policyCache) refresh(s *Scheduler, collection string, now time.Time) bool {
	for {
		if v, ok := c.m.Load(collection); ok && !v.(*cachedPolicy).read.Before(now) {
			return true
		}
		rd, mine := c.begin(s, collection, now)
		if mine {
			return c.read(s, rd, collection, "read the collection's calendars again") != nil
		}
		e := rd.wait()
		if !rd.at.Before(now) {
			return e != nil // nil: the store failed, as it would for this caller
		}
		if e == nil && !rd.ended() {
			// The older read hung past its bound: the caller has waited
			// as long as a read may take, and waits no longer.
			return false
		}
		// The older read ended, well or not: read after it.
	}
}

// policyRead is one read of a collection through the store, in flight:
// its caller (see policyCache.begin) reads, the others wait for done.
// The read ends with ctx, a third of Config.LeaseDuration after it
// begins, as a call of the lease keeper does (see
// Scheduler.extendContext): a worker that waits for it holds a claim
// whose attempt must start before its lease runs short, and a store that
// does not answer would otherwise hold up every worker of the collection
// for good. A waiter gives up at the same instant even if the store
// ignores ctx, and a caller that comes after it begins another read (see
// begin).
type policyRead struct {
	at     time.Time // the now the entry read is stamped with
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when e is set
	e      *cachedPolicy // nil: the read failed
}

// begin returns the read of collection in flight, and whether it is the
// caller's to do: a new one, stamped now, when none is, or when the one
// in flight hung past its bound (a store that ignores ctx); the new one
// replaces it, so that a collection never read is not left unread for
// good after a read the store never answers.
func (c *policyCache) begin(s *Scheduler, collection string, now time.Time) (rd *policyRead, mine bool) {
	for {
		v, ok := c.reads.Load(collection)
		if ok && v.(*policyRead).ctx.Err() == nil {
			return v.(*policyRead), false
		}
		rd = &policyRead{at: now, done: make(chan struct{})}
		rd.ctx, rd.cancel = context.WithTimeout(context.Background(), s.cfg.LeaseDuration/3)
		if ok {
			mine = c.reads.CompareAndSwap(collection, v, rd)
		} else {
			_, loaded := c.reads.LoadOrStore(collection, rd)
			mine = !loaded
		}
		if mine {
			return rd, true
		}
		rd.cancel()
	}
}

// read does rd, the caller's read of collection, and returns the entry
// it sets, nil when the store failed (logged as what failed) or answered
// only after rd was replaced (see begin). The waiters are released either
// way, and the next caller reads again after a failure.
func (c *policyCache) read(s *Scheduler, rd *policyRead, collection, what string) *cachedPolicy {
	// In this order: a caller that comes after the waiters are released
	// finds the entry set or reads again, and a waiter finds done closed
	// before ctx.
	defer rd.cancel()
	defer close(rd.done)
	defer c.reads.CompareAndDelete(collection, rd)
	col, err := s.store.GetCollection(rd.ctx, collection)
	if v, _ := c.reads.Load(collection); err == nil && v != rd {
		// Replaced past its bound (see begin): what rd read may be older
		// than what the read that replaced it sets.
		err = errLateRead
	}
	if err != nil {
		s.log.Warn(what, "collection", collection, "err", err)
		return nil
	}
	rd.e = c.set(col, rd.at)
	return rd.e
}

// errLateRead is what a read of a collection that the store answered
// past its bound, once another read had replaced it, is taken for.
var errLateRead = errors.New("the store answered past the read's bound, after another read had begun")

// wait returns the entry that rd set, nil when it failed or did not end
// in time.
func (rd *policyRead) wait() *cachedPolicy {
	select {
	case <-rd.done:
		return rd.e
	case <-rd.ctx.Done():
		if rd.ended() {
			return rd.e
		}
		return nil
	}
}

// ended reports whether rd ended, well or not.
func (rd *policyRead) ended() bool {
	select {
	case <-rd.done:
		return true
	default:
		return false
	}
}

// get returns collection's default run policy at now (see entry).
func (c *policyCache) get(s *Scheduler, collection string, now time.Time) *RunPolicy {
	return c.entry(s, collection, now).p
}

// calendar returns the calendar that r's job names, as r's collection
// holds it at now, compiled (see entry); nil when the collection has no
// such calendar. That is logged, once for each version of the job: the
// job's occurrences are then not excluded (DeleteCalendar never leaves a
// job naming a deleted calendar; a store written past the Scheduler can).
func (c *policyCache) calendar(s *Scheduler, r *JobRecord, name string, now time.Time) *recurrence.Exclusions {
	e := c.entry(s, r.Collection, now).cals[name]
	if e == nil {
		if v, ok := c.missing.Load(timingKey{r.Collection, r.Name}); !ok || v.(string) != r.ETag {
			key := timingKey{strings.Clone(r.Collection), strings.Clone(r.Name)} // see timingCache.get
			c.missing.Store(key, strings.Clone(r.ETag))
			s.log.Warn("the job names a calendar its collection does not have: its occurrences are not excluded",
				"collection", r.Collection, "job", r.Name, "calendar", name)
		}
		return nil
	}
	return c.compile(s, r.Collection, name, e)
}

// compile returns the compiled form of e, the calendar name of
// collection: the one compiled before while its ETag is the same. A
// calendar that no longer compiles (stored by an older version) excludes
// nothing, which is logged once for each version of it.
func (c *policyCache) compile(s *Scheduler, collection, name string, e *CalendarEntry) *recurrence.Exclusions {
	var held *sync.Map
	if v, ok := c.m.Load(collection); ok {
		held = v.(*cachedPolicy).compiled
		if v, ok := held.Load(name); ok && v.(*compiledCalendar).etag == e.ETag {
			return v.(*compiledCalendar).excl
		}
	}
	excl, err := e.Calendar.CompileStored()
	if err != nil {
		s.log.Warn("the calendar does not compile: it excludes nothing", "collection", collection, "calendar", name, "err", err)
		excl, _ = recurrence.CompileExclusions(nil, nil, nil, nil)
	}
	if held != nil {
		held.Store(name, &compiledCalendar{e.ETag, excl})
	}
	return excl
}

// set records the default run policy, the limits and the calendars of col,
// read at now, and returns the entry. The calendars compiled before whose
// ETag is unchanged stay compiled; those col no longer has, or has in
// another version, are dropped.
//
// An entry set after now of a higher Version than col's is kept, and
// returned: col was read before it, by a read that began before a write
// through this instance set it. (A collection deleted and created again
// starts its Versions again: the entry kept goes stale as any other, and
// a read begun after it replaces it.)
func (c *policyCache) set(col *CollectionRecord, now time.Time) *cachedPolicy {
	p := col.Definition.Properties
	for {
		e := &cachedPolicy{p.RunPolicy, p.Limits, col.Definition.Calendars, col.Definition.State(), now, col.Version, new(sync.Map)}
		v, ok := c.m.Load(col.Name)
		if !ok {
			if _, loaded := c.m.LoadOrStore(col.Name, e); !loaded {
				return e
			}
			continue
		}
		held := v.(*cachedPolicy)
		if held.version > col.Version && now.Before(held.read) {
			return held
		}
		held.compiled.Range(func(name, v any) bool {
			if ce := e.cals[name.(string)]; ce != nil && ce.ETag == v.(*compiledCalendar).etag {
				e.compiled.Store(name, v)
			}
			return true
		})
		if c.m.CompareAndSwap(col.Name, v, e) {
			return e
		}
	}
}
