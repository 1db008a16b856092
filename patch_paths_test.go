package scheduler_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
)

// TestPatchJobEnvelopePaths: the problems of a patch in the ARM envelope
// are named under "properties", as ParseJob and PutJobJSON name those of
// an envelope; the problems of a bare patch are not, and the envelope's
// tags stay beside the properties.
func TestPatchJobEnvelopePaths(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		e.put("j", jobJSON(e.t0.Add(time.Hour), `"recurrence": {"frequency": "Hour"}`))
		tests := []struct {
			patch string
			want  []string
		}{
			{`{"properties": {"recurrence": {"interval": 0}}}`, []string{"properties.recurrence.interval: 0 must be at least 1"}},
			{`{"recurrence": {"interval": 0}}`, []string{"recurrence.interval: 0 must be at least 1"}},
			{`{"properties": {"status": {}, "state": "Faulted"}}`, []string{
				"properties.state: \"Faulted\" cannot be set; a patch may set Enabled or Disabled",
				"properties.status: is read-only and cannot be patched",
			}},
			{`{"tags": 5, "properties": {"state": "Faulted"}}`, []string{
				`tags: 5 is not an object; tags are {"name": "value", ...}`,
				"properties.state: \"Faulted\" cannot be set; a patch may set Enabled or Disabled",
			}},
		}
		for _, tt := range tests {
			_, err := e.s.PatchJob(ctx, "c", "j", []byte(tt.patch), nil)
			var got []string
			for _, v := range scheduler.ValidationErrors(err) {
				got = append(got, v.Error())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PatchJob(%s) = %v; problems (-want +got):\n%s", tt.patch, err, diff)
			}
		}
	})
}
