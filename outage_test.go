package scheduler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/store/memory"
)

// errUnreachable is what a store returns while its database is away: an
// error that is none of the store's verdicts.
var errUnreachable = errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")

// awayStore is a memory store whose calls of the run loop fail with
// errUnreachable while away is set, as a database that went away would.
// It has no RecordBatch, so the Scheduler records outcomes one by one.
type awayStore struct {
	scheduler.Store
	mem  *memory.Store
	away atomic.Bool
}

func (s *awayStore) ClaimDue(ctx context.Context, now time.Time, owner string, until time.Time, limit int) ([]*scheduler.JobRecord, error) {
	if s.away.Load() {
		return nil, errUnreachable
	}
	return s.Store.ClaimDue(ctx, now, owner, until, limit)
}

func (s *awayStore) NextDue(ctx context.Context) (time.Time, error) {
	if s.away.Load() {
		return time.Time{}, errUnreachable
	}
	return s.Store.NextDue(ctx)
}

func (s *awayStore) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	if s.away.Load() {
		return errUnreachable
	}
	return s.Store.ExtendLease(ctx, collection, name, owner, until)
}

func (s *awayStore) Record(ctx context.Context, owner string, j *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	if s.away.Load() {
		return errUnreachable
	}
	return s.Store.Record(ctx, owner, j, history)
}

// awayBatchStore is an awayStore with RecordBatch.
type awayBatchStore struct{ *awayStore }

func (s awayBatchStore) RecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) []error {
	errs := make([]error, len(batch))
	if s.away.Load() {
		for i := range errs {
			errs[i] = errUnreachable
		}
		return errs
	}
	return s.mem.RecordBatch(ctx, owner, batch)
}

// TestStoreAwayDuringAttempt: when the store goes away while an attempt
// runs, its outcome is recorded once the store is back, and the attempt is
// not run again, whether the outage is shorter or longer than the lease
// (then the Scheduler's own loop claims the job again when the store is
// back, and must not run it). The log says when the store stopped and
// started answering.
func TestStoreAwayDuringAttempt(t *testing.T) {
	for _, batch := range []bool{false, true} {
		for _, outage := range []time.Duration{5 * time.Second, 45 * time.Second} {
			name := "Record"
			if batch {
				name = "RecordBatch"
			}
			t.Run(name+"/"+outage.String(), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { testStoreAway(t, batch, outage) })
			})
		}
	}
}

func testStoreAway(t *testing.T, batch bool, outage time.Duration) {
	ctx := context.Background()
	mem := memory.New()
	away := &awayStore{Store: mem, mem: mem}
	var st scheduler.Store = away
	if batch {
		st = awayBatchStore{away}
	}
	var mu sync.Mutex
	runs := make(map[string]int) // by execution tag
	reg := &action.Registry{}
	reg.Register("Work", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		mu.Lock()
		runs[req.ExecutionTag()]++
		first := len(runs) == 1 && runs[req.ExecutionTag()] == 1
		mu.Unlock()
		if first {
			// The store goes away while the first attempt runs, and
			// comes back after outage.
			away.away.Store(true)
			time.AfterFunc(outage, func() { away.away.Store(false) })
		}
		time.Sleep(2 * time.Second)
		return &action.Result{Message: "done"}, nil
	}))
	var log syncbuf.Buffer
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg, InstanceID: "a",
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(time.Second)
	if _, err := s.PutJob(ctx, "c", "once", &scheduler.Job{StartTime: &start, Action: action.Action{Type: "Work"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var hist []scheduler.HistoryEntry
	for deadline := time.Now().Add(outage + time.Minute); len(hist) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("no history a minute after the store came back")
		}
		time.Sleep(100 * time.Millisecond)
		if !away.away.Load() {
			hist, _ = mem.ListHistory(ctx, "c", "once", scheduler.HistoryFilter{})
		}
	}
	time.Sleep(time.Minute) // time for a wrong run again
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	hist, err = mem.ListHistory(ctx, "c", "once", scheduler.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(runs) != 1 || len(hist) != 1 || runs[hist[0].ExecutionTag] != 1 || hist[0].Status != scheduler.StatusCompleted {
		t.Errorf("runs by tag %v, history %+v; want one run, recorded once as Completed", runs, hist)
	}
	j, err := mem.GetJob(ctx, "c", "once")
	if err != nil {
		t.Fatal(err)
	}
	if j.State != scheduler.JobCompleted || j.LeaseOwner != "" {
		t.Errorf("job state %s, lease owner %q; want Completed and no lease", j.State, j.LeaseOwner)
	}
	text := log.String()
	wants := []string{"the store failed; recording again until it answers"}
	if outage > scheduler.DefaultLeaseDuration {
		// The loop woke at the lease's end and found the store away.
		wants = append(wants, "the store does not answer", "the store answers again")
	}
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("the log does not say %q:\n%s", want, text)
		}
	}
	if t.Failed() {
		t.Logf("log:\n%s", text)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// faultStore is a memory store whose ClaimDue fails with claimErr, and
// whose Record fails with recordErr, while each is set.
type faultStore struct {
	scheduler.Store
	claimErr, recordErr atomic.Pointer[error]
}

func (s *faultStore) ClaimDue(ctx context.Context, now time.Time, owner string, until time.Time, limit int) ([]*scheduler.JobRecord, error) {
	if err := s.claimErr.Load(); err != nil {
		return nil, *err
	}
	return s.Store.ClaimDue(ctx, now, owner, until, limit)
}

func (s *faultStore) Record(ctx context.Context, owner string, j *scheduler.JobRecord, history []scheduler.HistoryEntry) error {
	if err := s.recordErr.Load(); err != nil {
		return *err
	}
	return s.Store.Record(ctx, owner, j, history)
}

// rowError is what a SQL store returns for a row that does not decode.
func rowError() error {
	var v map[string]any
	err := json.Unmarshal([]byte(`{"action": `), &v)
	return fmt.Errorf("store/x: claim due jobs: decode definition of job %q: %w", "c/j", err)
}

// faultEnv runs a Scheduler over a faultStore, its log kept.
type faultEnv struct {
	st    *faultStore
	s     *scheduler.Scheduler
	mu    sync.Mutex
	log   bytes.Buffer
	works atomic.Int32
}

func newFaultEnv(t *testing.T) *faultEnv {
	e := &faultEnv{st: &faultStore{Store: memory.New()}}
	reg := &action.Registry{}
	reg.Register("Work", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		e.works.Add(1)
		return &action.Result{Message: "done"}, nil
	}))
	s, err := scheduler.New(e.st, &scheduler.Config{Executors: reg, InstanceID: "a",
		Logger: slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
			e.mu.Lock()
			defer e.mu.Unlock()
			return e.log.Write(p)
		}), nil))})
	if err != nil {
		t.Fatal(err)
	}
	e.s = s
	if _, err := s.PutCollection(context.Background(), "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *faultEnv) text() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.log.String()
}

