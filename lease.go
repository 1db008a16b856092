package scheduler

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// leaseKeeper extends the leases of the jobs whose attempts are running:
// one timer for all of them, armed only while there are some, rather than
// one per attempt. A worker's attempts hold their leases in the worker's
// own slot, so that attempts on different workers share no lock; other
// attempts (and outcomes being recorded again) in held.
type leaseKeeper struct {
	mu    sync.Mutex
	held  map[*JobRecord]heldLease // by the attempt's record
	slots []*leaseSlot             // the workers'
	armed atomic.Bool              // the timer runs or will run extendLeases
}

// leaseSlot is the lease of the attempt that a worker runs, if any.
type leaseSlot struct {
	mu sync.Mutex
	r  *JobRecord // the attempt's record (compared, not read); nil: none
	heldLease
}

// addSlot registers and returns a worker's slot; removeSlot undoes it.
func (k *leaseKeeper) addSlot() *leaseSlot {
	sl := new(leaseSlot)
	k.mu.Lock()
	k.slots = append(k.slots, sl)
	k.mu.Unlock()
	return sl
}

func (k *leaseKeeper) removeSlot(sl *leaseSlot) {
	k.mu.Lock()
	if i := slices.Index(k.slots, sl); i >= 0 {
		k.slots = slices.Delete(k.slots, i, i+1)
	}
	k.mu.Unlock()
}

// holds reports whether the lease on job collection/name held for record
// r is still held. k.mu is held.
func (k *leaseKeeper) holds(r *JobRecord, collection, name string) bool {
	if h, ok := k.held[r]; ok && h.collection == collection && h.name == name {
		return true
	}
	for _, sl := range k.slots {
		sl.mu.Lock()
		ok := sl.r == r && sl.collection == collection && sl.name == name
		sl.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// active reports whether any lease is held. k.mu is held.
func (k *leaseKeeper) active() bool {
	if len(k.held) > 0 {
		return true
	}
	for _, sl := range k.slots {
		sl.mu.Lock()
		ok := sl.r != nil
		sl.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// heldLease is a lease that leaseKeeper extends. It names the job itself:
// once its attempt ended, the record may be the store's again (see
// [BatchRecorder]), so an extension under way must not read it.
type heldLease struct {
	at               time.Time // when to extend it
	collection, name string
	permits          *heldPermits // the attempt's permits (see Limiter); nil: none
}

// holdLease keeps the lease on r from start, when its attempt starts,
// until dropLease: it is extended about every third of
// Config.LeaseDuration, also past the attempt's timeout when an executor
// ignores its context, and so are the permits of the collection's limits
// permits (none when nil). slot is the worker's that runs the
// attempt, nil when none does.
func (s *Scheduler) holdLease(r *JobRecord, start time.Time, slot *leaseSlot, permits *heldPermits) {
	k := &s.leases
	every := s.cfg.LeaseDuration / 3
	h := heldLease{start.Add(every), r.Collection, r.Name, permits}
	if slot != nil {
		slot.mu.Lock()
		slot.r, slot.heldLease = r, h
		slot.mu.Unlock()
	} else {
		k.mu.Lock()
		if k.held == nil {
			k.held = make(map[*JobRecord]heldLease)
		}
		k.held[r] = h
		k.mu.Unlock()
	}
	// After the lease is in place: extendLeases disarms before it
	// looks for leases, so one of the two sees the other.
	if !k.armed.Load() && k.armed.CompareAndSwap(false, true) {
		time.AfterFunc(every/2, s.extendLeases)
	}
}

// dropLease ends holdLease.
func (s *Scheduler) dropLease(r *JobRecord, slot *leaseSlot) {
	if slot != nil {
		slot.mu.Lock()
		slot.r, slot.heldLease = nil, heldLease{}
		slot.mu.Unlock()
		return
	}
	k := &s.leases
	k.mu.Lock()
	delete(k.held, r)
	k.mu.Unlock()
}

// extendLeases runs every sixth of Config.LeaseDuration while attempts
// run. It extends the leases due for it within half a period, so that each
// is extended at most a third of the lease after it was taken or last
// extended, two thirds before it would expire.
func (s *Scheduler) extendLeases() {
	k := &s.leases
	every := s.cfg.LeaseDuration / 3
	now := time.Now()
	type dueLease struct {
		r *JobRecord // compared, not read
		heldLease
	}
	var due []dueLease
	k.mu.Lock()
	for r, h := range k.held {
		if !now.Before(h.at.Add(-every / 2)) {
			h.at = now.Add(every)
			k.held[r] = h
			due = append(due, dueLease{r, h})
		}
	}
	for _, sl := range k.slots {
		sl.mu.Lock()
		if sl.r != nil && !now.Before(sl.at.Add(-every/2)) {
			sl.at = now.Add(every)
			due = append(due, dueLease{sl.r, sl.heldLease})
		}
		sl.mu.Unlock()
	}
	k.mu.Unlock()
	// The extensions run side by side, so that a pass over many leases
	// does not take longer than the leases have left when the store is
	// slow; each lease runs a LeaseDuration from its own call.
	var wg sync.WaitGroup
	slots := make(chan struct{}, extendParallel)
	for _, d := range due {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			s.extendLease(d.r, d.collection, d.name)
			if d.permits != nil {
				s.extendPermits(d.permits)
			}
		})
	}
	wg.Wait()
	k.armed.Store(false)
	k.mu.Lock()
	active := k.active()
	k.mu.Unlock()
	if active && k.armed.CompareAndSwap(false, true) {
		time.AfterFunc(every/2, s.extendLeases)
	}
}

// extendParallel is the most ExtendLease calls extendLeases makes at once.
const extendParallel = 16

// extendLease extends the lease on job collection/name, whose attempt
// on record r runs, by a LeaseDuration from now.
func (s *Scheduler) extendLease(r *JobRecord, collection, name string) {
	k := &s.leases
	err := s.runStore.ExtendLease(context.Background(), collection, name, s.cfg.InstanceID, time.Now().Add(s.cfg.LeaseDuration))
	if err == nil {
		return
	}
	k.mu.Lock()
	running := k.holds(r, collection, name)
	k.mu.Unlock()
	if down, _ := s.health.down(); running && down && transient(err) {
		// The loop has logged the outage already.
		s.log.Debug("extend lease", "job", name, "collection", collection, "err", err)
	} else if running { // else the attempt ended and its outcome released the lease
		s.log.Warn("extend lease", "job", name, "collection", collection, "err", err)
	}
}
