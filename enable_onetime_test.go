package scheduler_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
)

// TestEnableOneTimeJobRunsMissedOccurrence: a one-time job whose
// occurrence came while it was Disabled (put Disabled without a
// startTime, or with a startTime that passed meanwhile) has missed it:
// enabling it runs it at once under the default missed policy (RunOnce),
// with its expected time, and the job is Completed after that run, not
// before it. Under runPolicy.missed Skip, an occurrence found later than
// Config.MisfireThreshold is passed over on record, and the job is
// Completed without a run.
func TestEnableOneTimeJobRunsMissedOccurrence(t *testing.T) {
	for _, tt := range []struct {
		name    string
		start   time.Duration // the job's startTime, from t0; 0: none
		extra   string
		disable bool   // put Enabled, then disabled at once
		edit    bool   // patched while Disabled, after its time
		enable  string // the patch that enables it; empty: EnableJob
		runs    bool   // the occurrence runs when enabled
	}{
		{name: "put Disabled, EnableJob", extra: `"state": "Disabled"`, runs: true},
		{name: "put Disabled, patched", extra: `"state": "Disabled"`, enable: `{"properties": {"state": "Enabled"}}`, runs: true},
		{name: "startTime passed while Disabled", start: 2 * time.Second, disable: true, runs: true},
		{name: "edited while Disabled", extra: `"state": "Disabled"`, edit: true, runs: true},
		{name: "missed Skip, later than the threshold", extra: `"state": "Disabled", "runPolicy": {"missed": "Skip"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				e := newEnv(t, scheduler.Config{})
				e.start()
				defer e.stop()
				var start time.Time
				if tt.start != 0 {
					start = e.t0.Add(tt.start)
				}
				e.put("j", jobJSON(start, tt.extra))
				if tt.disable {
					if _, err := e.s.DisableJob(ctx, "c", "j"); err != nil {
						t.Fatal(err)
					}
				}
				wait := 3 * time.Second
				if !tt.runs {
					wait = 2 * time.Minute // later than Config.MisfireThreshold
				}
				time.Sleep(wait)
				if tt.edit {
					if _, err := e.s.PatchJob(ctx, "c", "j", []byte(`{"action": {"request": {"body": "edited"}}}`), nil); err != nil {
						t.Fatal(err)
					}
				}
				var err error
				if tt.enable == "" {
					_, err = e.s.EnableJob(ctx, "c", "j")
				} else {
					_, err = e.s.PatchJob(ctx, "c", "j", []byte(tt.enable), nil)
				}
				if err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				expected := e.t0.Add(tt.start)
				r := e.job("j")
				if r.State != scheduler.JobCompleted {
					t.Errorf("state after enabling: %s, want Completed", r.State)
				}
				h := e.history("j")
				if tt.runs {
					var got []time.Duration
					for _, req := range e.exec.requests() {
						got = append(got, req.ExpectedTime.Sub(e.t0))
					}
					if diff := cmp.Diff([]time.Duration{tt.start}, got); diff != "" {
						t.Errorf("expected times of the attempts (-want +got):\n%s", diff)
					}
					if r.Status.ExecutionCount != 1 {
						t.Errorf("executionCount = %d, want 1", r.Status.ExecutionCount)
					}
					if len(h) != 1 || h[0].Status != scheduler.StatusCompleted || !h[0].ExpectedExecutionTime.Equal(expected) || !h[0].StartTime.Equal(e.t0.Add(wait)) {
						t.Errorf("history = %+v, want one Completed entry expected at %v, started when enabled", h, expected)
					}
					return
				}
				if n := len(e.exec.requests()); n != 0 {
					t.Errorf("%d attempts, want none", n)
				}
				if len(h) != 1 || h[0].Status != scheduler.StatusSkipped || h[0].Skipped != 1 || !h[0].ExpectedExecutionTime.Equal(expected) {
					t.Errorf("history = %+v, want one Skipped entry for the occurrence expected at %v", h, expected)
				}
			})
		})
	}
}
