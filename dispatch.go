package scheduler

import (
	"sync"
	"sync/atomic"
	"time"
)

// task is a claimed job handed to a worker.
type task struct {
	r   *JobRecord
	now time.Time
	// held is the loop's takeover grace when the job was handed over
	// (see cutOff.heldOff); nil outside a grace, which is almost always,
	// so that a task stays small.
	held *heldOff
}

// dispatch hands claimed jobs to the workers. The loop queues the jobs of
// a claim at once and wakes one idle worker; a worker that takes a job
// while more wait wakes the next idle one before it works on its own, so
// that at most one worker is on its way at any time. Quick attempts thus
// run back to back on the workers already awake instead of waking a
// worker each, and slow ones still each get a worker at once: the worker
// woken for the next job wakes the one after while the first one waits on
// its executor.
//
// The worker woken is the one that went idle last: at a steady rate of
// quick attempts the same few workers take every job, rather than each of
// MaxConcurrency workers in turn, so that their stacks stay grown (the
// garbage collector shrinks the stack of a goroutine that waits, and an
// attempt on a shrunk stack copies it again as it grows) and their memory
// stays in the processor's caches.
//
// While tasks wait, the loop claims no more: the worker that takes the
// last one wakes it (see waitTaken).
type dispatch struct {
	mu     sync.Mutex
	queue  []task // queue[head:] wait, oldest first
	head   int
	idle   []chan struct{} // the wake-up channels of the workers waiting in take, the last to wait last
	waking bool            // a worker was woken and has not returned from its wait
	closed bool
	// waiting reports that tasks wait (head < len(queue)); written
	// with mu held, read without it.
	waiting atomic.Bool
	// loopWaits says that the loop waits for the last waiting task to
	// be taken (see waitTaken).
	loopWaits bool
}

// waitTaken reports whether tasks wait; if so, the take of the last one
// reports that it must wake the loop.
func (d *dispatch) waitTaken() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.loopWaits = d.head < len(d.queue)
	return d.loopWaits
}

// push queues a task for each of claims, claimed at now, started under
// the takeover grace held.
func (d *dispatch) push(claims []*JobRecord, now time.Time, held *heldOff) {
	d.mu.Lock()
	if d.head > 0 { // move the waiting tasks to the front, keeping the array
		n := copy(d.queue, d.queue[d.head:])
		clear(d.queue[n:])
		d.queue, d.head = d.queue[:n], 0
	}
	for _, r := range claims {
		d.queue = append(d.queue, task{r, now, held})
	}
	d.waiting.Store(d.head < len(d.queue))
	d.wakeOne()
	d.mu.Unlock()
}

// wakeOne wakes the idle worker that went idle last when tasks wait and
// no other worker is on its way already. d.mu is held.
func (d *dispatch) wakeOne() {
	if n := len(d.idle); d.head < len(d.queue) && n > 0 && !d.waking {
		d.waking = true
		d.idle[n-1] <- struct{}{}
		d.idle[n-1] = nil
		d.idle = d.idle[:n-1]
	}
}

// take returns the oldest waiting task, waiting for one, and whether the
// caller must wake the loop: the task was the last one waiting, and the
// loop waits for its take (see waitTaken); ok is false once close was
// called and no task waits. wake is the calling worker's own wake-up
// channel, of capacity 1, empty.
func (d *dispatch) take(wake chan struct{}) (t task, wakeLoop, ok bool) {
	d.mu.Lock()
	for d.head == len(d.queue) {
		if d.closed {
			d.mu.Unlock()
			return task{}, false, false
		}
		d.idle = append(d.idle, wake)
		d.mu.Unlock()
		<-wake
		d.mu.Lock()
		d.waking = false // only close wakes more than the one woken
	}
	t = d.queue[d.head]
	d.queue[d.head] = task{}
	d.head++
	if d.head == len(d.queue) {
		d.queue, d.head = d.queue[:0], 0
		d.waiting.Store(false)
		wakeLoop, d.loopWaits = d.loopWaits, false
	}
	d.wakeOne()
	d.mu.Unlock()
	return t, wakeLoop, true
}

// close makes take return false to every worker once no task waits.
func (d *dispatch) close() {
	d.mu.Lock()
	d.closed = true
	for _, w := range d.idle {
		w <- struct{}{}
	}
	d.idle = nil
	d.mu.Unlock()
}
