package jobdef_test

import (
	"fmt"

	"github.com/jobclock/scheduler/jobdef"
)

// A problem found in a job of a larger document is put under the job's
// place there: its path and the paths its reason names.
func ExampleValidationError_Under() {
	_, err := jobdef.ParseJob([]byte(`{
		"action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}},
		"recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Monday", "monday"]}}
	}`), nil)
	for _, e := range jobdef.ValidationErrors(err) {
		fmt.Println(e)
		e.Under("jobs.weekly")
		fmt.Println(e)
	}
	// Output:
	// recurrence.schedule.weekDays[1]: "monday" repeats recurrence.schedule.weekDays[0]
	// jobs.weekly.recurrence.schedule.weekDays[1]: "monday" repeats jobs.weekly.recurrence.schedule.weekDays[0]
}
