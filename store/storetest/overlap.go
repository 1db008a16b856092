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
// runs each in order, Postpone runs one of them. A job under AllowAll,
// every attempt of which lasts 2.5 s, runs each of its six occurrences
// once, on time (within 750 ms), three side by side.
func RunOverlap(t *testing.T, stores []scheduler.Store) {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	runs := make(map[string][]overlapRun)
	scheds := make([]*scheduler.Scheduler, len(stores))
	for i, st := range stores {
		reg := &action.Registry{}
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			mu.Lock()
			first := len(runs[req.JobID]) == 0 || req.JobID == "overlap/AllowAll"
			runs[req.JobID] = append(runs[req.JobID], overlapRun{expected: req.ExpectedTime, start: time.Now()})
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
	policies := []string{"Postpone", "Skip", "BufferAll", "CancelRunning", "AllowAll"}
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
	for _, p := range policies[:len(policies)-1] {
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
	allowAll(t, start, runs["overlap/AllowAll"])
}

// overlapRun is an attempt that RunOverlap's executor saw.
type overlapRun struct {
	expected   time.Time
	start, end time.Time
}

// allowAll checks the attempts of RunOverlap's job under AllowAll: one for
// each of the six occurrences from start, on time, three at once.
func allowAll(t *testing.T, start time.Time, got []overlapRun) {
	t.Helper()
	var expected []time.Time
	for _, r := range got {
		expected = append(expected, r.expected)
	}
	slices.SortFunc(expected, time.Time.Compare)
	var want []time.Time
	for i := range 6 {
		want = append(want, start.Add(time.Duration(i)*time.Second))
	}
	if !slices.EqualFunc(want, expected, time.Time.Equal) {
		t.Errorf("AllowAll ran for %v; want each of %v once", expected, want)
	}
	most := 0
	for _, r := range got {
		if late := r.start.Sub(r.expected); late > 750*time.Millisecond {
			t.Errorf("AllowAll ran the occurrence expected at %v %v late", r.expected, late)
		}
		at := 0
		for _, o := range got {
			if !o.start.After(r.start) && (o.end.IsZero() || o.end.After(r.start)) {
				at++
			}
		}
		most = max(most, at)
	}
	if most != 3 {
		t.Errorf("AllowAll ran at most %d attempts at once, want 3 (each lasts 2.5 s, one starts every second)", most)
	}
}
