package scheduler

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestDispatchEachTaskOnce pushes tasks in batches while workers take
// them, some of them slowly: every task is taken exactly once, and close
// ends every worker once the queue is empty.
func TestDispatchEachTaskOnce(t *testing.T) {
	var d dispatch
	const workers, batches, per = 8, 50, 37
	var mu sync.Mutex
	taken := make(map[*JobRecord]int)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			wake := make(chan struct{}, 1)
			for {
				tk, _, ok := d.take(wake)
				if !ok {
					return
				}
				mu.Lock()
				taken[tk.r]++
				mu.Unlock()
				if w%2 == 0 {
					time.Sleep(10 * time.Microsecond)
				}
			}
		})
	}
	var all []*JobRecord
	for range batches {
		claims := make([]*JobRecord, per)
		for i := range claims {
			claims[i] = new(JobRecord)
		}
		all = append(all, claims...)
		d.push(claims, time.Now(), nil)
	}
	for {
		mu.Lock()
		n := len(taken)
		mu.Unlock()
		if n == len(all) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	d.close()
	wg.Wait()
	for i, r := range all {
		if taken[r] != 1 {
			t.Errorf("task %d taken %d times, want 1", i, taken[r])
		}
	}
	if d.head != len(d.queue) {
		t.Errorf("%d tasks left in the queue", len(d.queue)-d.head)
	}
}

// TestDispatchLastIdleFirst: one task at a time, each pushed once every
// worker waits, goes to the worker that went idle last, the same one each
// time, not to each of the workers in turn.
func TestDispatchLastIdleFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var d dispatch
		const workers, tasks = 8, 20
		var mu sync.Mutex
		by := map[int]int{} // tasks taken by worker
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				wake := make(chan struct{}, 1)
				for {
					if _, _, ok := d.take(wake); !ok {
						return
					}
					mu.Lock()
					by[w]++
					mu.Unlock()
				}
			})
		}
		for range tasks {
			synctest.Wait() // every worker waits in take
			d.push([]*JobRecord{new(JobRecord)}, time.Now(), nil)
		}
		synctest.Wait()
		d.close()
		wg.Wait()
		if len(by) != 1 {
			t.Errorf("tasks taken by worker %v, want all %d by one worker", by, tasks)
		}
	})
}
