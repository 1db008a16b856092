package jobdef_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseJobQuotesInput checks that a problem quotes the value as the
// user wrote it, not as it was read, and names every path by the JSON
// member names from the definition's top.
func TestParseJobQuotesInput(t *testing.T) {
	const act = `"action": {"type": "Https", "request": {"uri": "https://example.com/", "method": "GET"}`
	retry := func(p string) string { return `{` + act + `, "retryPolicy": ` + p + `}}` }
	tests := []struct {
		name, in string
		want     []string
	}{
		{"months", retry(`{"retryType": "Fixed", "retryInterval": "P19M"}`),
			[]string{`action.retryPolicy.retryInterval: "P19M" is longer than the maximum of P548D`}},
		{"year and months", retry(`{"retryType": "Fixed", "retryInterval": "P1Y7M"}`),
			[]string{`action.retryPolicy.retryInterval: "P1Y7M" is longer than the maximum of P548D`}},
		{"clock form", retry(`{"retryType": "Fixed", "retryInterval": "00:00:05"}`),
			[]string{`action.retryPolicy.retryInterval: "00:00:05" is shorter than the minimum of PT15S`}},
		{"Logic Apps spelling", retry(`{"type": "Fixed", "interval": "00:00:05"}`),
			[]string{`action.retryPolicy.retryInterval: "00:00:05" is shorter than the minimum of PT15S`}},
		{"weekdays repeated", `{` + act + `}, "recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Mon", "sunday", "sunday"]}}}`,
			[]string{
				`recurrence.schedule.weekDays[0]: "Mon" is not a day of the week (Monday to Sunday)`,
				`recurrence.schedule.weekDays[2]: "sunday" repeats recurrence.schedule.weekDays[1]`,
			}},
		{"hours repeated", `{` + act + `}, "recurrence": {"frequency": "Day", "schedule": {"hours": [1, 2, 1]}}}`,
			[]string{`recurrence.schedule.hours[2]: 1 repeats recurrence.schedule.hours[0]`}},
		{"occurrences repeated", `{` + act + `}, "recurrence": {"frequency": "Month", "schedule": {"monthlyOccurrences": [{"day": "friday", "occurrence": 1}, {"day": "Friday", "Occurrence": 1}]}}}`,
			[]string{`recurrence.schedule.monthlyOccurrences[1]: repeats recurrence.schedule.monthlyOccurrences[0]`}},
		{"occurrence", `{` + act + `}, "recurrence": {"frequency": "Month", "schedule": {"monthlyOccurrences": [{"day": "friday", "occurrence": 6}]}}}`,
			[]string{`recurrence.schedule.monthlyOccurrences[0].occurrence: 6 is not an occurrence in a month (-5 to 5; 0 or absent means every such day)`}},
		{"envelope", `{"properties": {` + act + `, "retryPolicy": {"retryType": "Fixed", "retryInterval": "P19M"}}}}`,
			[]string{`properties.action.retryPolicy.retryInterval: "P19M" is longer than the maximum of P548D`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseProblems(t, tt.in)); diff != "" {
				t.Errorf("ParseJob(%s) problems (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}
