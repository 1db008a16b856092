package scheduler_test

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// plainStore hides the memory store's RecordBatch, so that the scheduler
// records each outcome with Record.
type plainStore struct{ scheduler.Store }

// TestRecordWithoutBatchRecorder runs retries over a store without
// RecordBatch.
func TestRecordWithoutBatchRecorder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := plainStore{memory.New()}
		if _, ok := scheduler.Store(st).(scheduler.BatchRecorder); ok {
			t.Fatal("plainStore is a BatchRecorder")
		}
		var mu sync.Mutex
		calls := 0
		reg := &action.Registry{}
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls == 1 {
				return nil, errors.New("boom")
			}
			return nil, nil
		}))
		s, err := scheduler.New(st, &scheduler.Config{Executors: reg, MinRetryInterval: time.Second, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		job, err := scheduler.ParseJob([]byte(jobJSON(time.Time{}, `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}, "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT15S", "retryCount": 1}}`)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutJob(ctx, "c", "j", job, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		h, err := s.ListHistory(ctx, "c", "j", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 2 || h[0].Status != scheduler.StatusCompleted || h[1].Status != scheduler.StatusFailed {
			t.Errorf("history = %+v, want Failed then Completed (newest first)", h)
		}
		r, err := s.GetJob(ctx, "c", "j")
		if err != nil || r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 2 || r.Status.FailureCount != 1 {
			t.Errorf("job = %+v, %v; want Completed after 2 executions, 1 failed", r, err)
		}
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// A burst of outcomes while a held claim keeps them lingering is recorded
// in store calls of 256 as soon as 256 are pending: 900 one-time jobs due
// together (and one 20 ms later, held), over a store that takes 10 ms a
// RecordBatch. No outcome waits for its RecordBatch longer than the linger
// plus one call under way.
func TestRecordLingerCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const slow = 10 * time.Millisecond
		e, st := premiumCounted(t, scheduler.Config{ClaimAhead: scheduler.DefaultClaimAhead, MaxConcurrency: 1200}, slow)
		// Each attempt takes a millisecond, so that the loop holds the
		// claim of "late" when the first of them ends.
		e.exec.fn = func(*action.Request, int) error { time.Sleep(time.Millisecond); return nil }
		const n = 900
		first := e.t0.Add(10 * time.Second).Truncate(time.Second)
		for i := range n {
			e.put(jobName(i), oneTimeAt(first))
		}
		e.put("late", oneTimeAt(first.Add(20*time.Millisecond)))
		e.startBefore(first)
		time.Sleep(time.Until(first.Add(time.Second)))
		synctest.Wait()
		e.stop()
		if got := len(e.exec.calls); got != n+1 {
			t.Errorf("%d attempts, want %d", got, n+1)
		}
		if w, limit := time.Duration(st.waited.Load()), scheduler.DefaultClaimAhead+slow; w > limit {
			t.Errorf("an outcome waited %v for its RecordBatch, want at most the linger plus one call under way, %v", w, limit)
		}
		if b, want := st.batches.Load(), int64((n+255)/256+1); b > want {
			t.Errorf("%d RecordBatch calls, want at most %d", b, want)
		}
	})
}

// keepWatch is a memory store that notes what RecordBatch is told about
// the definitions of the outcomes it records: how many elements say
// KeepDefinition, how many do not, and how many say so while holding
// another definition than the one their claim handed out.
type keepWatch struct {
	*memory.Store
	mu                   sync.Mutex
	claimed              map[string]*scheduler.Job
	kept, written, wrong int
}

func (w *keepWatch) note(rs []*scheduler.JobRecord) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range rs {
		w.claimed[r.ID()] = r.Job
	}
}

func (w *keepWatch) ClaimDue(ctx context.Context, now time.Time, owner string, until time.Time, limit int) ([]*scheduler.JobRecord, error) {
	rs, err := w.Store.ClaimDue(ctx, now, owner, until, limit)
	w.note(rs)
	return rs, err
}

func (w *keepWatch) ClaimDueBy(ctx context.Context, req scheduler.ClaimRequest) ([]*scheduler.JobRecord, error) {
	rs, err := w.Store.ClaimDueBy(ctx, req)
	w.note(rs)
	return rs, err
}

func (w *keepWatch) RecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) []error {
	w.mu.Lock()
	for _, r := range batch {
		switch {
		case !r.KeepDefinition:
			w.written++
		case r.Job.Job != w.claimed[r.Job.ID()]:
			w.wrong++
		default:
			w.kept++
		}
	}
	w.mu.Unlock()
	return w.Store.RecordBatch(ctx, owner, batch)
}

// TestRecordKeepsClaimedDefinition: the outcomes of claimed jobs (a
// recurring job, whose first attempt fails and is retried, and a one-time
// job) reach RecordBatch with KeepDefinition set and the definition their
// claim handed out.
func TestRecordKeepsClaimedDefinition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		w := &keepWatch{Store: e.store, claimed: map[string]*scheduler.Job{}}
		e.over(w)
		e.exec.fn = func(_ *action.Request, call int) error {
			if call == 1 {
				return errors.New("boom")
			}
			return nil
		}
		start := e.t0.Add(time.Minute).Truncate(time.Second)
		e.put("every", `{"startTime": "`+start.Format(time.RFC3339)+`", "recurrence": {"frequency": "Minute", "count": 4},
			"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/hello", "method": "POST"},
				"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT15S", "retryCount": 1}}}`)
		e.put("once", oneTimeAt(start.Add(5*time.Second)))
		e.start()
		time.Sleep(time.Until(start.Add(5 * time.Minute)))
		synctest.Wait()
		e.stop()
		w.mu.Lock()
		defer w.mu.Unlock()
		// every: 4 occurrences and a retry; once: 1.
		if w.kept != 6 || w.written != 0 || w.wrong != 0 {
			t.Errorf("RecordBatch elements: %d with KeepDefinition and the claimed definition, %d without it, %d with it and another definition; want 6, 0, 0",
				w.kept, w.written, w.wrong)
		}
	})
}