// TestLoopFaultIsNoOutage: a call of the run loop that fails for one row
// that does not decode, or with a context canceled (the store's own),
// logs that once, not an outage of the store; one that fails as an
// unreachable database does logs an outage, and its end.
func TestLoopFaultIsNoOutage(t *testing.T) {
	for _, tt := range []struct {
		name          string
		err           error
		want, notWant []string
	}{
		{"row", rowError(),
			[]string{"a call of the run loop failed, not for an outage of the store", "decode definition of job"},
			[]string{"the store does not answer", "the store answers again"}},
		{"canceled", fmt.Errorf("store/x: claim due jobs: %w", context.Canceled),
			[]string{"a call of the run loop failed, not for an outage of the store"},
			[]string{"the store does not answer", "the store answers again"}},
		{"outage", errUnreachable,
			[]string{"the store does not answer", "the store answers again"},
			[]string{"not for an outage of the store"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newFaultEnv(t)
				e.st.claimErr.Store(&tt.err)
				if err := e.s.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
				time.Sleep(10 * time.Second) // ten calls of the loop fail
				e.st.claimErr.Store(nil)
				time.Sleep(2 * time.Second)
				if err := e.s.Stop(context.Background()); err != nil {
					t.Fatal(err)
				}
				text := e.text()
				for _, want := range tt.want {
					if !strings.Contains(text, want) {
						t.Errorf("the log does not say %q:\n%s", want, text)
					}
				}
				for _, bad := range tt.notWant {
					if strings.Contains(text, bad) {
						t.Errorf("the log says %q:\n%s", bad, text)
					}
				}
				if n := strings.Count(text, "level=ERROR"); n != 1 {
					t.Errorf("the log has %d errors, want 1:\n%s", n, text)
				}
			})
		})
	}
}

// TestRecordFaultIsNoOutage: an attempt's outcome that the store refuses
// for a definition it cannot encode, or with a context canceled (the
// store's own, ended at shutdown), is logged as not recorded at once,
// not recorded again and again as in an outage, which an unreachable
// database still is.
func TestRecordFaultIsNoOutage(t *testing.T) {
	for _, tt := range []struct {
		name  string
		err   error
		again bool // recorded again until the store answers
	}{
		{"invalid", fmt.Errorf("store/x: record job %q: encode definition: %w", "c/once", &scheduler.ValidationError{Path: "action.request.uri", Reason: "is not a URL"}), false},
		{"canceled", fmt.Errorf("store/x: record job %q: %w", "c/once", context.Canceled), false},
		{"outage", errUnreachable, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newFaultEnv(t)
				e.st.recordErr.Store(&tt.err)
				start := time.Now().Add(time.Second)
				if _, err := e.s.PutJob(context.Background(), "c", "once", &scheduler.Job{StartTime: &start, Action: action.Action{Type: "Work"}}, nil); err != nil {
					t.Fatal(err)
				}
				if err := e.s.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
				time.Sleep(5 * time.Second)
				if e.works.Load() == 0 {
					t.Fatal("the job did not run")
				}
				e.st.recordErr.Store(nil)
				time.Sleep(5 * time.Second)
				if err := e.s.Stop(context.Background()); err != nil {
					t.Fatal(err)
				}
				text := e.text()
				const again = "the store failed; recording again until it answers"
				if got := strings.Contains(text, again); got != tt.again {
					t.Errorf("the log says %q: %v, want %v:\n%s", again, got, tt.again, text)
				}
				if !tt.again && !strings.Contains(text, `level=ERROR msg="record job outcome"`) {
					t.Errorf("the log does not say that the outcome was not recorded:\n%s", text)
				}
			})
		})
	}
}
