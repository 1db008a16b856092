package scheduler

import (
	"context"
	"sync"
	"time"
)

// policyTTL is how long the engine keeps a collection's default run
// policy before reading it again: a change to a collection's runPolicy
// reaches every instance within it (at once on the instance that made it).
const policyTTL = 5 * time.Second

// policyCache keeps the default run policies of collections (their
// properties' runPolicy) for the state machine. Workers read it without
// a lock.
type policyCache struct {
	m sync.Map // collection name -> *cachedPolicy
}

type cachedPolicy struct {
	p      *RunPolicy // nil: the collection has none
	limits []Limit    // the collection's limits
	read   time.Time
}

// noPolicy is the entry of a collection never read.
var noPolicy cachedPolicy

// get returns collection's default run policy at now, read through s's
// store when not known or older than policyTTL. When the store cannot
// answer, the policy read last is used (none, if it was never read), and
// the failure logged.
func (c *policyCache) get(s *Scheduler, collection string, now time.Time) *RunPolicy {
	return c.entry(s, collection, now).p
}

// limits returns collection's limits at now, read as get reads its run
// policy.
func (c *policyCache) limits(s *Scheduler, collection string, now time.Time) []Limit {
	return c.entry(s, collection, now).limits
}

// entry returns what c keeps of collection at now, as get says.
func (c *policyCache) entry(s *Scheduler, collection string, now time.Time) *cachedPolicy {
	last := &noPolicy
	if v, ok := c.m.Load(collection); ok {
		e := v.(*cachedPolicy)
		if now.Sub(e.read) < policyTTL {
			return e
		}
		last = e
	}
	col, err := s.store.GetCollection(context.Background(), collection)
	if err != nil {
		s.log.Warn("read the collection's run policy", "collection", collection, "err", err)
		return last
	}
	return c.set(col, now)
}

// set records the default run policy and limits of col, read at now, and
// returns the entry.
func (c *policyCache) set(col *CollectionRecord, now time.Time) *cachedPolicy {
	p := col.Definition.Properties
	e := &cachedPolicy{p.RunPolicy, p.Limits, now}
	c.m.Store(col.Name, e)
	return e
}