// recorders is a claimCounter that notes the goroutines its RecordBatch
// is called on.
type recorders struct {
	*claimCounter
	mu   sync.Mutex
	seen map[string]bool // the first line of the calling goroutine's stack: "goroutine N [running]:"
}

func (r *recorders) RecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) []error {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(string(buf), "\n")
	r.mu.Lock()
	r.seen[id] = true
	r.mu.Unlock()
	return r.claimCounter.RecordBatch(ctx, owner, batch)
}

// TestRecordLingerOneRecorder: at a steady rate, one outcome a
// millisecond, over a store that takes 2 ms a RecordBatch, the outcomes
// left to linger are recorded batch after batch by one goroutine, which
// the flush timer wakes again and again, rather than each batch by a
// goroutine of its own that grows its stack to a store call's depth anew;
// none waits longer for its record than a linger and the store call under
// way; and that goroutine ends with the outcomes (synctest.Test fails on a
// goroutine left waiting).
func TestRecordLingerOneRecorder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const slow = 2 * time.Millisecond
		e, st := premiumCounted(t, scheduler.Config{ClaimAhead: scheduler.DefaultClaimAhead}, slow)
		rec := &recorders{claimCounter: st, seen: map[string]bool{}}
		e.over(rec)
		const n = 500
		first := e.putEvery(n, time.Millisecond)
		e.startBefore(first)
		time.Sleep(time.Until(first.Add(n * time.Millisecond)))
		e.stop()
		b := st.batches.Load()
		if b < 5 {
			t.Fatalf("%d record batches for %d outcomes 1 ms apart, want 5 or more", b, n)
		}
		if w, limit := time.Duration(st.waited.Load()), scheduler.DefaultClaimAhead+slow; w > limit {
			t.Errorf("an outcome waited %v for its RecordBatch, want at most the linger plus one call under way, %v", w, limit)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if g := len(rec.seen); g > 2 {
			t.Errorf("%d record batches on %d goroutines, want at most 2", b, g)
		}
	})
}
