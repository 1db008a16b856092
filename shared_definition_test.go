package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

// sharedDef returns a definition with every kind of member a caller could
// change after putting it: pointers, maps, slices, raw JSON.
func sharedDef() *scheduler.Job {
	start := time.Now().UTC().Truncate(time.Hour).AddDate(0, 1, 0)
	end := start.AddDate(1, 0, 0)
	return &scheduler.Job{
		StartTime: &start,
		Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{
			URI: "http://example.com/a", Method: "POST", Body: "b", Headers: map[string]string{"X-A": "1"}},
			RetryPolicy: &retry.Policy{Type: retry.Fixed, Interval: retry.Duration(time.Minute), Count: new(2)},
			ErrorAction: &action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://example.com/e", Method: "GET"}},
		},
		Recurrence: &recurrence.Recurrence{Frequency: recurrence.Week, EndTime: &end,
			Schedule: &recurrence.Schedule{WeekDays: []recurrence.Weekday{recurrence.Monday}, Hours: []int{10, 22}}},
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPutJobKeepsItsOwnCopy changes every part of a definition after
// PutJob returns, and of the record it returned: the stored job does not
// change.
func TestPutJobKeepsItsOwnCopy(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, scheduler.Config{})
	def := sharedDef()
	r, err := e.s.PutJob(ctx, "c", "j", def, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := jsonOf(t, r.Job)

	*def.StartTime = def.StartTime.Add(time.Hour)
	def.Action.Request.URI = "http://example.com/changed"
	def.Action.Request.Headers["X-A"] = "changed"
	def.Action.Request.Headers["X-B"] = "added"
	*def.Action.RetryPolicy.Count = 9
	def.Action.ErrorAction.Request.Method = "DELETE"
	*def.Recurrence.EndTime = def.Recurrence.EndTime.AddDate(5, 0, 0)
	def.Recurrence.Schedule.Hours[0] = 11
	def.Recurrence.Schedule.WeekDays[0] = recurrence.Friday
	def.Recurrence.Interval = 3

	got, err := e.s.GetJob(ctx, "c", "j")
	if err != nil {
		t.Fatal(err)
	}
	if g := jsonOf(t, got.Job); g != want {
		t.Errorf("after the caller changed its definition, the stored job is\n%s\nwant\n%s", g, want)
	}

	// The definition a record hands out is a copy too.
	d := got.Definition()
	d.State = scheduler.JobDisabled
	d.Status.ExecutionCount = 42
	again, err := e.s.GetJob(ctx, "c", "j")
	if err != nil {
		t.Fatal(err)
	}
	if again.State != scheduler.JobEnabled || again.Status.ExecutionCount != 0 {
		t.Errorf("changing Definition() reached the store: state %s, executionCount %d", again.State, again.Status.ExecutionCount)
	}
}

// TestSharedDefinitionReadOnly reads one stored definition from many
// goroutines in every way the API offers, while others replace other jobs:
// run with -race, it fails if any of those reads writes to the definition
// the store holds; the definition is unchanged afterwards.
func TestSharedDefinitionReadOnly(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, scheduler.Config{})
	if _, err := e.s.PutJob(ctx, "c", "j", sharedDef(), nil); err != nil {
		t.Fatal(err)
	}
	first, err := e.s.GetJob(ctx, "c", "j")
	if err != nil {
		t.Fatal(err)
	}
	want := jsonOf(t, first.Job)
	for g := 1; g < 8; g += 2 {
		if _, err := e.s.PutJob(ctx, "c", fmt.Sprintf("other%d", g), sharedDef(), nil); err != nil {
			t.Fatal(err)
		}
	}
	opts := e.s.ParseOptions()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				r, err := e.s.GetJob(ctx, "c", "j")
				if err != nil {
					t.Error(err)
					return
				}
				if jsonOf(t, r.Job) != want {
					t.Error("GetJob returned another definition than the one stored")
				}
				_ = jsonOf(t, r.Definition())
				if err := r.Job.Validate(&opts); err != nil {
					t.Error(err)
				}
				if _, err := r.Job.Timing(r.Collection, r.Name, time.Now()); err != nil {
					t.Error(err)
				}
				if _, err := e.s.ListJobs(ctx, "c", nil); err != nil {
					t.Error(err)
				}
				// Each writer has its own job: a patch loses its
				// compare-and-swap to every put in between, and a writer
				// putting in a tight loop could make it lose every time.
				if g%2 == 0 {
					if _, err := e.s.PutJob(ctx, "c", fmt.Sprintf("other%d", g), sharedDef(), nil); err != nil {
						t.Error(err)
					}
				} else if i%10 == 0 {
					if _, err := e.s.PatchJob(ctx, "c", fmt.Sprintf("other%d", g), []byte(`{"state": "Enabled"}`), nil); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if g := jsonOf(t, first.Job); g != want {
		t.Errorf("shared definition changed under its readers:\n%s\nwant\n%s", g, want)
	}
}
