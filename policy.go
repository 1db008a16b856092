package scheduler

import (
	"context"
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
type policyCache struct {
	m       sync.Map // collection name -> *cachedPolicy
	missing sync.Map // timingKey -> ETag of the job warned about
}

type cachedPolicy struct {
	p      *RunPolicy                // nil: the collection has none
	limits []Limit                   // the collection's limits
	cals   map[string]*CalendarEntry // the collection's calendars, not to be changed
	read   time.Time
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

// entry returns what the cache holds of collection at now, read through
// s's store when not known or older than policyTTL. When the store cannot
// answer, what was read last is used (nothing, if it was never read), and
// the failure logged.
func (c *policyCache) entry(s *Scheduler, collection string, now time.Time) *cachedPolicy {
	var last *cachedPolicy
	if v, ok := c.m.Load(collection); ok {
		e := v.(*cachedPolicy)
		if now.Sub(e.read) < policyTTL {
			return e
		}
		last = e
	}
	col, err := s.store.GetCollection(context.Background(), collection)
	if err != nil {
		s.log.Warn("read the collection's run policy and calendars", "collection", collection, "err", err)
		if last == nil {
			last = &noPolicy
		}
		return last
	}
	return c.set(col, now)
}

// refresh reads collection through s's store again at now, unless it was
// read at now already, and reports whether it did.
func (c *policyCache) refresh(s *Scheduler, collection string, now time.Time) bool {
	if v, ok := c.m.Load(collection); ok && !v.(*cachedPolicy).read.Before(now) {
		return false
	}
	col, err := s.store.GetCollection(context.Background(), collection)
	if err != nil {
		s.log.Warn("read the collection's calendars again", "collection", collection, "err", err)
		return false
	}
	c.set(col, now)
	return true
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
func (c *policyCache) set(col *CollectionRecord, now time.Time) *cachedPolicy {
	p := col.Definition.Properties
	e := &cachedPolicy{p.RunPolicy, p.Limits, col.Definition.Calendars, now, new(sync.Map)}
	if v, ok := c.m.Load(col.Name); ok {
		v.(*cachedPolicy).compiled.Range(func(name, v any) bool {
			if ce := e.cals[name.(string)]; ce != nil && ce.ETag == v.(*compiledCalendar).etag {
				e.compiled.Store(name, v)
			}
			return true
		})
	}
	c.m.Store(col.Name, e)
	return e
}
