package scheduler_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
)

// TestPatchJobEnvelopePaths: the problems of a patch in the ARM envelope
// are named under "properties", as ParseJob and PutJobJSON name those of
// an envelope, with the paths their reasons name; the problems of a bare
// patch are not, and the envelope's tags stay beside the properties.
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
			{`{"properties": {"recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Monday", "monday"]}}}}`, []string{
				`properties.recurrence.schedule.weekDays[1]: "monday" repeats properties.recurrence.schedule.weekDays[0]`,
			}},
			{`{"recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Monday", "monday"]}}}`, []string{
				`recurrence.schedule.weekDays[1]: "monday" repeats recurrence.schedule.weekDays[0]`,
			}},
			{`{"properties": {"action": {"request": {"uri": "http://bob:pw@example.com/"}}}}`, []string{
				"properties.action.request.uri: must not hold a user name or password; put them in properties.action.request.authentication (type Basic)",
			}},
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
			if diff := cmp.Diff(tt.want, problems(err)); diff != "" {
				t.Errorf("PatchJob(%s) = %v; problems (-want +got):\n%s", tt.patch, err, diff)
			}
		}
	})
}

// TestPatchMembersGivenTwice: a member that a patch gives twice in one
// object, with the same name or in another case, is refused at its path
// and nothing changes: patch members are merged without regard to case, so
// the two would be applied in no set order.
func TestPatchMembersGivenTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e := newEnv(t, scheduler.Config{})
		e.put("j", jobJSON(e.t0.Add(time.Hour), `"recurrence": {"frequency": "Hour"}`))
		before, err := e.s.GetJob(ctx, "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			patch string
			want  []string
		}{
			{`{"properties": {"state": "Enabled", "state": "Disabled"}}`, []string{"properties.state: is given more than once"}},
			{`{"state": "Disabled", "State": "Enabled"}`, []string{`State: is a duplicate of "state"`}},
			{`{"properties": {}, "properties": {"state": "Disabled"}}`, []string{"properties: is given more than once"}},
			{`{"recurrence": {"interval": 2, "Interval": 3}}`, []string{`recurrence.Interval: is a duplicate of "interval"`}},
		}
		for _, tt := range tests {
			_, err := e.s.PatchJob(ctx, "c", "j", []byte(tt.patch), nil)
			if diff := cmp.Diff(tt.want, problems(err)); diff != "" {
				t.Errorf("PatchJob(%s) = %v; problems (-want +got):\n%s", tt.patch, err, diff)
			}
		}
		_, err = e.s.PatchCollection(ctx, "c", []byte(`{"properties": {"state": "Enabled", "state": "Disabled"}}`), nil)
		if got, want := fmt.Sprint(err), "properties.state: is given more than once"; got != want {
			t.Errorf("PatchCollection with a member given twice = %v, want %s", err, want)
		}
		after, err := e.s.GetJob(ctx, "c", "j")
		if err != nil {
			t.Fatal(err)
		}
		if after.ETag != before.ETag || after.State != before.State {
			t.Errorf("after the refused patches: ETag %s, state %s; want %s, %s", after.ETag, after.State, before.ETag, before.State)
		}
	})
}

// problems are the validation errors in err, as their messages.
func problems(err error) []string {
	var got []string
	for _, v := range scheduler.ValidationErrors(err) {
		got = append(got, v.Error())
	}
	return got
}
