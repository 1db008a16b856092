package scheduler_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
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
		runs[req.ExecutionTag]++
		first := len(runs) == 1 && runs[req.ExecutionTag] == 1
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
	var log bytes.Buffer
	var logMu sync.Mutex
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg, InstanceID: "a",
		Logger: slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
			logMu.Lock()
			defer logMu.Unlock()
			return log.Write(p)
		}), nil))})
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
	logMu.Lock()
	text := log.String()
	logMu.Unlock()
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
