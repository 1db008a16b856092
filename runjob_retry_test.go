package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// TestRunNowAgainKeepsRetries: a run requested while a requested run's
// attempt is in progress leaves that run its retries (and runs once after
// it).
func TestRunNowAgainKeepsRetries(t *testing.T) {
	for _, again := range []bool{false, true} {
		t.Run(fmt.Sprint("again=", again), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				type call struct {
					tag   string
					retry int
				}
				var calls []call
				reg := &action.Registry{}
				n := 0
				reg.Register("Flaky", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
					n++
					calls = append(calls, call{req.IDs.ExecutionTag(), req.Retry})
					time.Sleep(5 * time.Second)
					if n == 1 {
						return nil, errors.New("first attempt fails")
					}
					return &action.Result{Message: "ok"}, nil
				}))
				s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, InstanceID: "a", Logger: discard})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
					t.Fatal(err)
				}
				t0 := time.Now()
				def, err := scheduler.ParseJob([]byte(fmt.Sprintf(`{"action": {"type": "Flaky", "custom": {}, "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2}}, "startTime": %q}`, t0.AddDate(1, 0, 0).Format(time.RFC3339))),
					&scheduler.ParseOptions{ActionTypes: []action.Type{"Flaky"}})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.PutJob(ctx, "c", "j", def, nil); err != nil {
					t.Fatal(err)
				}
				if err := s.Start(ctx); err != nil {
					t.Fatal(err)
				}
				if _, err := s.RunJob(ctx, "c", "j"); err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Second)
				if again {
					if _, err := s.RunJob(ctx, "c", "j"); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(5 * time.Minute)
				if err := s.Stop(ctx); err != nil {
					t.Error(err)
				}
				// The failed run's retry comes second, with its tag; the
				// run requested while it ran comes after it, once.
				want := 2
				if again {
					want = 3
				}
				if len(calls) != want || calls[1].tag != calls[0].tag || calls[1].retry != 1 {
					t.Fatalf("attempts %+v; want the first run's retry second (same tag, retry 1), %d attempts in all", calls, want)
				}
				if again && calls[2].tag == calls[0].tag {
					t.Errorf("the run requested while the first ran has the first's tag: %+v", calls)
				}
			})
		})
	}
}
