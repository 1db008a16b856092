package storetest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
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
//     them;
//   - minutely jobs left with ten missed occurrences (their records written
//     through the store as a scheduler that was down would leave them):
//     under missed RunAll and overlap BufferAll each occurrence runs
//     exactly once, in order, never two of one job at a time; a definition
//     without runPolicy (Azure's) runs once for them, as before, and has
//     the others on record as one Skipped entry.
func RunRunPolicies(t *testing.T, stores []scheduler.Store) {
	t.Helper()
	ctx := context.Background()
	type run struct {
		instance string
		start    time.Time
		expected time.Time
	}
	var mu sync.Mutex
	runs := make(map[string][]run) // job -> its attempts
	running := make(map[string]bool)
	overlapped := make(map[string]bool)
	scheds := make([]*scheduler.Scheduler, len(stores))
	for i, st := range stores {
		id := fmt.Sprintf("instance-%d", i)
		reg := &action.Registry{}
		reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			mu.Lock()
			runs[req.JobID()] = append(runs[req.JobID()], run{id, time.Now(), req.ExpectedTime})
			overlapped[req.JobID()] = overlapped[req.JobID()] || running[req.JobID()]
			running[req.JobID()] = true
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			mu.Lock()
			running[req.JobID()] = false
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
	// The backlog: jobs put before any scheduler starts, whose records then
	// say that ten occurrences were missed, as a scheduler that was down
	// for ten minutes would have left them.
	const backlog, missed = 6, 10
	start := time.Now().UTC().Truncate(time.Minute).Add(-missed * time.Minute)
	backlogDef := func(policy string) *scheduler.Job {
		def := `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:1/ok", "method": "GET"}, "retryPolicy": {"retryType": "None"}},
			"startTime": "` + start.Format(time.RFC3339) + `", "recurrence": {"frequency": "Minute"}` + policy + `}`
		job, err := scheds[0].ParseJob([]byte(def))
		if err != nil {
			t.Fatal(err)
		}
		return job
	}
	for i := range backlog {
		for _, kind := range []string{"buffer", "azure"} {
			name := fmt.Sprintf("%s%02d", kind, i)
			policy := ""
			if kind == "buffer" {
				policy = `, "runPolicy": {"missed": "RunAll", "overlap": "BufferAll"}`
			}
			if _, err := scheds[i%len(scheds)].PutJob(ctx, "policies", name, backlogDef(policy), nil); err != nil {
				t.Fatal(err)
			}
			r, err := stores[0].GetJob(ctx, "policies", name)
			if err != nil {
				t.Fatal(err)
			}
			r.Schedule.NextOccurrence, r.Schedule.DueAt, r.Schedule.Anchor = start, start, start
			r.Created = start
			next := start
			r.Status.NextExecutionTime = &next
			if err := stores[0].PutJob(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, s := range scheds {
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	const paused, faulty = 30, 10
	// Each paused job resumes 1.5 s after it is put: one resume time for
	// all of them could be in the past by the last put on a busy machine.
	resumes := make(map[string]time.Time, paused)
	var last time.Time
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
		name := fmt.Sprintf("paused%02d", i)
		resume := time.Now().UTC().Add(1500 * time.Millisecond)
		resumes[name], last = resume, resume
		put(scheds[i%len(scheds)], name, `{`+act("http://127.0.0.1:1/ok")+`, "state": "Disabled",
			"stateReason": "test", "resumeTime": "`+resume.Format(time.RFC3339Nano)+`"}`)
	}
	for i := range faulty {
		put(scheds[i%len(scheds)], fmt.Sprintf("faulty%02d", i), `{`+act("http://127.0.0.1:1/fail")+`,
			"recurrence": {"frequency": "Minute"}, "runPolicy": {"pauseAfterFaults": 1}}`)
	}
	time.Sleep(time.Until(last) + 2*time.Second)
	for _, s := range scheds {
		if err := s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range paused {
		name := fmt.Sprintf("paused%02d", i)
		got, resume := runs["policies/"+name], resumes[name]
		if len(got) != 1 || got[0].start.Before(resume) {
			t.Errorf("%s ran %+v; want once, after its resumeTime %v", name, got, resume)
		}
		j, err := stores[len(stores)-1].GetJob(ctx, "policies", name)
		if err != nil {
			t.Fatal(err)
		}
		if d := j.Definition(); j.State != scheduler.JobCompleted || d.StateReason != "" || d.ResumeTime != nil || j.Schedule.Policy != nil {
			t.Errorf("%s: %s %+v; want Completed without a pause", name, j.State, j.Schedule.Policy)
		}
	}
	for id, o := range overlapped {
		if o {
			t.Errorf("two attempts of %s ran at the same time", id)
		}
	}
	for i := range backlog {
		name := fmt.Sprintf("buffer%02d", i)
		got := runs["policies/"+name]
		var expected []time.Time
		for _, r := range got {
			expected = append(expected, r.expected)
		}
		// The ten missed, the one due when they started, maybe the next.
		if len(expected) < missed+1 || !slices.IsSortedFunc(expected, time.Time.Compare) || !expected[0].Equal(start) ||
			len(slices.CompactFunc(slices.Clone(expected), time.Time.Equal)) != len(expected) {
			t.Errorf("%s ran for %v; want each of the %d missed occurrences from %v and the one due, once, in order", name, expected, missed, start)
		}
		name = fmt.Sprintf("azure%02d", i)
		got = runs["policies/"+name]
		if len(got) < 1 || len(got) > 2 || !got[0].expected.Equal(start) {
			t.Errorf("%s ran %+v; want once for the missed ones, expected at %v (and at most once more, on schedule)", name, got, start)
		}
		h, err := stores[0].ListHistory(ctx, "policies", name, scheduler.HistoryFilter{Status: scheduler.StatusSkipped})
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 1 || h[0].Skipped != missed {
			t.Errorf("%s: Skipped entries %+v; want one for the %d merged into the run", name, h, missed)
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
