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
	p    *RunPolicy // nil: the collection has none
	read time.Time
}

// get returns collection's default run policy at now, read through s's
// store when not known or older than policyTTL. When the store cannot
// answer, the policy read last is used (none, if it was never read), and
// the failure logged.
func (c *policyCache) get(s *Scheduler, collection string, now time.Time) *RunPolicy {
	var last *RunPolicy
	if v, ok := c.m.Load(collection); ok {
		e := v.(*cachedPolicy)
		if now.Sub(e.read) < policyTTL {
			return e.p
		}
		last = e.p
	}
	col, err := s.store.GetCollection(context.Background(), collection)
	if err != nil {
		s.log.Warn("read the collection's run policy", "collection", collection, "err", err)
		return last
	}
	c.set(col, now)
	return col.Definition.Properties.RunPolicy
}

// set records the default run policy of col, read at now.
func (c *policyCache) set(col *CollectionRecord, now time.Time) {
	c.m.Store(col.Name, &cachedPolicy{col.Definition.Properties.RunPolicy, now})
}
