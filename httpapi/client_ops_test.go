package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// clientOnIdle returns a Client of the handler, with a token, over a
// scheduler that is not started (so that nothing runs), and the scheduler.
func clientOnIdle(t *testing.T) (*httpapi.Client, *scheduler.Scheduler) {
	t.Helper()
	s, err := scheduler.New(memory.New(), quiet)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := httpapi.NewTokenAuth(token + " sub1")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(s, &httpapi.Options{Authenticator: auth, Logger: quiet.Logger}))
	t.Cleanup(srv.Close)
	return httpapi.NewClient(srv.URL, &httpapi.ClientOptions{Token: token}), s
}

// TestClientRunAndBackfill: RunJob returns the run's requestedTime and
// message, and BackfillJob sends its times and options and returns the
// expected times.
func TestClientRunAndBackfill(t *testing.T) {
	c, s := clientOnIdle(t)
	ctx := context.Background()
	ref := httpapi.CollectionRef{Subscription: "sub1", ResourceGroup: "rg", Collection: "jc"}
	if _, _, err := c.PutCollection(ctx, ref, nil, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -10)
	def, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "Day"}, "startTime": "`+start.Format(time.RFC3339)+`", "state": "Enabled"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.PutJob(ctx, ref, "j", def, nil); err != nil {
		t.Fatal(err)
	}

	before := time.Now()
	run, err := c.RunJob(ctx, ref, "j")
	if err != nil {
		t.Fatal(err)
	}
	if d := run.RequestedTime.Sub(before); d < -time.Second || d > time.Minute || !strings.Contains(run.Message, "/jobs/j/history") {
		t.Errorf("RunJob = %+v, want the time of the request (%v) and where to see the outcome", run, before)
	}
	rec, err := s.GetJob(ctx, "sub1/rg/jc", "j")
	if err != nil {
		t.Fatal(err)
	}
	if !run.RequestedTime.Equal(rec.Schedule.RunRequested) {
		t.Errorf("RunJob requestedTime = %v, want the stored request's %v", run.RequestedTime, rec.Schedule.RunRequested)
	}
	if again, err := c.RunJob(ctx, ref, "j"); err != nil || !again.RequestedTime.Equal(run.RequestedTime) {
		t.Errorf("RunJob again = %+v, %v; want the pending request's %v", again, err, run.RequestedTime)
	}

	from, to := start.AddDate(0, 0, 1), start.AddDate(0, 0, 3)
	want := []time.Time{from, start.AddDate(0, 0, 2), to}
	dry, err := c.BackfillJob(ctx, ref, "j", from, to, &scheduler.BackfillOptions{Only: scheduler.BackfillAll, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, dry.ExpectedTimes); diff != "" || !dry.DryRun {
		t.Errorf("BackfillJob dry run: DryRun %v, times (-want +got):\n%s", dry.DryRun, diff)
	}
	done, err := c.BackfillJob(ctx, ref, "j", from, to, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, done.ExpectedTimes); diff != "" || done.DryRun {
		t.Errorf("BackfillJob: DryRun %v, times (-want +got):\n%s", done.DryRun, diff)
	}
	if again, err := c.BackfillJob(ctx, ref, "j", from, to, &scheduler.BackfillOptions{DryRun: true}); err != nil || len(again.ExpectedTimes) != 0 {
		t.Errorf("BackfillJob dry run of what waits to be backfilled = %+v, %v; want no times", again, err)
	}

	var re *httpapi.ResponseError
	if _, err := c.BackfillJob(ctx, ref, "j", from, to, &scheduler.BackfillOptions{Only: "Some", DryRun: true}); !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest || re.Detail.Target != "only" {
		t.Errorf("BackfillJob with Only \"Some\" = %v, want 400 at only", err)
	}
	if _, err := c.BackfillJob(ctx, ref, "j", time.Time{}, to, nil); !errors.As(err, &re) || re.StatusCode != http.StatusBadRequest || re.Detail.Target != "from" {
		t.Errorf("BackfillJob without from = %v, want 400 at from", err)
	}
	if _, err := c.RunJob(ctx, ref, "nosuch"); !errors.As(err, &re) || re.StatusCode != http.StatusNotFound {
		t.Errorf("RunJob of a job that does not exist = %v, want 404", err)
	}
}

