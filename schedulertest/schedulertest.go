package schedulertest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/store/memory"
)

// DefaultTimeout is how long a wait of [Scheduler] lasts at most when its
// Timeout is zero.
const DefaultTimeout = time.Minute

// Scheduler is a [scheduler.Scheduler] under test, with helpers that wait
// for it and check its history. Every method of the embedded Scheduler is
// available. The helpers report problems to the test they were made for
// and never hang: a wait that does not come true within Timeout fails the
// test with a diff of what it waited for and what it found.
type Scheduler struct {
	*scheduler.Scheduler
	// Store is the store under the Scheduler.
	Store scheduler.Store
	// Timeout bounds each wait. Inside a testing/synctest bubble it is
	// fake time, which passes as fast as the scheduler sleeps: give it
	// the time the schedule needs (waiting for the third run of a daily
	// job takes more than two days). Zero means DefaultTimeout (1m).
	Timeout time.Duration

	t      testing.TB
	events *events // nil when made by Wrap
}

// events wakes waits when the scheduler records history.
type events struct {
	mu sync.Mutex
	s  signal
}

func (e *events) fire() {
	e.mu.Lock()
	e.s.fire()
	e.mu.Unlock()
}

func (e *events) wait() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.s.wait()
}

// New returns a started Scheduler over a new memory store, with the
// collection scheduler.DefaultCollection created, ready to run inside a
// testing/synctest bubble (call New inside it) or outside one. It is
// stopped when the test ends. cfg may be nil. New changes a copy of cfg:
// Logger defaults to one that writes to the test's log; when Executors
// (made if nil) has no executor for Http or Https, New registers one that
// reaches [Receiver] URLs through memory, and closes it at the end; its
// OnHistory also wakes the waits.
func New(t testing.TB, cfg *scheduler.Config) *Scheduler {
	t.Helper()
	var c scheduler.Config
	if cfg != nil {
		c = *cfg
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if c.Executors == nil {
		c.Executors = new(action.Registry)
	}
	var own *httpaction.Executor
	_, hasHTTP := c.Executors.Lookup(action.HTTP)
	_, hasHTTPS := c.Executors.Lookup(action.HTTPS)
	if !hasHTTP && !hasHTTPS {
		own = httpaction.New(&httpaction.Options{Client: newClient(), Timeout: c.ActionTimeout})
		c.Executors.Register(action.HTTP, own)
		c.Executors.Register(action.HTTPS, own)
	}
	ev := &events{}
	onHistory := c.OnHistory
	c.OnHistory = func(h scheduler.HistoryEntry) {
		if onHistory != nil {
			onHistory(h)
		}
		ev.fire()
	}
	st := memory.New()
	s, err := scheduler.New(st, &c)
	if err != nil {
		t.Fatalf("schedulertest: New: %v", err)
	}
	ctx := context.Background()
	if _, err := s.PutCollection(ctx, scheduler.DefaultCollection, nil, nil); err != nil {
		t.Fatalf("schedulertest: New: %v", err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatalf("schedulertest: New: %v", err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Stop(stop); err != nil && !errors.Is(err, scheduler.ErrStopped) {
			t.Errorf("schedulertest: Stop: %v", err)
		}
		if own != nil {
			own.Close()
		}
	})
	return &Scheduler{Scheduler: s, Store: st, t: t, events: ev}
}

// Wrap returns the helpers for a Scheduler made elsewhere (over any store,
// started or not), reporting to t. Its waits poll the store; it neither
// starts nor stops s.
func Wrap(t testing.TB, s *scheduler.Scheduler) *Scheduler {
	return &Scheduler{Scheduler: s, t: t}
}

// testWriter writes log lines to a test's log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// progress is what the waits compare: the state of a job.
type progress struct {
	Job      string
	Found    bool
	State    scheduler.JobState
	Runs     int // status.executionCount
	Failures int
	Faulted  int
	Next     *time.Time
}

func (s *Scheduler) progress(collection, name string) (progress, *scheduler.JobRecord) {
	p := progress{Job: collection + "/" + name}
	r, err := s.GetJob(context.Background(), collection, name)
	if err != nil {
		return p, nil
	}
	p.Found, p.State = true, r.State
	p.Runs, p.Failures, p.Faulted = r.Status.ExecutionCount, r.Status.FailureCount, r.Status.FaultedCount
	p.Next = r.Status.NextExecutionTime
	return p, r
}

// WaitRuns waits until the job has run at least n times (its
// status.executionCount, attempts of its main action with retries, has
// reached n) and returns its record. It fails the test, returning nil,
// when that does not happen within Timeout.
func (s *Scheduler) WaitRuns(collection, name string, n int) *scheduler.JobRecord {
	s.t.Helper()
	return s.waitJob(collection, name, fmt.Sprintf("run %d times", n), func(p *progress) bool {
		if p.Runs >= n {
			return true
		}
		p.Found, p.Runs = true, n
		return false
	})
}

// WaitState waits until the job is in state (such as Completed or
// Faulted) and returns its record. It fails the test, returning nil, when
// that does not happen within Timeout.
func (s *Scheduler) WaitState(collection, name string, state scheduler.JobState) *scheduler.JobRecord {
	s.t.Helper()
	return s.waitJob(collection, name, "reach state "+string(state), func(p *progress) bool {
		if p.Found && p.State == state {
			return true
		}
		p.Found, p.State = true, state
		return false
	})
}

// waitJob polls the job (and wakes on history) until done reports true.
// done may change p into what was awaited, for the diff.
func (s *Scheduler) waitJob(collection, name, what string, done func(p *progress) bool) *scheduler.JobRecord {
	s.t.Helper()
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	poll := 10 * time.Millisecond
	for {
		var woken <-chan struct{}
		if s.events != nil {
			woken = s.events.wait()
		}
		got, r := s.progress(collection, name)
		want := got
		if done(&want) {
			return r
		}
		select {
		case <-woken:
		case <-time.After(poll):
			poll = min(2*poll, time.Second)
		case <-deadline.C:
			s.t.Fatalf("schedulertest: job %s did not %s within %v (-want +got):\n%s%s",
				got.Job, what, timeout, cmp.Diff(want, got), s.historyText(collection, name))
			return nil
		}
	}
}

// historyText lists the newest history entries of a job, for failures.
func (s *Scheduler) historyText(collection, name string) string {
	h, err := s.ListHistory(context.Background(), collection, name, &scheduler.ListHistoryOptions{Top: 10})
	if err != nil || len(h) == 0 {
		return "(no history)"
	}
	var b strings.Builder
	b.WriteString("its newest history entries:\n")
	for _, e := range h {
		fmt.Fprintf(&b, "  %s %s occurrence %d retry %d expected %s started %s: %s\n", e.ActionName, e.Status, e.RepeatCount,
			e.RetryCount, e.ExpectedExecutionTime.Format(time.RFC3339Nano), e.StartTime.Format(time.RFC3339Nano), e.Message)
	}
	return b.String()
}

// History returns the job's whole history, oldest first. It fails the
// test, returning nil, when the history cannot be read.
func (s *Scheduler) History(collection, name string) []scheduler.HistoryEntry {
	s.t.Helper()
	var all []scheduler.HistoryEntry
	for skip := 0; ; skip += scheduler.MaxPageSize {
		page, err := s.ListHistory(context.Background(), collection, name, &scheduler.ListHistoryOptions{Skip: skip})
		if err != nil {
			s.t.Fatalf("schedulertest: history of %s/%s: %v", collection, name, err)
			return nil
		}
		all = append(all, page...)
		if len(page) < scheduler.MaxPageSize {
			break
		}
	}
	slices.Reverse(all)
	return all
}

// Entry is the part of a history entry that tests assert on; see
// [Scheduler.AssertHistory].
type Entry struct {
	// Action is MainAction or ErrorAction.
	Action scheduler.ActionName
	// Status is Completed, Failed or Postponed.
	Status scheduler.ExecutionStatus
	// Repeat is the occurrence number, from 1; Retry the retry number.
	Repeat, Retry int
	// Expected is when the occurrence was scheduled; Start when the
	// attempt started.
	Expected, Start time.Time
	// Message describes the outcome.
	Message string
}

// Entries returns the job's history, oldest first, as Entry values.
func (s *Scheduler) Entries(collection, name string) []Entry {
	s.t.Helper()
	h := s.History(collection, name)
	out := make([]Entry, len(h))
	for i, e := range h {
		out[i] = Entry{Action: e.ActionName, Status: e.Status, Repeat: e.RepeatCount, Retry: e.RetryCount,
			Expected: e.ExpectedExecutionTime, Start: e.StartTime, Message: e.Message}
	}
	return out
}

// AssertHistory compares the job's history, oldest first, with want and
// reports a difference as a test error with a go-cmp diff. opts adjust the
// comparison: cmpopts.IgnoreFields(schedulertest.Entry{}, "Start",
// "Message") leaves out what a test outside a synctest bubble cannot
// predict. Times compare as instants, whatever their location.
func (s *Scheduler) AssertHistory(collection, name string, want []Entry, opts ...cmp.Option) {
	s.t.Helper()
	got := s.Entries(collection, name)
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		s.t.Errorf("schedulertest: history of %s/%s, oldest first (-want +got):\n%s", collection, name, diff)
	}
}
