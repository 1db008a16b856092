package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
)

// TestPutLeavesDefinitionAlone puts one caller's definition from many
// goroutines at once, in the shapes PutJob copies as they are and in those
// it changes first (custom JSON to compact, a cron spec to expand): run with
// -race, it fails if a put writes to the caller's definition; the
// definition is unchanged afterwards and the stored jobs have no status.
func TestPutLeavesDefinitionAlone(t *testing.T) {
	ctx := context.Background()
	s, _ := noopScheduler(t, action.HTTP, "Noop")
	stored, err := s.PutJob(ctx, "c", "stored", sharedDef(), nil)
	if err != nil {
		t.Fatal(err)
	}
	withStatus := stored.Definition() // has a Status, as a job read back does
	if withStatus.Status == nil {
		t.Fatal("Definition() has no status")
	}
	payload := sharedDef()
	payload.Action = action.Action{Type: "Noop", Custom: json.RawMessage(`{"k": "v"}`)}
	cron := sharedDef()
	cron.Recurrence = &recurrence.Recurrence{Cron: "0 10 * * 1"}
	for _, tt := range []struct {
		name string
		def  *scheduler.Job
	}{{"plain", sharedDef()}, {"with status", withStatus}, {"payload", payload}, {"cron", cron}} {
		t.Run(tt.name, func(t *testing.T) {
			want := jsonOf(t, tt.def)
			wantType := tt.def.Action.Type
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					for i := range 3 { // 4 shapes x 12 jobs: within the default quota of 50
						r, err := s.PutJob(ctx, "c", fmt.Sprintf("%s-%d-%d", tt.name[:4], g, i), tt.def, nil)
						if err != nil {
							t.Error(err)
							return
						}
						if r.Job.Status != nil {
							t.Errorf("stored definition has status %v, want none", r.Job.Status)
						}
					}
				})
			}
			wg.Wait()
			if got := jsonOf(t, tt.def); got != want {
				t.Errorf("PutJob changed the caller's definition:\n%s\nwant\n%s", got, want)
			}
			if tt.def.Action.Type != wantType {
				t.Errorf("PutJob changed the caller's action type to %q", tt.def.Action.Type)
			}
		})
	}
	r, err := s.GetJob(ctx, "c", "cron-0-0")
	if err != nil {
		t.Fatal(err)
	}
	if rec := r.Job.Recurrence; rec.Frequency != recurrence.Week || rec.Cron == "" || cron.Recurrence.Frequency != "" {
		t.Errorf("cron spec: stored %+v, caller's %+v; want it expanded in the store only", rec, cron.Recurrence)
	}
	r, err = s.GetJob(ctx, "c", "payl-0-0")
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Job.Action.Custom) != `{"k":"v"}` {
		t.Errorf("stored custom = %s, want the payload's JSON", r.Job.Action.Custom)
	}
}
