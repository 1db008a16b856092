package storetest

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
)

// RunOverlap runs one Scheduler per store in stores (instances over one
// shared database, or a single store) for about seven seconds, with jobs
// every second whose first attempt lasts 2.5 s, one per overlap policy,
// and checks across the instances that no two attempts of a job run at
// once (CancelRunning's cancelled one ends first), that no occurrence
// runs twice, and what each policy does with the occurrences that came
// due meanwhile: Skip and CancelRunning run none of them late, BufferAll
// runs each in order, Postpone runs one of them.
func RunOverlap(t *testing.T, stores []scheduler.Store) {
	t.Helper()
	ctx := context.Background()
	type run struct {
		expected   time.Time
		start, end time.Time
	}
	var mu sync.Mutex
	runs := make(map[string][]run)
	scheds := make([]*scheduler.Scheduler, len(stores))
	for i, st := range stores {
		reg := &action.Registry{}
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			mu.Lock()
			first := len(runs[req.JobID]) == 0
			runs[req.JobID] = append(runs[req.JobID], run{expected: req.ExpectedTime, start: time.Now()})
			n := len(runs[req.JobID]) - 1
			mu.Unlock()
			var err error
			if first {
				select {
				case <-time.After(2500 * time.Millisecond):
				case <-ctx.Done():
					err = ctx.Err()
				}
			}
			mu.Lock()
			runs[req.JobID][n].end = time.Now()
			mu.Unlock()
			if err != nil {
				return &action.Result{Message: "cancelled"}, err
			}
			return &action.Result{Message: "ok"}, nil
		}))
		s, err := scheduler.New(st, &scheduler.Config{InstanceID: fmt.Sprintf("instance-%d", i), Executors: reg,
			PollInterval: 20 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		scheds[i] = s
	}
	coll := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{SKU: &scheduler.SKU{Name: scheduler.SKUP20Premium},
		Quota: &scheduler.Quota{MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Second, Interval: 1}}}}
	if _, err := scheds[0].PutCollection(ctx, "overlap", coll, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now().UTC().Truncate(time.Second).Add(2 * time.Second)
	policies := []string{"Postpone", "Skip", "BufferAll", "CancelRunning"}
	for i, p := range policies {
		def := `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:1/", "method": "GET"}, "retryPolicy": {"retryType": "None"}},
			"startTime": "` + start.Format(time.RFC3339) + `", "recurrence": {"frequency": "Second", "count": 6}, "runPolicy": {"overlap": "` + p + `"}}`
		job, err := scheds[0].ParseJob([]byte(def))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := scheds[i%len(scheds)].PutJob(ctx, "overlap", p, job, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range scheds {
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Until(start) + 9*time.Second)
	for _, s := range scheds {
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range policies {
		got := runs["overlap/"+p]
		var expected []time.Time
		for i, r := range got {
			expected = append(expected, r.expected)
			if i > 0 && r.start.Before(got[i-1].end) {
				t.Errorf("%s: attempt %d started at %v, before attempt %d ended at %v", p, i, r.start, i-1, got[i-1].end)
			}
		}
		if !slices.IsSortedFunc(expected, time.Time.Compare) || len(slices.CompactFunc(slices.Clone(expected), time.Time.Equal)) != len(expected) {
			t.Errorf("%s ran for %v; want each occurrence once, in order", p, expected)
			continue
		}
		if len(expected) == 0 || !expected[0].Equal(start) {
			t.Errorf("%s ran for %v; want the first at %v", p, expected, start)
			continue
		}
		// The first attempt runs from start to start+2.5s (CancelRunning:
		// to start+1s); start+1s and start+2s come due meanwhile.
		late := func(at time.Time) bool { return at.After(start) && at.Before(start.Add(2500*time.Millisecond)) }
		var lateRuns int
		for _, e := range expected {
			if late(e) {
				lateRuns++
			}
		}
		want := map[string]int{"Postpone": 1, "Skip": 0, "BufferAll": 2, "CancelRunning": 2}[p]
		if lateRuns != want {
			t.Errorf("%s ran %d of the occurrences due during the first attempt (%v), want %d", p, lateRuns, expected, want)
		}
	}
}
