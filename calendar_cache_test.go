package scheduler_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

// TestCompiledCalendarsDropped: a Scheduler keeps compiled the calendars
// its jobs name, and drops those of a calendar deleted when it reads the
// collection again (another instance's deletion, within the policy
// cache's 5 s), keeping the others.
func TestCompiledCalendarsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := memory.New()
		writer, err := scheduler.New(st, &scheduler.Config{Logger: discard})
		if err != nil {
			t.Fatal(err)
		}
		reader, err := scheduler.New(st, &scheduler.Config{Logger: discard})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := writer.PutCollection(ctx, "c", nil, nil); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", "b"} {
			if _, err := writer.PutCalendar(ctx, "c", name, holidays(), nil); err != nil {
				t.Fatal(err)
			}
			job, err := scheduler.ParseJob([]byte(jobJSON(time.Now().Add(time.Hour), `"recurrence": {"frequency": "Day", "calendar": "`+name+`"}`)), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := writer.PutJob(ctx, "c", name, job, nil); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range []string{"a", "b"} {
			if _, err := reader.GetJob(ctx, "c", name); err != nil { // its health compiles the calendar
				t.Fatal(err)
			}
		}
		if diff := cmp.Diff([]string{"a", "b"}, reader.CompiledCalendars("c")); diff != "" {
			t.Fatalf("compiled calendars of the reader (-want +got):\n%s", diff)
		}
		if err := writer.DeleteJob(ctx, "c", "b", nil); err != nil {
			t.Fatal(err)
		}
		if err := writer.DeleteCalendar(ctx, "c", "b", nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"a"}, writer.CompiledCalendars("c")); diff != "" {
			t.Errorf("compiled calendars of the writer after the deletion (-want +got):\n%s", diff)
		}
		time.Sleep(6 * time.Second)
		if _, err := reader.GetJob(ctx, "c", "a"); err != nil { // reads the collection again
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"a"}, reader.CompiledCalendars("c")); diff != "" {
			t.Errorf("compiled calendars of the reader after the deletion (-want +got):\n%s", diff)
		}
	})
}
