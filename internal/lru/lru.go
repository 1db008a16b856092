// Package lru is a bounded cache that drops its least recently used entry
// when a new one does not fit. The executors keep their clients in it (one
// per account, key or certificate) and the REST API its certificate
// descriptions.
//
// An entry can be held while it is in use ([Cache.Acquire]): a held entry
// that is evicted leaves the cache at once, so the bound holds, but its
// eviction callback runs only when the last holder releases it. A client
// is therefore never closed under a request that is still using it.
package lru

import (
	"container/list"
	"sync"
)

// Cache maps keys to values and holds at most its size of them. It is safe
// for concurrent use. Create it with New.
type Cache[K comparable, V any] struct {
	size    int
	onEvict func(K, V)

	mu sync.Mutex
	ll list.List // of *entry[K, V], most recently used first
	m  map[K]*list.Element
}

type entry[K comparable, V any] struct {
	key   K
	value V
	refs  int  // holders (Acquire calls not yet released)
	gone  bool // no longer in the cache
	ended bool // onEvict has been called (or is due)
}

// New returns a cache of at most size entries (at least 1). onEvict, when
// not nil, is called once for each value that leaves the cache (evicted by
// a newer entry, or removed by Clear), after the cache's lock is released
// and after the last holder of the entry has released it. onEvict must not
// block for long: it runs in the goroutine that caused the eviction.
func New[K comparable, V any](size int, onEvict func(key K, value V)) *Cache[K, V] {
	return &Cache[K, V]{size: max(size, 1), onEvict: onEvict, m: make(map[K]*list.Element)}
}

// Get returns the value for key and marks it most recently used.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.ll.MoveToFront(el)
	return el.Value.(*entry[K, V]).value, true
}

// Add stores value under key unless the cache has a value for key already,
// and returns the value now cached and whether it is the one given. When
// it is not, the given value was not stored (and onEvict is not called for
// it): the caller disposes of it. Adding may evict the least recently used
// entry.
func (c *Cache[K, V]) Add(key K, value V) (V, bool) {
	c.mu.Lock()
	if el, ok := c.m[key]; ok {
		c.ll.MoveToFront(el)
		v := el.Value.(*entry[K, V]).value
		c.mu.Unlock()
		return v, false
	}
	evicted := c.insert(&entry[K, V]{key: key, value: value})
	c.mu.Unlock()
	c.evict(evicted)
	return value, true
}

// GetOrCreate returns the value for key, calling create to make it when
// the cache has none. create runs with the cache locked, so that one value
// is made per key: it must be quick (no I/O) and must not use the cache.
// An error from create is returned and nothing is stored.
func (c *Cache[K, V]) GetOrCreate(key K, create func() (V, error)) (V, error) {
	v, release, err := c.Acquire(key, create)
	if err == nil {
		release()
	}
	return v, err
}

// Acquire is GetOrCreate that also holds the entry until release is
// called: if the entry is evicted meanwhile, onEvict waits for the release.
// release must be called exactly once; later calls do nothing.
func (c *Cache[K, V]) Acquire(key K, create func() (V, error)) (value V, release func(), err error) {
	c.mu.Lock()
	var e *entry[K, V]
	var evicted []*entry[K, V]
	if el, ok := c.m[key]; ok {
		c.ll.MoveToFront(el)
		e = el.Value.(*entry[K, V])
	} else {
		v, err := create()
		if err != nil {
			c.mu.Unlock()
			var zero V
			return zero, func() {}, err
		}
		e = &entry[K, V]{key: key, value: v}
		evicted = c.insert(e)
	}
	e.refs++
	c.mu.Unlock()
	c.evict(evicted)
	var once sync.Once
	return e.value, func() { once.Do(func() { c.release(e) }) }, nil
}

func (c *Cache[K, V]) release(e *entry[K, V]) {
	c.mu.Lock()
	e.refs--
	due := e.gone && e.refs == 0 && !e.ended
	if due {
		e.ended = true
	}
	c.mu.Unlock()
	if due && c.onEvict != nil {
		c.onEvict(e.key, e.value)
	}
}

// Len reports the number of entries in the cache (held entries that were
// evicted are not counted).
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// Clear removes every entry. onEvict is called for each, at once for those
// not held and at their release for the others.
func (c *Cache[K, V]) Clear() {
	c.mu.Lock()
	var removed []*entry[K, V]
	for el := c.ll.Front(); el != nil; el = el.Next() {
		removed = append(removed, c.drop(el))
	}
	c.ll.Init()
	clear(c.m)
	c.mu.Unlock()
	c.evict(removed)
}

// insert puts e at the front and removes entries beyond the size; it
// returns those whose onEvict is due now. c.mu is held.
func (c *Cache[K, V]) insert(e *entry[K, V]) []*entry[K, V] {
	c.m[e.key] = c.ll.PushFront(e)
	var due []*entry[K, V]
	for c.ll.Len() > c.size {
		el := c.ll.Back()
		c.ll.Remove(el)
		delete(c.m, el.Value.(*entry[K, V]).key)
		if d := c.drop(el); d != nil {
			due = append(due, d)
		}
	}
	return due
}

// drop marks the entry of el as gone and returns it when its onEvict is
// due now (nobody holds it), nil otherwise. c.mu is held.
func (c *Cache[K, V]) drop(el *list.Element) *entry[K, V] {
	e := el.Value.(*entry[K, V])
	e.gone = true
	if e.refs > 0 {
		return nil
	}
	e.ended = true
	return e
}

// evict calls onEvict for entries that left the cache; c.mu is not held.
func (c *Cache[K, V]) evict(es []*entry[K, V]) {
	if c.onEvict == nil {
		return
	}
	for _, e := range es {
		if e != nil {
			c.onEvict(e.key, e.value)
		}
	}
}
