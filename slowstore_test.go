package scheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// TestJobsStartOnTimeWhileStoreHoldsRecords checks that outcomes waiting
// for a RecordBatch that does not answer keep no worker from the jobs due
// meanwhile (the first RecordBatch is held, and the outcomes that end
// during it wait for it): with 4 workers, 40 one-time jobs due in waves
// of 10 a second apart each start at their instant, although no outcome
// is recorded until the store answers a minute later (the loop polls
// every 10s); then every outcome is recorded and each job ran once.
func TestJobsStartOnTimeWhileStoreHoldsRecords(t *testing.T) {
	const waves, per = 4, 10
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var mu sync.Mutex
		started := map[string]time.Time{}
		reg := &action.Registry{}
		reg.Register("Noop", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			if _, ok := started[req.IDs.JobID()]; ok {
				return nil, fmt.Errorf("job %s ran again", req.IDs.JobID())
			}
			started[req.IDs.JobID()] = time.Now()
			return nil, nil
		}))
		st := &slowBatches{Store: memory.New(), open: make(chan struct{})}
		cfg := &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler), MaxConcurrency: 4,
			PollInterval: 10 * time.Second, LeaseDuration: 3 * time.Second}
		s, err := scheduler.New(st, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
			t.Fatal(err)
		}
		first := time.Now().Add(time.Minute)
		due := map[string]time.Time{} // by job name
		for w := range waves {
			at := first.Add(time.Duration(w) * time.Second)
			for i := range per {
				name := fmt.Sprintf("w%dj%d", w, i)
				due[name] = at
				def := &scheduler.Job{StartTime: &at, Action: action.Action{Type: "Noop", Custom: []byte(`{}`)}}
				if _, err := s.PutJob(ctx, "c", name, def, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(first) + time.Minute)
		synctest.Wait()
		mu.Lock()
		for name, at := range due {
			if got, ok := started["c/"+name]; !ok || got.Sub(at) > 0 {
				t.Errorf("job %s due at +%v started at +%v (ran: %t), want at its instant while the store held the records", name, at.Sub(first), got.Sub(first), ok)
			}
		}
		mu.Unlock()
		close(st.open)
		time.Sleep(time.Minute)
		synctest.Wait()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		for name := range due {
			r, err := st.GetJob(ctx, "c", name)
			if err != nil {
				t.Fatal(err)
			}
			if r.State != scheduler.JobCompleted || r.Status.ExecutionCount != 1 {
				t.Errorf("job %s once the store answered: state %s, %d executions; want Completed, 1", name, r.State, r.Status.ExecutionCount)
			}
		}
	})
}

// TestOutcomesWaitingForStoreBounded checks the bound on the outcomes
// waiting for the store that leave their workers to other jobs: with the
// first RecordBatch held, 2,148 one-time jobs due at once start until
// 2,048 outcomes wait (and the attempts then running end); the others
// start once the store answers, and every job runs once.
func TestOutcomesWaitingForStoreBounded(t *testing.T) {
	const n, waiting, workers = 2148, 2048, 4
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, st, ran, due := heldBurst(t, n, scheduler.Config{Logger: slog.New(slog.DiscardHandler), MaxConcurrency: workers,
			HistoryPerJob: scheduler.NoHistory, PollInterval: time.Second})
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(due) + time.Minute)
		synctest.Wait()
		if got := ran.Load(); got < waiting || got > waiting+workers {
			t.Errorf("%d attempts with the store held, want %d to %d", got, waiting, waiting+workers)
		}
		close(st.open)
		time.Sleep(time.Minute)
		synctest.Wait()
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		if got := ran.Load(); got != n {
			t.Errorf("%d attempts of %d one-time jobs, want %d", got, n, n)
		}
		ranOnce(t, st, n)
	})
}
