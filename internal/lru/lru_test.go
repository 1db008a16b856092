package lru_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/internal/lru"
)

// recorder collects onEvict calls.
type recorder struct {
	mu   sync.Mutex
	keys []string
}

func (r *recorder) onEvict(k string, v int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys = append(r.keys, fmt.Sprintf("%s=%d", k, v))
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := r.keys
	r.keys = nil
	return k
}

func TestEvictsLeastRecentlyUsed(t *testing.T) {
	var rec recorder
	c := lru.New(2, rec.onEvict)
	c.Add("a", 1)
	c.Add("b", 2)
	if v, ok := c.Get("a"); !ok || v != 1 { // a is now the most recent
		t.Fatalf(`Get("a") = %d, %v; want 1, true`, v, ok)
	}
	c.Add("c", 3) // evicts b
	if diff := cmp.Diff([]string{"b=2"}, rec.take()); diff != "" {
		t.Errorf("evicted (-want +got):\n%s", diff)
	}
	if _, ok := c.Get("b"); ok {
		t.Error(`Get("b") found an evicted entry`)
	}
	for k, want := range map[string]int{"a": 1, "c": 3} {
		if v, ok := c.Get(k); !ok || v != want {
			t.Errorf("Get(%q) = %d, %v; want %d, true", k, v, ok, want)
		}
	}
	if n := c.Len(); n != 2 {
		t.Errorf("Len = %d, want 2", n)
	}
}

func TestAddKeepsTheCachedValue(t *testing.T) {
	var rec recorder
	c := lru.New(2, rec.onEvict)
	if v, added := c.Add("a", 1); !added || v != 1 {
		t.Fatalf(`first Add("a", 1) = %d, %v; want 1, true`, v, added)
	}
	if v, added := c.Add("a", 9); added || v != 1 {
		t.Errorf(`second Add("a", 9) = %d, %v; want the cached 1, false`, v, added)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("onEvict called for %v; a value that was not stored is the caller's", got)
	}
}

func TestSizeAtLeastOne(t *testing.T) {
	for _, size := range []int{0, -3} {
		c := lru.New[string, int](size, nil)
		c.Add("a", 1)
		c.Add("b", 2)
		if n := c.Len(); n != 1 {
			t.Errorf("New(%d): Len after two Adds = %d, want 1", size, n)
		}
	}
}

func TestGetOrCreate(t *testing.T) {
	c := lru.New[string, int](4, nil)
	calls := 0
	create := func() (int, error) { calls++; return calls * 10, nil }
	for range 3 {
		if v, err := c.GetOrCreate("a", create); err != nil || v != 10 {
			t.Fatalf(`GetOrCreate("a") = %d, %v; want 10, nil`, v, err)
		}
	}
	if calls != 1 {
		t.Errorf("create called %d times for one key, want 1", calls)
	}
	boom := errors.New("boom")
	if _, err := c.GetOrCreate("b", func() (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Errorf("GetOrCreate with a failing create = %v, want boom", err)
	}
	if _, ok := c.Get("b"); ok {
		t.Error("a failed create stored a value")
	}
}

// TestHeldEntrySurvivesEviction is the guarantee the Service Bus executor
// relies on: a client evicted while a send uses it is closed only after
// the send releases it.
func TestHeldEntrySurvivesEviction(t *testing.T) {
	var rec recorder
	c := lru.New(1, rec.onEvict)
	v, release, err := c.Acquire("a", func() (int, error) { return 1, nil })
	if err != nil || v != 1 {
		t.Fatalf(`Acquire("a") = %d, %v`, v, err)
	}
	c.Add("b", 2) // evicts a while it is held
	if _, ok := c.Get("a"); ok {
		t.Error("a held entry stayed in the cache beyond its size")
	}
	if n := c.Len(); n != 1 {
		t.Errorf("Len = %d, want 1", n)
	}
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("onEvict called for %v while a was held", got)
	}
	release()
	if diff := cmp.Diff([]string{"a=1"}, rec.take()); diff != "" {
		t.Errorf("evicted after release (-want +got):\n%s", diff)
	}
	release() // a second call does nothing
	if got := rec.take(); len(got) != 0 {
		t.Errorf("a second release called onEvict again: %v", got)
	}

	// An entry acquired twice is released by the last holder.
	_, r1, _ := c.Acquire("c", func() (int, error) { return 3, nil }) // evicts b
	_, r2, _ := c.Acquire("c", func() (int, error) { t.Error("create called for a cached key"); return 0, nil })
	if diff := cmp.Diff([]string{"b=2"}, rec.take()); diff != "" {
		t.Errorf("evicted (-want +got):\n%s", diff)
	}
	c.Clear()
	r1()
	if got := rec.take(); len(got) != 0 {
		t.Errorf("onEvict called for %v with one holder left", got)
	}
	r2()
	if diff := cmp.Diff([]string{"c=3"}, rec.take()); diff != "" {
		t.Errorf("evicted after the last release (-want +got):\n%s", diff)
	}
}

