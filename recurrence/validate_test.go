package recurrence_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/recurrence"
)

// fieldErrors unwraps a joined error into its FieldErrors.
func fieldErrors(t *testing.T, err error) []recurrence.FieldError {
	t.Helper()
	if err == nil {
		return nil
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	var out []recurrence.FieldError
	for _, e := range errs {
		var fe *recurrence.FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("error %v is not a *FieldError", e)
		}
		out = append(out, *fe)
	}
	return out
}

func TestValidate(t *testing.T) {
	type fe = recurrence.FieldError
	tests := []struct {
		name string
		json string
		want []fe // Path and Value; Reason checked for non-emptiness
	}{
		{"minimal", `{"frequency":"minute"}`, nil},
		{"documented example", `{"frequency":"Week","interval":1,"schedule":{"weekDays":["Monday","Wednesday","Friday"],"hours":[10,22]},"count":10,"endTime":"2012-11-04T00:00:00Z"}`, nil},
		{"all fields valid", `{"frequency":"Month","interval":18,"count":1,"timeZone":"Europe/Paris","schedule":{"minutes":[0,59],"hours":[0,23],"monthDays":[1,31,-1,-31],"monthlyOccurrences":[{"day":"friday","occurrence":-5},{"day":"friday","occurrence":5},{"day":"sunday"}],"months":[1,12]}}`, nil},
		{"windows zone", `{"frequency":"Day","timeZone":"Eastern Standard Time"}`, nil},
		{"empty arrays are absent", `{"frequency":"Day","schedule":{"weekDays":[],"monthDays":[],"months":[]}}`, nil},
		{"Occurrence key", `{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"Monday","Occurrence":6}]}}`,
			[]fe{{Path: "schedule.monthlyOccurrences[0].Occurrence", Value: "6"}}},
		{"missing frequency", `{}`, []fe{{Path: "frequency"}}},
		{"unknown frequency", `{"frequency":"fortnight"}`, []fe{{Path: "frequency", Value: `"fortnight"`}}},
		{"negative interval", `{"frequency":"Day","interval":-1}`, []fe{{Path: "interval", Value: "-1"}}},
		{"interval bounds", `{"frequency":"Minute","interval":1001}`, []fe{{Path: "interval", Value: "1001"}}},
		{"interval bound hour", `{"frequency":"Hour","interval":1000}`, nil},
		{"interval bound day", `{"frequency":"Day","interval":549}`, []fe{{Path: "interval", Value: "549"}}},
		{"interval bound week", `{"frequency":"Week","interval":79}`, []fe{{Path: "interval", Value: "79"}}},
		{"interval bound month", `{"frequency":"Month","interval":19}`, []fe{{Path: "interval", Value: "19"}}},
		{"interval bound year", `{"frequency":"Year","interval":11}`, []fe{{Path: "interval", Value: "11"}}},
		{"negative count", `{"frequency":"Day","count":-3}`, []fe{{Path: "count", Value: "-3"}}},
		{"unknown zone", `{"frequency":"Day","timeZone":"Mars/Olympus"}`, []fe{{Path: "timeZone", Value: `"Mars/Olympus"`}}},
		{"local zone", `{"frequency":"Day","timeZone":"Local"}`, []fe{{Path: "timeZone", Value: `"Local"`}}},
		{"minute", `{"frequency":"Day","schedule":{"minutes":[60,-1]}}`,
			[]fe{{Path: "schedule.minutes[0]", Value: "60"}, {Path: "schedule.minutes[1]", Value: "-1"}}},
		{"hour", `{"frequency":"Day","schedule":{"hours":[5,24]}}`, []fe{{Path: "schedule.hours[1]", Value: "24"}}},
		{"month day", `{"frequency":"Month","schedule":{"monthDays":[0,32,-32]}}`,
			[]fe{{Path: "schedule.monthDays[0]", Value: "0"}, {Path: "schedule.monthDays[1]", Value: "32"}, {Path: "schedule.monthDays[2]", Value: "-32"}}},
		{"month", `{"frequency":"Year","schedule":{"months":[0,13]}}`,
			[]fe{{Path: "schedule.months[0]", Value: "0"}, {Path: "schedule.months[1]", Value: "13"}}},
		{"week day", `{"frequency":"Week","schedule":{"weekDays":["Funday"]}}`, []fe{{Path: "schedule.weekDays[0]", Value: `"Funday"`}}},
		{"monthly occurrence day", `{"frequency":"Month","schedule":{"monthlyOccurrences":[{"occurrence":1},{"day":"Caturday"}]}}`,
			[]fe{{Path: "schedule.monthlyOccurrences[0].day"}, {Path: "schedule.monthlyOccurrences[1].day", Value: `"Caturday"`}}},
		{"duplicates", `{"frequency":"Week","schedule":{"hours":[5,5],"minutes":[1,2,1],"weekDays":["monday","Monday"]}}`,
			[]fe{{Path: "schedule.minutes[2]", Value: "1"}, {Path: "schedule.hours[1]", Value: "5"}, {Path: "schedule.weekDays[1]", Value: `"Monday"`}}},
		{"duplicate monthly occurrence", `{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"Monday","occurrence":1},{"day":"monday","Occurrence":1},{"day":"Monday","occurrence":2}]}}`,
			[]fe{{Path: "schedule.monthlyOccurrences[1]"}}},
		{"too many week days", `{"frequency":"Week","schedule":{"weekDays":["Monday","Tuesday","Wednesday","Thursday","Friday","Saturday","Sunday","Monday"]}}`,
			[]fe{{Path: "schedule.weekDays"}, {Path: "schedule.weekDays[7]", Value: `"Monday"`}}},
		{"weekDays needs Week", `{"frequency":"Day","schedule":{"weekDays":["Monday"]}}`, []fe{{Path: "schedule.weekDays"}}},
		{"monthDays needs Month", `{"frequency":"Week","schedule":{"monthDays":[1]}}`, []fe{{Path: "schedule.monthDays"}}},
		{"monthDays not with Year", `{"frequency":"Year","schedule":{"monthDays":[1]}}`, []fe{{Path: "schedule.monthDays"}}},
		{"monthlyOccurrences needs Month", `{"frequency":"Day","schedule":{"monthlyOccurrences":[{"day":"Friday"}]}}`, []fe{{Path: "schedule.monthlyOccurrences"}}},
		{"months needs Month or Year", `{"frequency":"Week","schedule":{"months":[1]}}`, []fe{{Path: "schedule.months"}}},
		{"all at once", `{"frequency":"Day","interval":600,"count":-1,"timeZone":"Nowhere","schedule":{"hours":[1,25],"monthlyOccurrences":[{"day":"Friday","occurrence":-6}]}}`,
			[]fe{
				{Path: "interval", Value: "600"},
				{Path: "count", Value: "-1"},
				{Path: "timeZone", Value: `"Nowhere"`},
				{Path: "schedule.hours[1]", Value: "25"},
				{Path: "schedule.monthlyOccurrences[0].Occurrence", Value: "-6"},
				{Path: "schedule.monthlyOccurrences"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recurrence.Recurrence
			if err := json.Unmarshal([]byte(tt.json), &r); err != nil {
				t.Fatal(err)
			}
			err := r.Validate()
			got := fieldErrors(t, err)
			for _, e := range got {
				if e.Reason == "" {
					t.Errorf("%s: empty Reason", e.Path)
				}
				if !strings.Contains(err.Error(), e.Path+": ") {
					t.Errorf("error text %q does not name %s", err, e.Path)
				}
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b recurrence.FieldError) bool {
				return a.Path == b.Path && a.Value == b.Value
			})); diff != "" {
				t.Errorf("Validate(%s) (-want +got):\n%s\nerror: %v", tt.json, diff, err)
			}
		})
	}
}

func TestValidateMessages(t *testing.T) {
	r := &recurrence.Recurrence{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Hours: []int{5, 25}}}
	want := "schedule.hours[1]: 25 is not an hour (0-23)"
	if err := r.Validate(); err == nil || err.Error() != want {
		t.Errorf("Validate() = %v, want %q", err, want)
	}
	var nilRec *recurrence.Recurrence
	if err := nilRec.Validate(); err != nil {
		t.Errorf("nil Validate() = %v, want nil", err)
	}
}
