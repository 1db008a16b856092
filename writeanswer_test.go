package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

// TestWriteResultsAsGet: the record PutJob, PutJobJSON and PatchJob
// return is the one GetJob returns right after, its health and a
// resumeTime given with an offset (returned in UTC) included; only
// CreatedByPut, which GetJob never sets, differs.
func TestWriteResultsAsGet(t *testing.T) {
	resume := time.Now().Add(72 * time.Hour).In(time.FixedZone("", 2*3600)).Truncate(time.Second).Format(time.RFC3339)
	const act = `"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}}`
	defs := []struct{ name, put, patch string }{
		{"hourly", `{` + act + `, "recurrence": {"frequency": "Hour"}}`, `{"recurrence": {"interval": 2}}`},
		{"paused until resumeTime", `{` + act + `, "recurrence": {"frequency": "Day"}, "state": "Disabled", "stateReason": "maintenance", "resumeTime": "` + resume + `"}`,
			`{"stateReason": "longer", "resumeTime": "` + resume + `"}`},
		{"enabled by a patch", `{` + act + `, "recurrence": {"frequency": "Minute", "interval": 5}, "state": "Disabled"}`, `{"state": "Enabled"}`},
	}
	stores := map[string]func(t *testing.T) scheduler.Store{
		"memory": func(*testing.T) scheduler.Store { return memory.New() },
		"sqlite": openSQLite,
	}
	ignore := cmpopts.IgnoreFields(scheduler.JobRecord{}, "CreatedByPut")
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, err := scheduler.New(newStore(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
				t.Fatal(err)
			}
			check := func(call string, r *scheduler.JobRecord, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", call, err)
				}
				got, err := s.GetJob(ctx, "c", r.Name)
				if err != nil {
					t.Fatalf("GetJob after %s: %v", call, err)
				}
				if diff := cmp.Diff(got, r, ignore); diff != "" {
					t.Errorf("%s returned another record than GetJob after it (-GetJob +returned):\n%s", call, diff)
				}
				if r.Status.Health == "" {
					t.Errorf("%s returned no health", call)
				}
			}
			for _, d := range defs {
				def, err := s.ParseJob([]byte(d.put))
				if err != nil {
					t.Fatal(err)
				}
				r, err := s.PutJob(ctx, "c", "a", def, nil)
				check(d.name+": PutJob", r, err)
				r, err = s.PutJobJSON(ctx, "c", "b", []byte(d.put), nil)
				check(d.name+": PutJobJSON", r, err)
				r, err = s.PatchJob(ctx, "c", "b", []byte(d.patch), nil)
				check(d.name+": PatchJob", r, err)
			}
		})
	}
}
