package jobdef_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jobclock/scheduler/jobdef"
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
			[]string{`recurrence.schedule.monthlyOccurrences[0].Occurrence: 6 is not an occurrence in a month (-5 to 5; 0 or absent means every such day)`}},
		{"occurrence in two cases, one path", `{` + act + `}, "recurrence": {"frequency": "Month", "schedule": {"monthlyOccurrences": [{"day": "friday", "occurrence": "x"}, {"day": "monday", "OCCURRENCE": 9}]}}}`,
			[]string{
				`recurrence.schedule.monthlyOccurrences[0].Occurrence: "x" is not an integer`,
				`recurrence.schedule.monthlyOccurrences[1].Occurrence: 9 is not an occurrence in a month (-5 to 5; 0 or absent means every such day)`,
			}},
		{"envelope", `{"properties": {` + act + `, "retryPolicy": {"retryType": "Fixed", "retryInterval": "P19M"}}}}`,
			[]string{`properties.action.retryPolicy.retryInterval: "P19M" is longer than the maximum of P548D`}},
		{"envelope, weekdays repeated", `{"properties": {` + act + `}, "recurrence": {"frequency": "Week", "schedule": {"weekDays": ["Monday", "sunday", "Sunday"]}}}}`,
			[]string{`properties.recurrence.schedule.weekDays[2]: "Sunday" repeats properties.recurrence.schedule.weekDays[1]`}},
		{"envelope, occurrences repeated", `{"properties": {` + act + `}, "recurrence": {"frequency": "Month", "schedule": {"monthlyOccurrences": [{"day": "Friday"}, {"day": "friday"}]}}}}`,
			[]string{`properties.recurrence.schedule.monthlyOccurrences[1]: repeats properties.recurrence.schedule.monthlyOccurrences[0]`}},
		{"envelope, member too high", `{"properties": {` + act + `}, "recurrence": {"frequency": "Month", "monthDays": [1]}}}`,
			[]string{`properties.recurrence.monthDays: unknown field, it belongs in properties.recurrence.schedule`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseProblems(t, tt.in)); diff != "" {
				t.Errorf("ParseJob(%s) problems (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestValidationErrorUnder checks that Under puts a problem's path and the
// paths its reason names under a path, leaving alone the text that only
// looks like them and the problem it was copied from.
func TestValidationErrorUnder(t *testing.T) {
	e := &jobdef.ValidationError{Path: "recurrence.schedule.hours[2]", Value: "1",
		Reason: "repeats recurrence.schedule.hours[0]", Refs: []string{"recurrence.schedule.hours[0]"}}
	cp := *e
	cp.Under("jobs.a")
	want := &jobdef.ValidationError{Path: "jobs.a.recurrence.schedule.hours[2]", Value: "1",
		Reason: "repeats jobs.a.recurrence.schedule.hours[0]", Refs: []string{"jobs.a.recurrence.schedule.hours[0]"}}
	if diff := cmp.Diff(want, &cp); diff != "" {
		t.Errorf("Under(%q) (-want +got):\n%s", "jobs.a", diff)
	}
	if e.Refs[0] != "recurrence.schedule.hours[0]" {
		t.Errorf("Under changed the Refs of the problem copied: %q", e.Refs)
	}
	whole := &jobdef.ValidationError{Path: "", Reason: "holds no jobs"}
	whole.Under("jobs")
	if whole.Path != "jobs" || whole.Reason != "holds no jobs" {
		t.Errorf("Under of an empty path = %q %q, want %q %q", whole.Path, whole.Reason, "jobs", "holds no jobs")
	}
}

// TestParseCalendarRepeats checks that a calendar's rule names the entry
// that a repeated one repeats by its whole path in the calendar.
func TestParseCalendarRepeats(t *testing.T) {
	in := `{"properties": {"rules": [{"frequency": "Day", "schedule": {"hours": [1, 1]}}]}}`
	_, err := jobdef.ParseCalendar([]byte(in))
	var got []string
	for _, e := range jobdef.ValidationErrors(err) {
		got = append(got, e.Error())
	}
	want := []string{"properties.rules[0].schedule.hours[1]: 1 repeats properties.rules[0].schedule.hours[0]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseCalendar(%s) problems (-want +got):\n%s", in, diff)
	}
}
