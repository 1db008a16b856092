package postgres_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
)

// TestCalendarChangeReachesOtherInstance: a calendar replaced through one
// Scheduler changes the occurrences of the job that names it on another
// Scheduler over the same database (its own pool), within the 5 s for
// which an instance keeps a collection's calendars. The job runs every
// second; the new calendar excludes two seconds that come 9 s after the
// job starts, which the runner skips with one Skipped entry naming the
// calendar. It takes about 13 s of real time.
func TestCalendarChangeReachesOtherInstance(t *testing.T) {
	ctx := context.Background()
	schema := newSchema(t)
	newScheduler := func(id string, reg *action.Registry) *scheduler.Scheduler {
		s, err := scheduler.New(open(t, schema), &scheduler.Config{InstanceID: id, Executors: reg,
			PollInterval: 100 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	reg := &action.Registry{}
	reg.Register(action.HTTP, action.ExecutorFunc(func(context.Context, *action.Request) (*action.Result, error) {
		return &action.Result{Message: "ok"}, nil
	}))
	writer, runner := newScheduler("writer", nil), newScheduler("runner", reg)
	if _, err := writer.PutCollection(ctx, "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
		Quota: &scheduler.Quota{MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Second, Interval: 1}}}}, nil); err != nil {
		t.Fatal(err)
	}
	calendar := func(def string) *scheduler.Calendar {
		c, err := scheduler.ParseCalendar([]byte(def))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if _, err := writer.PutCalendar(ctx, "c", "cal", calendar(`{"properties": {"timeZone": "UTC", "dates": ["2000-01-01"]}}`), nil); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Truncate(time.Second).Add(time.Second)
	job, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"}},
		"startTime": "`+t0.UTC().Format(time.RFC3339)+`", "recurrence": {"frequency": "Second", "calendar": "cal"}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.PutJob(ctx, "c", "j", job, nil); err != nil {
		t.Fatal(err)
	}
	if err := runner.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer runner.Stop(ctx)
	time.Sleep(time.Until(t0.Add(1500 * time.Millisecond))) // the runner read the old calendar
	from, to := t0.Add(9*time.Second), t0.Add(11*time.Second)
	local := "2006-01-02T15:04:05"
	def := fmt.Sprintf(`{"properties": {"timeZone": "UTC", "ranges": [{"start": %q, "end": %q}]}}`, from.UTC().Format(local), to.UTC().Format(local))
	if _, err := writer.PutCalendar(ctx, "c", "cal", calendar(def), nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(t0.Add(13 * time.Second)))
	runner.Stop(ctx)

	hist, err := writer.ListHistory(ctx, "c", "j", nil)
	if err != nil {
		t.Fatal(err)
	}
	var skips []scheduler.HistoryEntry
	ran := map[time.Time]bool{}
	for _, h := range hist {
		switch h.Status {
		case scheduler.StatusSkipped:
			skips = append(skips, h)
		case scheduler.StatusCompleted:
			ran[h.ExpectedExecutionTime.UTC()] = true
		}
	}
	for at := from; at.Before(to); at = at.Add(time.Second) {
		if ran[at.UTC()] {
			t.Errorf("the runner ran the occurrence at %v, which the new calendar excludes", at)
		}
	}
	if !ran[to.UTC()] || !ran[from.Add(-time.Second).UTC()] {
		t.Errorf("the runner did not run the occurrences at %v and %v around the excluded ones (ran %v)", from.Add(-time.Second), to, ran)
	}
	if len(skips) != 1 || skips[0].Skipped != 2 || !skips[0].ExpectedExecutionTime.Equal(from) || !strings.Contains(skips[0].Message, `calendar "cal"`) {
		t.Errorf("Skipped entries %+v, want one of 2 occurrences from %v naming the calendar", skips, from)
	}
}
