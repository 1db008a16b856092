package scheduler_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	scheduler "github.com/jobclock/scheduler"
)

// TestListJobsOrderBy: ListJobs lists in the order asked for, by the
// store, also with a health filter, and refuses an order it does not
// know.
func TestListJobsOrderBy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		for i, n := range []string{"a", "b", "c"} {
			e.put(n, jobJSON(e.t0.Add(time.Duration(3-i)*time.Hour), "")) // c runs first
		}
		if _, err := e.s.DisableJob(ctx, "c", "b"); err != nil {
			t.Fatal(err)
		}
		names := func(opts *scheduler.ListJobsOptions) []string {
			t.Helper()
			list, err := e.s.ListJobs(ctx, "c", opts)
			if err != nil {
				t.Fatalf("ListJobs(%+v): %v", opts, err)
			}
			var ns []string
			for _, j := range list {
				ns = append(ns, j.Name)
			}
			return ns
		}
		for _, tt := range []struct {
			name string
			opts scheduler.ListJobsOptions
			want []string
		}{
			{"next", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution}, []string{"c", "a", "b"}},
			{"next, descending", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution, Descending: true}, []string{"b", "a", "c"}},
			{"next, a page", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution, Skip: 1, Top: 1}, []string{"a"}},
			{"name, descending", scheduler.ListJobsOptions{Descending: true}, []string{"c", "b", "a"}},
			{"next, by health", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution, Health: scheduler.HealthOK}, []string{"c", "a", "b"}},
			{"next, by health, descending", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution, Health: scheduler.HealthOK, Descending: true, Top: 2}, []string{"b", "a"}},
		} {
			if diff := cmp.Diff(tt.want, names(&tt.opts)); diff != "" {
				t.Errorf("ListJobs(%s) (-want +got):\n%s", tt.name, diff)
			}
		}
		_, err := e.s.ListJobs(ctx, "c", &scheduler.ListJobsOptions{OrderBy: "due"})
		var ve *scheduler.ValidationError
		if !errors.As(err, &ve) || ve.Path != "orderBy" {
			t.Errorf("ListJobs(OrderBy due) = %v, want a ValidationError of orderBy", err)
		}
	})
}

// TestListJobsOrderByShownNext: by next execution time in a collection
// with exclusion calendars, ListJobs lists in the order of the next
// execution times it shows, not of those the records planned: a job
// planned on a day its calendar now excludes shows (and sorts at) the
// day the calendar moves it to. Its record is written as an instance
// that held an older version of the calendar would have left it.
func TestListJobsOrderByShownNext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		day := func(d, h int) time.Time { return time.Date(2000, 1, d, h, 0, 0, 0, time.UTC) }
		e.putCalendar("hol", `{"properties": {"dates": ["2000-01-03"]}}`)
		e.put("cal", jobJSON(day(3, 0), `"recurrence": {"frequency": "Day", "calendar": "hol"}`))
		e.put("plain", jobJSON(day(3, 12), `"recurrence": {"frequency": "Day"}`))
		e.put("later", jobJSON(day(5, 0), `"recurrence": {"frequency": "Day"}`))
		rec, err := e.store.GetJob(ctx, "c", "cal")
		if err != nil {
			t.Fatal(err)
		}
		stale := day(3, 0)
		rec.Schedule.NextOccurrence, rec.Schedule.DueAt, rec.Status.NextExecutionTime = stale, stale, &stale
		if err := e.store.PutJob(ctx, rec); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name string
			opts scheduler.ListJobsOptions
			want []string
		}{
			{"next", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution}, []string{"plain", "cal", "later"}},
			{"next, descending", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution, Descending: true}, []string{"later", "cal", "plain"}},
			{"next, a page", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution, Skip: 1, Top: 1}, []string{"cal"}},
			{"next, by health", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution, Health: scheduler.HealthOK, Top: 2}, []string{"plain", "cal"}},
		} {
			list, err := e.s.ListJobs(ctx, "c", &tt.opts)
			if err != nil {
				t.Fatalf("ListJobs(%s): %v", tt.name, err)
			}
			var names []string
			for _, j := range list {
				names = append(names, j.Name)
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("ListJobs(%s) (-want +got):\n%s", tt.name, diff)
			}
			for i, j := range list {
				if j.Name == "cal" && (j.Status.NextExecutionTime == nil || !j.Status.NextExecutionTime.Equal(day(4, 0))) {
					t.Errorf("ListJobs(%s)[%d]: cal's nextExecutionTime = %v, want %v (where the calendar moves it)", tt.name, i, j.Status.NextExecutionTime, day(4, 0))
				}
			}
		}
	})
}

// TestListJobsOrderByNextInDisabledCollection: in a collection that is
// not Enabled no job shows a next execution time, so by it ListJobs lists
// in name order (ties by name), not in the order of the instants the
// records planned.
func TestListJobsOrderByNextInDisabledCollection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		for i, n := range []string{"a", "b", "c"} {
			e.put(n, jobJSON(e.t0.Add(time.Duration(3-i)*time.Hour), "")) // c runs first
		}
		if _, err := e.s.DisableCollection(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name string
			opts scheduler.ListJobsOptions
			want []string
		}{
			{"next", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution}, []string{"a", "b", "c"}},
			{"next, descending", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution, Descending: true}, []string{"c", "b", "a"}},
			{"next, a page", scheduler.ListJobsOptions{OrderBy: scheduler.JobsByNextExecution, Skip: 1, Top: 1}, []string{"b"}},
		} {
			list, err := e.s.ListJobs(ctx, "c", &tt.opts)
			if err != nil {
				t.Fatalf("ListJobs(%s): %v", tt.name, err)
			}
			var names []string
			for _, j := range list {
				names = append(names, j.Name)
				if j.Status.NextExecutionTime != nil {
					t.Errorf("ListJobs(%s): %s shows nextExecutionTime %v in a Disabled collection", tt.name, j.Name, j.Status.NextExecutionTime)
				}
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("ListJobs(%s) (-want +got):\n%s", tt.name, diff)
			}
			if tt.opts.OrderBy != scheduler.JobsByNextExecution {
				t.Errorf("ListJobs(%s) changed the caller's options: OrderBy %q", tt.name, tt.opts.OrderBy)
			}
		}
	})
}
