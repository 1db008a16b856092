package storetest

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// RunSchedulers runs one Scheduler per store in stores (instances over one
// shared database, or a single store) with a counting executor, gives them
// one-time jobs that are due at once, and checks that each job ran exactly
// once, left exactly one history entry, and ended Completed.
func RunSchedulers(t *testing.T, stores []scheduler.Store) {
	t.Helper()
	ctx := context.Background()
	const jobs = 150
	var mu sync.Mutex
	runs := make(map[string][]string) // job -> instances
	done := make(chan struct{})
	histories := 0
	scheds := make([]*scheduler.Scheduler, len(stores))
	for i, st := range stores {
		id := fmt.Sprintf("instance-%d", i)
		reg := &action.Registry{}
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			mu.Lock()
			runs[req.JobID] = append(runs[req.JobID], id)
			mu.Unlock()
			return &action.Result{Message: "ok"}, nil
		}))
		s, err := scheduler.New(st, &scheduler.Config{InstanceID: id, Executors: reg, PollInterval: 20 * time.Millisecond,
			Logger: slog.New(slog.DiscardHandler),
			OnHistory: func(scheduler.HistoryEntry) {
				mu.Lock()
				defer mu.Unlock()
				if histories++; histories == jobs {
					close(done)
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		scheds[i] = s
	}
	coll := &scheduler.JobCollection{}
	coll.Properties.SKU = &scheduler.SKU{Name: scheduler.SKUP20Premium}
	if _, err := scheds[0].PutCollection(ctx, "shared", coll, nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range scheds {
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := range jobs {
		def := &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://127.0.0.1:1/", Method: "GET"}}}
		if _, err := scheds[i%len(scheds)].PutJob(ctx, "shared", fmt.Sprintf("j%03d", i), def, nil); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		mu.Lock()
		t.Errorf("%d of %d history entries within 30s", histories, jobs)
		mu.Unlock()
	}
	for _, s := range scheds {
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(runs) != jobs {
		t.Errorf("%d jobs ran, want %d", len(runs), jobs)
	}
	for id, who := range runs {
		if len(who) != 1 {
			t.Errorf("job %s ran %d times: %v", id, len(who), who)
		}
	}
	for i := range jobs {
		name := fmt.Sprintf("j%03d", i)
		j, err := stores[0].GetJob(ctx, "shared", name)
		if err != nil {
			t.Fatal(err)
		}
		h, err := stores[len(stores)-1].ListHistory(ctx, "shared", name, scheduler.HistoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if j.State != scheduler.JobCompleted || len(h) != 1 || h[0].Status != scheduler.StatusCompleted || j.LeaseOwner != "" {
			t.Errorf("%s: state %s, %d history entries, lease %q; want Completed, 1 Completed entry, no lease", name, j.State, len(h), j.LeaseOwner)
		}
	}
}
