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
// properties' runPolicy) for the state machine.
type policyCache struct {
	mu sync.Mutex
	m  map[string]cachedPolicy
}

type cachedPolicy struct {
	p    *RunPolicy // nil: the collection has none
	read time.Time
}

// get returns collection's default run policy, read through s's store
// when not known or older than policyTTL. When the store cannot answer,
// the policy read last is used (none, if it was never read), and the
// failure logged.
func (c *policyCache) get(s *Scheduler, collection string) *RunPolicy {
	now := time.Now()
	c.mu.Lock()
	e, ok := c.m[collection]
	c.mu.Unlock()
	if ok && now.Sub(e.read) < policyTTL {
		return e.p
	}
	col, err := s.store.GetCollection(context.Background(), collection)
	if err != nil {
		s.log.Warn("read the collection's run policy", "collection", collection, "err", err)
		return e.p
	}
	c.set(col, now)
	return col.Definition.Properties.RunPolicy
}

// set records the default run policy of col, read at now.
func (c *policyCache) set(col *CollectionRecord, now time.Time) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedTimings {
		c.m = make(map[string]cachedPolicy)
	}
	c.m[col.Name] = cachedPolicy{col.Definition.Properties.RunPolicy, now}
	c.mu.Unlock()
}
