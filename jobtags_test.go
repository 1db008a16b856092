package scheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/memory"
)

// tagsScheduler returns a Scheduler over a memory store with collection
// "c", not started.
func tagsScheduler(t *testing.T) *scheduler.Scheduler {
	t.Helper()
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(context.Background(), "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

func hourly() *scheduler.Job {
	return &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://example.com/", Method: "GET"}},
		Recurrence: &recurrence.Recurrence{Frequency: recurrence.Hour, Interval: 1}}
}

// TestJobTags puts, reads, lists, patches and replaces the tags of jobs
// through the Scheduler's API.
func TestJobTags(t *testing.T) {
	ctx := context.Background()
	s := tagsScheduler(t)
	put := func(name string, tags map[string]string) {
		t.Helper()
		if _, err := s.PutJob(ctx, "c", name, hourly(), &scheduler.PutJobOptions{Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	given := map[string]string{"team": "ops", "tier": "1"}
	put("a", given)
	given["team"] = "changed by caller"
	put("b", map[string]string{"team": "web"})
	put("c", nil)
	put("d", map[string]string{"team": "ops", "tier": ""})
	got, err := s.GetJob(ctx, "c", "a")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"team": "ops", "tier": "1"}, got.Tags); diff != "" {
		t.Errorf("GetJob(a).Tags (-want +got):\n%s", diff)
	}
	got.Tags["team"] = "changed by reader"
	if again, _ := s.GetJob(ctx, "c", "a"); again.Tags["team"] != "ops" {
		t.Errorf("the record GetJob returned shares its tags with the store: %v", again.Tags)
	}
	for _, tc := range []struct {
		name string
		f    scheduler.TagFilter
		want []string
	}{
		{"all", scheduler.TagFilter{}, []string{"a", "b", "c", "d"}},
		{"name", scheduler.TagFilter{Name: "team"}, []string{"a", "b", "d"}},
		{"name and value", scheduler.TagFilter{Name: "team", Value: "ops"}, []string{"a", "d"}},
		{"value of another tag", scheduler.TagFilter{Name: "tier", Value: "ops"}, nil},
		{"name with an empty value", scheduler.TagFilter{Name: "tier"}, []string{"a", "d"}},
		{"name in another case", scheduler.TagFilter{Name: "Team"}, nil},
	} {
		list, err := s.ListJobs(ctx, "c", &scheduler.ListJobsOptions{Tag: tc.f})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, names(list)); diff != "" {
			t.Errorf("%s: ListJobs(Tag %+v) (-want +got):\n%s", tc.name, tc.f, diff)
		}
	}
	list, err := s.ListJobs(ctx, "c", &scheduler.ListJobsOptions{Tag: scheduler.TagFilter{Name: "team"}, Skip: 1, Top: 1})
	if err != nil || fmt.Sprint(names(list)) != "[b]" {
		t.Errorf("ListJobs(team, Skip 1, Top 1) = %v, %v, want [b]", names(list), err)
	}
	list, err = s.ListJobs(ctx, "c", &scheduler.ListJobsOptions{Tag: scheduler.TagFilter{Name: "team", Value: "web"}, Health: scheduler.HealthOK})
	if err != nil || fmt.Sprint(names(list)) != "[b]" {
		t.Errorf("ListJobs(team=web, Health OK) = %v, %v, want [b]", names(list), err)
	}

	// A merge patch of the tags: one changed, one removed, one added;
	// the definition stays, and so does the next occurrence.
	before, _ := s.GetJob(ctx, "c", "a")
	r, err := s.PatchJob(ctx, "c", "a", []byte(`{"tags": {"team": "web", "tier": null, "new": "x"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"team": "web", "new": "x"}, r.Tags); diff != "" {
		t.Errorf("PatchJob(tags).Tags (-want +got):\n%s", diff)
	}
	if r.ETag == before.ETag || !r.Schedule.NextOccurrence.Equal(before.Schedule.NextOccurrence) {
		t.Errorf("PatchJob(tags): ETag %q (was %q), next occurrence %v (was %v): want a new ETag, the same occurrence",
			r.ETag, before.ETag, r.Schedule.NextOccurrence, before.Schedule.NextOccurrence)
	}
	// In the ARM envelope, with the properties.
	r, err = s.PatchJob(ctx, "c", "a", []byte(`{"tags": {"new": "y"}, "properties": {"state": "Disabled"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != scheduler.JobDisabled || r.Tags["new"] != "y" || r.Tags["team"] != "web" {
		t.Errorf("PatchJob(envelope) = state %s, tags %v", r.State, r.Tags)
	}
	// A patch without tags keeps them; "tags": null removes them all.
	if r, err = s.PatchJob(ctx, "c", "a", []byte(`{"state": "Enabled"}`), nil); err != nil || len(r.Tags) != 2 {
		t.Errorf("PatchJob without tags: tags %v, %v", r.Tags, err)
	}
	if r, err = s.PatchJob(ctx, "c", "a", []byte(`{"tags": null}`), nil); err != nil || r.Tags != nil {
		t.Errorf("PatchJob(tags null) = tags %v, %v; want none", r.Tags, err)
	}
	// PUT replaces the tags: without any, the job has none.
	put("b", nil)
	if r, _ := s.GetJob(ctx, "c", "b"); r.Tags != nil {
		t.Errorf("PutJob without tags kept %v", r.Tags)
	}
	// The envelope of PutJobJSON.
	r, err = s.PutJobJSON(ctx, "c", "e", []byte(`{"tags": {"team": "db"}, "properties": {"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "Hour", "interval": 1}}}`), nil)
	if err != nil || r.Tags["team"] != "db" {
		t.Errorf("PutJobJSON(envelope with tags) = %v, %v", r.Tags, err)
	}
	if r, _ := s.GetJob(ctx, "c", "e"); r.Tags["team"] != "db" {
		t.Errorf("GetJob after PutJobJSON: tags %v", r.Tags)
	}
}

// TestJobTagsInvalid checks that bad tags are refused at their paths, in
// Go and in JSON, and change nothing.
func TestJobTagsInvalid(t *testing.T) {
	ctx := context.Background()
	s := tagsScheduler(t)
	many := map[string]string{}
	for i := range 16 {
		many[fmt.Sprintf("t%02d", i)] = "v"
	}
	long := strings.Repeat("n", 513)
	for _, tc := range []struct {
		name string
		tags map[string]string
		want []string
	}{
		{"too many", many, []string{"tags: has 16 tags, more than the limit of 15"}},
		{"name too long", map[string]string{long: "v"}, []string{`tags["` + long[:61] + `..."]: has a name of 513 characters, more than the limit of 512`}},
		{"value too long", map[string]string{"team": strings.Repeat("v", 257)}, []string{"tags.team: ", "is 257 characters long, more than the limit of 256 for a tag's value"}},
		{"empty name", map[string]string{"": "v"}, []string{`tags[""]: has an empty name`}},
	} {
		_, err := s.PutJob(ctx, "c", "j", hourly(), &scheduler.PutJobOptions{Tags: tc.tags})
		if err == nil {
			t.Errorf("%s: PutJob succeeded", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: PutJob = %v, want it to contain %q", tc.name, err, w)
			}
		}
	}
	if _, err := s.GetJob(ctx, "c", "j"); err == nil {
		t.Error("a put with bad tags created the job")
	}
	// In JSON: the envelope's tags, not under "properties".
	_, err := s.PutJobJSON(ctx, "c", "j", []byte(`{"tags": {"team": 1, "ok": "`+strings.Repeat("v", 257)+`"}, "properties": {"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}}}}`), nil)
	var paths []string
	for _, e := range scheduler.ValidationErrors(err) {
		paths = append(paths, e.Path)
	}
	if diff := cmp.Diff([]string{"tags.ok", "tags.team"}, paths); diff != "" {
		t.Errorf("PutJobJSON with bad tags: paths (-want +got):\n%s\n%v", diff, err)
	}
	if _, err := s.PutJobJSON(ctx, "c", "j", []byte(`{"tags": ["a"], "properties": {"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}}}}`), nil); err == nil ||
		!strings.Contains(err.Error(), `tags: ["a"] is not an object`) {
		t.Errorf("PutJobJSON with tags an array = %v", err)
	}
	if _, err := s.PutJob(ctx, "c", "j", hourly(), &scheduler.PutJobOptions{Tags: map[string]string{"a": "1"}}); err != nil {
		t.Fatal(err)
	}
	_, err = s.PatchJob(ctx, "c", "j", []byte(`{"tags": {"b": 2, "c": "`+strings.Repeat("v", 257)+`"}}`), nil)
	paths = nil
	for _, e := range scheduler.ValidationErrors(err) {
		paths = append(paths, e.Path)
	}
	if diff := cmp.Diff([]string{"tags.b"}, paths); diff != "" {
		t.Errorf("PatchJob with a tag not a string: paths (-want +got):\n%s\n%v", diff, err)
	}
	_, err = s.PatchJob(ctx, "c", "j", []byte(`{"tags": {"c": "`+strings.Repeat("v", 257)+`"}}`), nil)
	if err == nil || !strings.HasPrefix(err.Error(), "tags.c: ") {
		t.Errorf("PatchJob with a value too long = %v", err)
	}
	if r, _ := s.GetJob(ctx, "c", "j"); len(r.Tags) != 1 {
		t.Errorf("a patch with bad tags changed them: %v", r.Tags)
	}
	if _, err := s.ListJobs(ctx, "c", &scheduler.ListJobsOptions{Tag: scheduler.TagFilter{Value: "x"}}); err == nil || !strings.Contains(err.Error(), "tag.name: is required") {
		t.Errorf("ListJobs(Tag with a value and no name) = %v", err)
	}
}

// TestJobTagsSurviveRuns runs a tagged job and re-registers it with
// Schedule: neither the run's records nor Schedule drop its tags.
func TestJobTagsSurviveRuns(t *testing.T) {
	synctest.Test(t, testJobTagsSurviveRuns)
}

func testJobTagsSurviveRuns(t *testing.T) {
	ctx := context.Background()
	reg := new(action.Registry)
	done := make(chan struct{}, 10)
	noop := action.Handle(reg, "Noop", func(ctx context.Context, req *action.Request, _ struct{}) error {
		done <- struct{}{}
		return nil
	})
	s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Schedule(ctx, "j", recurrence.Every(1, recurrence.Hour), noop.Action(struct{}{})); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PatchJob(ctx, scheduler.DefaultCollection, "j", []byte(`{"tags": {"team": "ops"}}`), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	if _, err := s.RunJob(ctx, scheduler.DefaultCollection, "j"); err != nil {
		t.Fatal(err)
	}
	<-done
	synctest.Wait() // the outcome is recorded
	r, err := s.GetJob(ctx, scheduler.DefaultCollection, "j")
	if err != nil || r.Status.ExecutionCount < 1 || r.Tags["team"] != "ops" {
		t.Fatalf("after a run: executions %d, tags %v, %v; want at least 1, team=ops", r.Status.ExecutionCount, r.Tags, err)
	}
	// The program starts again with another recurrence: the job is
	// replaced, its tags stay.
	if r, err = s.Schedule(ctx, "j", recurrence.Every(2, recurrence.Hour), noop.Action(struct{}{})); err != nil || r.Tags["team"] != "ops" {
		t.Errorf("Schedule with another recurrence: tags %v, %v", r.Tags, err)
	}
}
