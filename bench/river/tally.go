package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// tally counts, for every job index, how often its no-op function ran and
// how often its outcome was recorded, so that a run in which anything ran
// or was recorded twice, or not at all, fails loudly.
type tally struct {
	n        int
	ran      []atomic.Int32
	recorded []atomic.Int32
	started  []atomic.Int64 // Unix nanoseconds of the first run
	last     atomic.Int64   // Unix nanoseconds of the last outcome recorded
	count    atomic.Int64   // outcomes recorded
	done     chan struct{}  // closed when n outcomes were recorded
	once     sync.Once
	failed   chan struct{} // closed at the first fail
	failOnce sync.Once

	// out, when set, gets a line per job run and outcome recorded (an
	// instance of the instances scenario reports to the process that
	// counts).
	out *lineOut

	mu   sync.Mutex
	errs []error
}

func newTally(n int) *tally {
	return &tally{
		n:        n,
		ran:      make([]atomic.Int32, n),
		recorded: make([]atomic.Int32, n),
		started:  make([]atomic.Int64, n),
		done:     make(chan struct{}),
		failed:   make(chan struct{}),
	}
}

// fail notes a problem; the run fails with it, at once: wait returns. An
// instance of the instances scenario passes it on to the process that
// counts.
func (t *tally) fail(err error) {
	t.mu.Lock()
	if len(t.errs) < 10 {
		t.errs = append(t.errs, err)
	}
	t.mu.Unlock()
	if t.out != nil {
		t.out.printf("error %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	t.failOnce.Do(func() { close(t.failed) })
}

func (t *tally) valid(i int, what string) bool {
	if i < 0 || i >= t.n {
		t.fail(fmt.Errorf("%s: job index %d out of range [0,%d)", what, i, t.n))
		return false
	}
	return true
}

// run notes that the function of job i started at the given instant.
func (t *tally) run(i int, at time.Time) {
	if !t.valid(i, "run") {
		return
	}
	if t.ran[i].Add(1) > 1 {
		t.fail(fmt.Errorf("job %d ran twice", i))
		return
	}
	t.started[i].Store(at.UnixNano())
	if t.out != nil {
		t.out.printf("run %d %d", i, at.UnixNano())
	}
}

// record notes that the outcome of job i was recorded at the given instant.
func (t *tally) record(i int, at time.Time) {
	if !t.valid(i, "record") {
		return
	}
	if t.recorded[i].Add(1) > 1 {
		t.fail(fmt.Errorf("the outcome of job %d was recorded twice", i))
		return
	}
	ns := at.UnixNano()
	if t.out != nil {
		t.out.printf("record %d %d", i, ns)
	}
	for {
		old := t.last.Load()
		if ns <= old || t.last.CompareAndSwap(old, ns) {
			break
		}
	}
	if t.count.Add(1) == int64(t.n) {
		t.once.Do(func() { close(t.done) })
	}
}

// wait returns once every outcome was recorded, or an error naming how many
// are missing when timeout passes first or a problem was noted (fail;
// check returns it).
func (t *tally) wait(timeout time.Duration) error {
	select {
	case <-t.done:
		return nil
	case <-t.failed:
		return fmt.Errorf("%d of %d outcomes recorded when the run failed (check says why)", t.count.Load(), t.n)
	case <-time.After(timeout):
		return fmt.Errorf("%d of %d outcomes recorded after %s", t.count.Load(), t.n, timeout)
	}
}

// lastRecorded is when the last outcome was recorded.
func (t *tally) lastRecorded() time.Time { return time.Unix(0, t.last.Load()) }

// noted returns the problems noted with fail (a job run or recorded
// twice among them).
func (t *tally) noted() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return errors.Join(t.errs...)
}

// check returns every problem seen: a job that ran or was recorded other
// than exactly once, and anything noted with fail.
func (t *tally) check() error {
	t.mu.Lock()
	errs := slices.Clone(t.errs)
	t.mu.Unlock()
	var notRun, notRecorded int
	for i := range t.n {
		if t.ran[i].Load() == 0 {
			notRun++
		}
		if t.recorded[i].Load() == 0 {
			notRecorded++
		}
	}
	if notRun > 0 {
		errs = append(errs, fmt.Errorf("%d of %d jobs never ran", notRun, t.n))
	}
	if notRecorded > 0 {
		errs = append(errs, fmt.Errorf("%d of %d outcomes never recorded", notRecorded, t.n))
	}
	return errors.Join(errs...)
}

// lateness returns each job's start minus its due time, sorted.
func (t *tally) lateness(due []time.Time) []time.Duration {
	d := make([]time.Duration, t.n)
	for i := range t.n {
		d[i] = time.Unix(0, t.started[i].Load()).Sub(due[i])
	}
	slices.Sort(d)
	return d
}

// quantile returns the q-quantile of sorted d.
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(d)))) - 1
	return d[max(i, 0)]
}
