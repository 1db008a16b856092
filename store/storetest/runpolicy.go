package storetest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// RunRunPolicies runs one Scheduler per store in stores (instances over one
// shared database, or a single store) and checks pauses across them, in
// real time (a few seconds):
//   - one-time jobs put Disabled with a resumeTime are enabled at that
//     instant by one instance, and their missed occurrence runs exactly
//     once, after it, without the pause left on record;
//   - minutely jobs with pauseAfterFaults 1 whose first occurrence faults
//     run once and are Disabled with a reason, by whichever instance ran
//     them.
func RunRunPolicies(t *testing.T, stores []scheduler.Store) {
	t.Helper()
	ctx := context.Background()
	type run struct {
		instance string
		start    time.Time
	}
	var mu sync.Mutex
	runs := make(map[string][]run) // job -> its attempts
	scheds := make([]*scheduler.Scheduler, len(stores))
	for i, st := range stores {
		id := fmt.Sprintf("instance-%d", i)
		reg := &action.Registry{}
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			mu.Lock()
			runs[req.JobID] = append(runs[req.JobID], run{id, time.Now()})
			mu.Unlock()
			if req.Action.Request.URI == "http://127.0.0.1:1/fail" {
				return &action.Result{Message: "failed"}, errors.New("boom")
			}
			return &action.Result{Message: "ok"}, nil
		}))
		s, err := scheduler.New(st, &scheduler.Config{InstanceID: id, Executors: reg, PollInterval: 20 * time.Millisecond,
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		scheds[i] = s
	}
	coll := &scheduler.JobCollection{}
	coll.Properties.SKU = &scheduler.SKU{Name: scheduler.SKUP20Premium}
	if _, err := scheds[0].PutCollection(ctx, "policies", coll, nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range scheds {
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	const paused, faulty = 30, 10
	resume := time.Now().UTC().Add(1500 * time.Millisecond)
	put := func(s *scheduler.Scheduler, name, def string) {
		t.Helper()
		job, err := s.ParseJob([]byte(def))
		if err != nil {
			t.Fatalf("ParseJob(%s): %v", name, err)
		}
		if _, err := s.PutJob(ctx, "policies", name, job, nil); err != nil {
			t.Fatalf("PutJob(%s): %v", name, err)
		}
	}
	act := func(uri string) string {
		return `"action": {"type": "Http", "request": {"uri": "` + uri + `", "method": "GET"}, "retryPolicy": {"retryType": "None"}}`
	}
	for i := range paused {
		put(scheds[i%len(scheds)], fmt.Sprintf("paused%02d", i), `{`+act("http://127.0.0.1:1/ok")+`, "state": "Disabled",
			"stateReason": "test", "resumeTime": "`+resume.Format(time.RFC3339Nano)+`"}`)
	}
	for i := range faulty {
		put(scheds[i%len(scheds)], fmt.Sprintf("faulty%02d", i), `{`+act("http://127.0.0.1:1/fail")+`,
			"recurrence": {"frequency": "Minute"}, "runPolicy": {"pauseAfterFaults": 1}}`)
	}
	time.Sleep(time.Until(resume) + 2*time.Second)
	for _, s := range scheds {
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range paused {
		name := fmt.Sprintf("paused%02d", i)
		got := runs["policies/"+name]
		if len(got) != 1 || got[0].start.Before(resume) {
			t.Errorf("%s ran %+v; want once, after its resumeTime %v", name, got, resume)
		}
		j, err := stores[len(stores)-1].GetJob(ctx, "policies", name)
		if err != nil {
			t.Fatal(err)
		}
		if d := j.Definition(); j.State != scheduler.JobCompleted || d.StateReason != "" || d.ResumeTime != nil || j.Schedule.StateReason != "" || !j.Schedule.ResumeTime.IsZero() {
			t.Errorf("%s: %s %q %v; want Completed without a pause", name, j.State, j.Schedule.StateReason, j.Schedule.ResumeTime)
		}
	}
	for i := range faulty {
		name := fmt.Sprintf("faulty%02d", i)
		if got := runs["policies/"+name]; len(got) != 1 {
			t.Errorf("%s ran %d times, want once", name, len(got))
		}
		j, err := stores[0].GetJob(ctx, "policies", name)
		if err != nil {
			t.Fatal(err)
		}
		if d := j.Definition(); j.State != scheduler.JobDisabled || d.StateReason == "" || j.Status.FaultedCount != 1 {
			t.Errorf("%s: %s %q, %d faulted; want Disabled with a reason after 1 fault", name, j.State, d.StateReason, j.Status.FaultedCount)
		}
	}
}
