package scheduler_test

import (
	stdcmp "cmp"
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestSwitchToAllowAllWhileHeld: an occurrence that began one at a time
// holds the job until its attempt ends; when the job's overlap policy
// became AllowAll meanwhile (a put of the job, or of its collection's
// runPolicy), each occurrence that came due during that attempt runs then,
// beside the others, rather than once for all of them, and no Skipped
// entry says they were passed over. An occurrence that goes on (its retry)
// waits for its next attempt beside them.
func TestSwitchToAllowAllWhileHeld(t *testing.T) {
	const m = time.Minute
	for _, tc := range []struct {
		name string
		// plain runs the Scheduler over a store without RecordBatch:
		// the outcome of an attempt recorded in a batch is applied under
		// the run policy its claim read, so that the change of a
		// collection's runPolicy reaches the job at its next step only.
		plain bool
		// switchTo makes the job's overlap policy AllowAll at 1m30s.
		switchTo func(e *env)
		// fail says which attempts fail.
		fail func(req *action.Request) bool
		want []sideRun
	}{
		{
			name: "put",
			switchTo: func(e *env) {
				// A new definition, whose count starts again: 2m, 3m, 4m.
				e.put("j", allowAllJob(e.t0.Add(m), `"recurrence": {"frequency": "Minute", "count": 3}`))
			},
			want: []sideRun{{Occurrence: 1, Start: m}, {Occurrence: 2, Start: 4*m + 30*time.Second},
				{Occurrence: 3, Start: 4*m + 30*time.Second}, {Occurrence: 4, Start: 4*m + 30*time.Second}},
		},
		{
			name:  "collection",
			plain: true,
			switchTo: func(e *env) {
				if _, err := e.s.PutCollection(context.Background(), "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{
					RunPolicy: &scheduler.RunPolicy{Overlap: scheduler.OverlapAllowAll}}}, nil); err != nil {
					e.t.Fatal(err)
				}
			},
			// Occurrence 1 fails at 4m30s: its retry, a minute later,
			// runs beside those that came due while it ran.
			fail: func(req *action.Request) bool { return req.Occurrence == 1 && req.Retry == 0 },
			want: []sideRun{{Occurrence: 1, Start: m}, {Occurrence: 2, Start: 4*m + 30*time.Second},
				{Occurrence: 3, Start: 4*m + 30*time.Second}, {Occurrence: 4, Start: 4*m + 30*time.Second},
				{Occurrence: 1, Retry: 1, Start: 5*m + 30*time.Second}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				x := &sideBySide{hold: holdOne(1, 3*m+30*time.Second, 30*time.Second), fail: tc.fail}
				e := allowAllEnv(t, x, scheduler.Config{ActionTimeout: time.Hour})
				if tc.plain {
					e.over(plainStore{e.store})
				}
				e.start()
				defer e.stop()
				// One at a time (Postpone), every minute from 1m, four
				// times; occurrence 1 runs from 1m to 4m30s.
				e.put("j", `{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
					"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 1}},
					"startTime": "`+e.t0.Add(m).Format(time.RFC3339)+`", "recurrence": {"frequency": "Minute", "count": 4}}`)
				time.Sleep(m + 30*time.Second)
				tc.switchTo(e)
				time.Sleep(10 * m)
				synctest.Wait()
				got := x.attempts()
				slices.SortStableFunc(got, func(a, b sideRun) int {
					return stdcmp.Or(stdcmp.Compare(a.Start, b.Start), stdcmp.Compare(a.Occurrence, b.Occurrence))
				})
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("attempts (-want +got):\n%s", diff)
				}
				for _, h := range e.history("j") {
					if h.Status == scheduler.StatusSkipped {
						t.Errorf("Skipped entry %q: the occurrences that came due while occurrence 1 ran each run under AllowAll", h.Message)
					}
				}
				if r := e.job("j"); r.State != scheduler.JobCompleted {
					t.Errorf("state %s, want Completed", r.State)
				}
			})
		})
	}
}
