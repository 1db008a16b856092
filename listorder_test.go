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
