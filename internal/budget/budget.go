// Package budget keeps budgets by key, each a token bucket: it holds up to
// its size and refills evenly over a window, and an action takes one from
// it, or waits in line for one. The REST API's request budget of each
// caller and the budgets of failed authentications that the REST API and
// the dashboard's sign-in share are budgets of this package.
package budget

import (
	"context"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/jobclock/scheduler/internal/lru"
)

// Budgets are the budgets of a kind of action, one per key, each holding
// up to Size and refilled evenly over a window. A key's budget is full
// when it is first used. At most a bound of keys are kept: the least
// recently used one's budget is dropped beyond it (it starts full again
// when the key comes back). Budgets are safe for concurrent use.
type Budgets[K comparable] struct {
	size float64 // what a budget holds
	rate float64 // added per second
	keys *lru.Cache[K, *bucket]
	line chan struct{} // a send is a place at the head of Wait's line
}

type bucket struct {
	mu     sync.Mutex
	tokens float64
	at     time.Time // when tokens was computed
}

// New returns budgets of size each (at least 1), refilled evenly over
// window (positive), keeping the budgets of at most maxKeys keys.
func New[K comparable](size int, window time.Duration, maxKeys int) *Budgets[K] {
	s := float64(max(size, 1))
	return &Budgets[K]{size: s, rate: s / window.Seconds(), keys: lru.New[K, *bucket](maxKeys, nil), line: make(chan struct{}, 1)}
}

// Size is what a budget holds when full.
func (b *Budgets[K]) Size() int { return int(b.size) }

// Take takes one from key's budget at now when the budget has at least
// one left. It returns whether it took one, what is left after it (whole
// units, rounded down), and, when it took none, how long until one is
// there again (more than zero).
func (b *Budgets[K]) Take(key K, now time.Time) (ok bool, left int64, wait time.Duration) {
	bk := b.bucket(key)
	bk.mu.Lock()
	b.refill(bk, now)
	ok = bk.tokens >= 1
	if ok {
		bk.tokens--
	}
	tokens := bk.tokens
	bk.mu.Unlock()
	if !ok {
		wait = max(time.Duration(math.Ceil((1-tokens)/b.rate*float64(time.Second))), 1)
	}
	return ok, int64(math.Floor(tokens)), wait
}

// Has reports whether key's budget has at least one left at now, taking
// nothing, and when it has none, how long until one is there again (more
// than zero).
func (b *Budgets[K]) Has(key K, now time.Time) (ok bool, wait time.Duration) {
	bk := b.bucket(key)
	bk.mu.Lock()
	b.refill(bk, now)
	tokens := bk.tokens
	bk.mu.Unlock()
	if tokens >= 1 {
		return true, 0
	}
	return false, max(time.Duration(math.Ceil((1-tokens)/b.rate*float64(time.Second))), 1)
}

// Charge takes one from key's budget at now whatever is left, down to
// minus its size: for an action found to count after it was done without
// taking first (see Has). What it takes below zero is refilled before
// the budget has one again.
func (b *Budgets[K]) Charge(key K, now time.Time) {
	bk := b.bucket(key)
	bk.mu.Lock()
	b.refill(bk, now)
	bk.tokens = max(-b.size, bk.tokens-1)
	bk.mu.Unlock()
}

// Wait takes one from key's budget as Take does, and when there is none
// waits for one, in one line with every other caller of Wait on b (of any
// key), in order of arrival, up to limit. It gives up at once when the
// line is free and no one will be there within limit, and gives up too
// when ctx ends; it reports whether it took one.
func (b *Budgets[K]) Wait(ctx context.Context, key K, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	timeout := time.NewTimer(limit)
	defer timeout.Stop()
	select {
	case b.line <- struct{}{}:
	case <-timeout.C:
		return false
	case <-ctx.Done():
		return false
	}
	defer func() { <-b.line }()
	for {
		ok, _, wait := b.Take(key, time.Now())
		if ok {
			return true
		}
		if time.Now().Add(wait).After(deadline) {
			return false
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
	}
}

// Give puts one back into key's budget at now (up to its size): for an
// action taken from the budget that, as it turned out, does not count.
func (b *Budgets[K]) Give(key K, now time.Time) {
	bk := b.bucket(key)
	bk.mu.Lock()
	b.refill(bk, now)
	bk.tokens = min(b.size, bk.tokens+1)
	bk.mu.Unlock()
}

// bucket returns key's bucket, adding a new one when there is none. A
// bucket that is there is found without allocating (lru.Cache.GetOrCreate
// allocates the release function of its entry on every call).
func (b *Budgets[K]) bucket(key K) *bucket {
	if bk, ok := b.keys.Get(key); ok {
		return bk
	}
	bk, _ := b.keys.Add(key, new(bucket))
	return bk
}

// refill brings bk's tokens to now; bk.mu is held.
func (b *Budgets[K]) refill(bk *bucket, now time.Time) {
	switch {
	case bk.at.IsZero():
		bk.tokens, bk.at = b.size, now
	case now.After(bk.at):
		bk.tokens, bk.at = min(b.size, bk.tokens+now.Sub(bk.at).Seconds()*b.rate), now
	}
}

// InWords says how long a client is asked to wait, for people: whole
// minutes from a minute on ("8 minutes" for 7m30s), else whole seconds
// ("45 seconds"), rounded up, as RetryAfter rounds.
func InWords(d time.Duration) string {
	secs := max(int64(math.Ceil(d.Seconds())), 1)
	n, unit := secs, "second"
	if secs >= 60 {
		n, unit = (secs+59)/60, "minute"
	}
	if n != 1 {
		unit += "s"
	}
	return strconv.FormatInt(n, 10) + " " + unit
}

// RetryAfter returns the value of a Retry-After header that asks a client
// to wait d: whole seconds, rounded up, at least 1.
func RetryAfter(d time.Duration) string {
	return strconv.FormatInt(max(int64(math.Ceil(d.Seconds())), 1), 10)
}