func TestReleasedEntryStaysCached(t *testing.T) {
	var rec recorder
	c := lru.New(2, rec.onEvict)
	_, release, _ := c.Acquire("a", func() (int, error) { return 1, nil })
	release()
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Errorf(`Get("a") after release = %d, %v; want 1, true`, v, ok)
	}
	if got := rec.take(); len(got) != 0 {
		t.Errorf("releasing a cached entry called onEvict for %v", got)
	}
}

func TestClear(t *testing.T) {
	var rec recorder
	c := lru.New(3, rec.onEvict)
	c.Add("a", 1)
	c.Add("b", 2)
	c.Clear()
	got := rec.take()
	if diff := cmp.Diff([]string{"b=2", "a=1"}, got); diff != "" {
		t.Errorf("Clear evicted (-want +got):\n%s", diff)
	}
	if n := c.Len(); n != 0 {
		t.Errorf("Len after Clear = %d", n)
	}
	c.Add("a", 5) // usable afterwards
	if v, ok := c.Get("a"); !ok || v != 5 {
		t.Errorf(`Get("a") after Clear and Add = %d, %v`, v, ok)
	}
}

// TestOnEvictOutsideTheLock checks that onEvict may use the cache.
func TestOnEvictOutsideTheLock(t *testing.T) {
	var c *lru.Cache[string, int]
	lens := 0
	c = lru.New(1, func(string, int) { lens = c.Len() })
	c.Add("a", 1)
	c.Add("b", 2) // would deadlock if onEvict ran under the lock
	if lens != 1 {
		t.Errorf("Len seen from onEvict = %d, want 1", lens)
	}
}

// TestConcurrentUse hammers a small cache from many goroutines: every value
// made is evicted exactly once in the end, and never while it is held.
func TestConcurrentUse(t *testing.T) {
	type value struct {
		id      int
		held    atomic.Int32
		evicted atomic.Int32
	}
	var made, bad atomic.Int32
	var mu sync.Mutex
	var all []*value
	c := lru.New(4, func(_ int, v *value) {
		if v.held.Load() != 0 {
			bad.Add(1)
		}
		v.evicted.Add(1)
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 2000 {
				key := r.IntN(12)
				switch r.IntN(3) {
				case 0:
					c.Get(key)
				default:
					v, release, err := c.Acquire(key, func() (*value, error) {
						v := &value{id: int(made.Add(1))}
						mu.Lock()
						all = append(all, v)
						mu.Unlock()
						return v, nil
					})
					if err != nil {
						t.Error(err)
						return
					}
					v.held.Add(1)
					runtime.Gosched() // let others evict it meanwhile, if they could
					v.held.Add(-1)
					release()
				}
			}
		})
	}
	wg.Wait()
	c.Clear()
	if n := bad.Load(); n != 0 {
		t.Errorf("%d values were evicted while held", n)
	}
	for _, v := range all {
		if n := v.evicted.Load(); n != 1 {
			t.Errorf("value %d evicted %d times, want 1", v.id, n)
		}
	}
	if len(all) <= 12 {
		t.Errorf("only %d values made for 12 keys in a cache of 4: eviction never happened", len(all))
	}
}
