package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	scheduler "github.com/jobclock/scheduler"
)

// TestListJobsOrderPlan checks that a list of jobs in each order, in
// either direction, filtered by state or not, reads an index in that
// order: no sort of the collection's jobs, whatever their number.
func TestListJobsOrderPlan(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "jobclock.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := map[scheduler.JobOrder]string{
		scheduler.JobsByName:          "sqlite_autoindex_jobs_1",
		scheduler.JobsByNextExecution: "jobs_next_execution",
		scheduler.JobsByLastExecution: "jobs_last_execution",
		scheduler.JobsByFailures:      "jobs_failures",
	}
	plan := func(q string, args ...any) string {
		t.Helper()
		rows, err := s.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var plan strings.Builder
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(detail + "\n")
		}
		return plan.String()
	}
	// A lookup by collection and name, which every put makes, takes the
	// primary key, not an index of an order that begins with the
	// collection too.
	if p := plan("SELECT "+jobCols+" FROM jobs WHERE collection = ? AND name = ?", "c", "j"); !strings.Contains(p, "sqlite_autoindex_jobs_1 (collection=? AND name=?)") {
		t.Errorf("query plan of a lookup by collection and name:\n%swant one that takes the primary key", p)
	}
	for order, index := range want {
		for _, desc := range []bool{false, true} {
			for _, state := range []scheduler.JobState{"", scheduler.JobEnabled} {
				q, args := listJobsSQL("c", scheduler.JobFilter{OrderBy: order, Descending: desc, State: state, Top: 50, Skip: 100})
				p := plan(q, args...)
				// By name and state, the index by state serves the
				// order too.
				if !strings.Contains(p, "INDEX "+index+" ") && (order != scheduler.JobsByName || state == "") || strings.Contains(p, "TEMP B-TREE") {
					t.Errorf("query plan of the jobs by %q (descending %v, state %q):\n%swant one that reads index %s and sorts nothing", order, desc, state, p, index)
				}
			}
		}
	}
}
