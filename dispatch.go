package scheduler

import (
	"sync"
	"time"
)

// task is a claimed job handed to a worker.
type task struct {
	r   *JobRecord
	now time.Time
}

// dispatch hands claimed jobs to the workers. The loop queues the jobs of
// a claim at once and wakes one idle worker; a worker that takes a job
// while more wait wakes the next idle one before it works on its own, so
// that at most one worker is on its way at any time. Quick attempts thus
// run back to back on the workers already awake instead of waking a
// worker each, and slow ones still each get a worker at once: the worker
// woken for the next job wakes the one after while the first one waits on
// its executor.
type dispatch struct {
	mu     sync.Mutex
	cond   sync.Cond // on mu (see init); signalled for one idle worker at a time
	queue  []task    // queue[head:] wait, oldest first
	head   int
	idle   int  // workers waiting in take
	waking bool // a worker was signalled and has not returned from its wait
	closed bool
}

func (d *dispatch) init() { d.cond.L = &d.mu }

// push queues a task for each of claims, claimed at now.
func (d *dispatch) push(claims []*JobRecord, now time.Time) {
	d.mu.Lock()
	if d.head > 0 { // move the waiting tasks to the front, keeping the array
		n := copy(d.queue, d.queue[d.head:])
		clear(d.queue[n:])
		d.queue, d.head = d.queue[:n], 0
	}
	for _, r := range claims {
		d.queue = append(d.queue, task{r, now})
	}
	d.wakeOne()
	d.mu.Unlock()
}

// wakeOne signals an idle worker when tasks wait and no other worker is
// on its way already. d.mu is held.
func (d *dispatch) wakeOne() {
	if d.head < len(d.queue) && d.idle > 0 && !d.waking {
		d.waking = true
		d.cond.Signal()
	}
}

// take returns the oldest waiting task, waiting for one; false once close
// was called and no task waits.
func (d *dispatch) take() (task, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.head == len(d.queue) {
		if d.closed {
			return task{}, false
		}
		d.idle++
		d.cond.Wait()
		d.idle--
		d.waking = false // only close wakes more than the one signalled
	}
	t := d.queue[d.head]
	d.queue[d.head] = task{}
	d.head++
	if d.head == len(d.queue) {
		d.queue, d.head = d.queue[:0], 0
	}
	d.wakeOne()
	return t, true
}

// close makes take return false to every worker once no task waits.
func (d *dispatch) close() {
	d.mu.Lock()
	d.closed = true
	d.cond.Broadcast()
	d.mu.Unlock()
}
