package dashboard

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
)

// TestUnderPropertiesRefs checks that a problem of a job's properties put
// under "properties" names the paths in its reason from there too.
func TestUnderPropertiesRefs(t *testing.T) {
	_, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "https://bob:pw@example.com/", "method": "GET"}},
		"recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Monday", "Monday"]}}}`), nil)
	var got []string
	for _, p := range underProperties(problemsOf(err)) {
		got = append(got, p.Message())
	}
	want := []string{
		"properties.action.request.uri: must not hold a user name or password; put them in properties.action.request.authentication (type Basic)",
		`properties.recurrence.schedule.weekDays[1]: "Monday" repeats properties.recurrence.schedule.weekDays[0]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("underProperties(problemsOf(%v)) (-want +got):\n%s", err, diff)
	}
}
