package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/store/postgres"
)

// lostAnswer is a PostgreSQL store whose first RecordBatch commits and
// then reports a lost connection for what it recorded: the answer to a
// write that committed was lost on its way back.
type lostAnswer struct {
	*postgres.Store
	lost atomic.Bool
}

func (s *lostAnswer) RecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) []error {
	errs := s.Store.RecordBatch(ctx, owner, batch)
	if s.lost.CompareAndSwap(false, true) {
		for i, err := range errs {
			if err == nil {
				errs[i] = errors.New("read tcp: connection reset by peer")
			}
		}
	}
	return errs
}

// TestNoHistoryRepeatedRecordLeaseLost: when the answer to the Record of
// an attempt's outcome is lost after it committed, the Scheduler records
// it again. With history kept, store/postgres recognises the repeat by its
// history and the outcome is logged as recorded; under NoHistory there is
// no history to recognise it by, and the repeat is logged as a lost lease,
// as Config.HistoryPerJob documents. Either way the attempt ran once and
// its outcome is stored.
func TestNoHistoryRepeatedRecordLeaseLost(t *testing.T) {
	for _, tc := range []struct {
		name    string
		history int
		logged  string
	}{
		{"history kept", 0, "recorded job outcome after the store failed"},
		{"NoHistory", scheduler.NoHistory, "the lease was lost while the store failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := &lostAnswer{Store: open(t, newSchema(t))}
			var logs syncbuf.Buffer
			var runs atomic.Int32
			reg := &action.Registry{}
			reg.Register("Noop", action.ExecutorFunc(func(context.Context, *action.Request) (*action.Result, error) {
				runs.Add(1)
				return nil, nil
			}))
			s, err := scheduler.New(st, &scheduler.Config{HistoryPerJob: tc.history, Executors: reg, PollInterval: 50 * time.Millisecond,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			if _, err := s.PutJob(ctx, "c", "j", &scheduler.Job{StartTime: &now, Action: action.Action{Type: "Noop", Custom: json.RawMessage(`{}`)}}, nil); err != nil {
				t.Fatal(err)
			}
			if err := s.Start(ctx); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(20 * time.Second)
			for !strings.Contains(logs.String(), tc.logged) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if err := s.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			if !st.lost.Load() {
				t.Fatal("no outcome was recorded in a batch")
			}
			if !strings.Contains(logs.String(), tc.logged) {
				t.Errorf("the log does not say %q:\n%s", tc.logged, logs.String())
			}
			r, err := st.GetJob(ctx, "c", "j")
			if err != nil {
				t.Fatal(err)
			}
			if n := runs.Load(); n != 1 || r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 1 {
				t.Errorf("the job ran %d times, is %s with %d executions; want once, Completed with 1", n, r.State, r.Status.ExecutionCount)
			}
		})
	}
}