// TestClientCalendars drives the calendar methods: put, get, list,
// If-Match on put and delete, delete.
func TestClientCalendars(t *testing.T) {
	c, _ := clientOnIdle(t)
	ctx := context.Background()
	ref := httpapi.CollectionRef{Subscription: "sub1", ResourceGroup: "rg", Collection: "jc"}
	if _, _, err := c.PutCollection(ctx, ref, nil, nil); err != nil {
		t.Fatal(err)
	}
	def := &scheduler.Calendar{Properties: scheduler.CalendarProperties{TimeZone: "Europe/Paris", Dates: []string{"2026-12-25"}}}
	cal, created, err := c.PutCalendar(ctx, ref, "holidays", def, nil)
	if err != nil || !created || cal.ETag == "" || cal.Name != "holidays" || cal.Type != httpapi.TypeCalendar {
		t.Fatalf("PutCalendar = %+v, %v, %v; want a created calendar with an ETag", cal, created, err)
	}
	if diff := cmp.Diff(def.Properties, cal.Properties); diff != "" {
		t.Errorf("PutCalendar properties (-want +got):\n%s", diff)
	}
	if _, created, err := c.PutCalendar(ctx, ref, "empty", nil, nil); err != nil || !created {
		t.Fatalf("PutCalendar(nil) = created %v, %v", created, err)
	}

	def.Properties.Dates = append(def.Properties.Dates, "2027-01-01")
	var re *httpapi.ResponseError
	if _, _, err := c.PutCalendar(ctx, ref, "holidays", def, &httpapi.WriteOptions{IfMatch: "stale"}); !errors.As(err, &re) || re.StatusCode != http.StatusPreconditionFailed {
		t.Fatalf("PutCalendar with a stale If-Match = %v, want 412", err)
	}
	replaced, created, err := c.PutCalendar(ctx, ref, "holidays", def, &httpapi.WriteOptions{IfMatch: cal.ETag})
	if err != nil || created || replaced.ETag == cal.ETag {
		t.Fatalf("PutCalendar with its ETag = %+v, created %v, %v; want replaced with a new ETag", replaced, created, err)
	}

	got, err := c.GetCalendar(ctx, ref, "holidays")
	if err != nil || got.ETag != replaced.ETag {
		t.Fatalf("GetCalendar = %+v, %v; want ETag %q", got, err, replaced.ETag)
	}
	if diff := cmp.Diff(def.Properties, got.Properties); diff != "" {
		t.Errorf("GetCalendar properties (-want +got):\n%s", diff)
	}
	list, err := c.ListCalendars(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range list {
		names = append(names, l.Name)
	}
	if diff := cmp.Diff([]string{"empty", "holidays"}, names); diff != "" {
		t.Errorf("ListCalendars names (-want +got):\n%s", diff)
	}

	if err := c.DeleteCalendar(ctx, ref, "holidays", &httpapi.WriteOptions{IfMatch: cal.ETag}); !errors.As(err, &re) || re.StatusCode != http.StatusPreconditionFailed {
		t.Fatalf("DeleteCalendar with a stale If-Match = %v, want 412", err)
	}
	if err := c.DeleteCalendar(ctx, ref, "holidays", &httpapi.WriteOptions{IfMatch: replaced.ETag}); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteCalendar(ctx, ref, "empty", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetCalendar(ctx, ref, "holidays"); !errors.As(err, &re) || re.StatusCode != http.StatusNotFound {
		t.Fatalf("GetCalendar after DeleteCalendar = %v, want 404", err)
	}
	if list, err := c.ListCalendars(ctx, ref); err != nil || len(list) != 0 {
		t.Fatalf("ListCalendars after the deletes = %+v, %v; want none", list, err)
	}
}

// TestClientDeletePreconditions: DeleteJob and DeleteCollection send
// WriteOptions.IfMatch, deleting only with the current ETag (412 with a
// stale one, deleting nothing), and every write method sends
// IfNoneMatch: a create-only PutJob, PutCollection and PutCalendar of
// what exists, and a DeleteJob with IfNoneMatch "*", answer 412.
func TestClientDeletePreconditions(t *testing.T) {
	c, _ := clientOnIdle(t)
	ctx := context.Background()
	ref := httpapi.CollectionRef{Subscription: "sub1", ResourceGroup: "rg", Collection: "jc"}
	col, created, err := c.PutCollection(ctx, ref, nil, &httpapi.WriteOptions{IfNoneMatch: "*"})
	if err != nil || !created {
		t.Fatalf("create-only PutCollection of a new collection = %v, %v; want it created", created, err)
	}
	def, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "Day"}, "state": "Disabled"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	job, created, err := c.PutJob(ctx, ref, "j", def, &httpapi.WriteOptions{IfNoneMatch: "*"})
	if err != nil || !created {
		t.Fatalf("create-only PutJob of a new job = %v, %v; want it created", created, err)
	}
	if _, _, err := c.PutCalendar(ctx, ref, "h", nil, &httpapi.WriteOptions{IfNoneMatch: "*"}); err != nil {
		t.Fatal(err)
	}
	var re *httpapi.ResponseError
	want412 := func(call string, err error) {
		t.Helper()
		if !errors.As(err, &re) || re.StatusCode != http.StatusPreconditionFailed {
			t.Errorf("%s = %v, want 412", call, err)
		}
	}
	_, _, err = c.PutCollection(ctx, ref, nil, &httpapi.WriteOptions{IfNoneMatch: "*"})
	want412("create-only PutCollection of an existing collection", err)
	_, _, err = c.PutJob(ctx, ref, "j", def, &httpapi.WriteOptions{IfNoneMatch: "*"})
	want412("create-only PutJob of an existing job", err)
	_, _, err = c.PutCalendar(ctx, ref, "h", nil, &httpapi.WriteOptions{IfNoneMatch: "*"})
	want412("create-only PutCalendar of an existing calendar", err)
	want412("DeleteJob with IfNoneMatch *", c.DeleteJob(ctx, ref, "j", &httpapi.WriteOptions{IfNoneMatch: "*"}))
	want412("DeleteJob with a stale IfMatch", c.DeleteJob(ctx, ref, "j", &httpapi.WriteOptions{IfMatch: "0000000000000000"}))
	want412("DeleteCollection with a stale IfMatch", c.DeleteCollection(ctx, ref, &httpapi.WriteOptions{IfMatch: "0000000000000000"}))
	if _, err := c.GetJob(ctx, ref, "j"); err != nil {
		t.Fatalf("GetJob after the refused deletes: %v", err)
	}
	if err := c.DeleteJob(ctx, ref, "j", &httpapi.WriteOptions{IfMatch: job.ETag}); err != nil {
		t.Errorf("DeleteJob with the job's ETag: %v", err)
	}
	if _, err := c.GetJob(ctx, ref, "j"); !errors.As(err, &re) || re.StatusCode != http.StatusNotFound {
		t.Errorf("GetJob after DeleteJob = %v, want 404", err)
	}
	// The calendar's put changed the collection's ETag.
	if cur, err := c.GetCollection(ctx, ref); err != nil || cur.ETag == col.ETag {
		t.Fatalf("GetCollection = %+v, %v; want a new ETag after the calendar's put", cur, err)
	} else if err := c.DeleteCollection(ctx, ref, &httpapi.WriteOptions{IfMatch: cur.ETag}); err != nil {
		t.Errorf("DeleteCollection with the collection's ETag: %v", err)
	}
	if _, err := c.GetCollection(ctx, ref); !errors.As(err, &re) || re.StatusCode != http.StatusNotFound {
		t.Errorf("GetCollection after DeleteCollection = %v, want 404", err)
	}
}
