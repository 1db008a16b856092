package postgres_test

import (
	"strings"
	"testing"

	scheduler "github.com/jobclock/scheduler"
)

// TestListJobsOrderPlan checks that a list of jobs in each order, in
// either direction, can read an index in that order (the plan with sorts
// priced out reads it and sorts nothing), so that a page costs the same
// whatever the collection's size.
func TestListJobsOrderPlan(t *testing.T) {
	s := open(t, newSchema(t))
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	want := map[scheduler.JobOrder]string{
		scheduler.JobsByName:          "jobs_pkey",
		scheduler.JobsByNextExecution: "jobs_next_execution",
		scheduler.JobsByLastExecution: "jobs_last_execution",
		scheduler.JobsByFailures:      "jobs_failures",
	}
	for order, index := range want {
		for _, desc := range []bool{false, true} {
			plan, err := s.ExplainListJobs(ctx, "c", scheduler.JobFilter{OrderBy: order, Descending: desc, Top: 50, Skip: 100})
			if err != nil {
				t.Fatal(err)
			}
			scan := "Index Scan using "
			if desc {
				scan = "Index Scan Backward using "
			}
			if !strings.Contains(plan, scan+index+" ") || strings.Contains(plan, "Sort") {
				t.Errorf("plan of the jobs by %q (descending %v):\n%s\nwant one that reads index %s in order and sorts nothing", order, desc, plan, index)
			}
		}
	}
}
