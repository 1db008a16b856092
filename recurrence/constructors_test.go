package recurrence_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/recurrence"
)

func TestConstructors(t *testing.T) {
	start := time.Date(2026, 3, 27, 10, 7, 0, 0, time.UTC) // a Friday
	tests := []struct {
		name string
		r    *recurrence.Recurrence
		want []string
	}{
		{"Every 15 minutes", recurrence.Every(15, recurrence.Minute),
			[]string{"2026-03-27T10:07:00Z", "2026-03-27T10:22:00Z", "2026-03-27T10:37:00Z"}},
		{"Every 2 days", recurrence.Every(2, recurrence.Day),
			[]string{"2026-03-27T10:07:00Z", "2026-03-29T10:07:00Z", "2026-03-31T10:07:00Z"}},
		{"Hourly", recurrence.Hourly(5),
			[]string{"2026-03-27T11:05:00Z", "2026-03-27T12:05:00Z", "2026-03-27T13:05:00Z"}},
		{"Daily", recurrence.Daily(2, 30),
			[]string{"2026-03-28T02:30:00Z", "2026-03-29T02:30:00Z", "2026-03-30T02:30:00Z"}},
		{"Daily in Berlin across the spring change", recurrence.Daily(2, 30).In("Europe/Berlin"),
			[]string{"2026-03-28T01:30:00Z", "2026-03-29T01:30:00Z", "2026-03-30T00:30:00Z"}},
		{"Weekly", recurrence.Weekly(9, 0, recurrence.Monday, recurrence.Thursday),
			[]string{"2026-03-30T09:00:00Z", "2026-04-02T09:00:00Z", "2026-04-06T09:00:00Z"}},
		{"Monthly on the last day", recurrence.Monthly(-1, 23, 0),
			[]string{"2026-03-31T23:00:00Z", "2026-04-30T23:00:00Z", "2026-05-31T23:00:00Z"}},
	}
	for _, tt := range tests {
		if err := tt.r.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", tt.name, err)
			continue
		}
		rule, err := recurrence.Compile(tt.r, start)
		if err != nil {
			t.Errorf("%s: Compile: %v", tt.name, err)
			continue
		}
		var got []string
		at := start.Add(-time.Nanosecond)
		for range 3 {
			at = rule.Next(at)
			got = append(got, at.UTC().Format(time.RFC3339))
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: occurrences (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestConstructorsReportBadValues(t *testing.T) {
	err := recurrence.Daily(25, 61).Validate()
	if err == nil || err.Error() != "schedule.minutes[0]: 61 is not a minute (0-59)\nschedule.hours[0]: 25 is not an hour (0-23)" {
		t.Errorf("Daily(25, 61).Validate() = %v", err)
	}
	defer func() {
		if p := recover(); p == nil || fmt.Sprint(p) != "recurrence: Every(0, Hour): n must be at least 1" {
			t.Errorf("Every(0, Hour) panicked with %v", p)
		}
	}()
	recurrence.Every(0, recurrence.Hour)
}

func ExampleDaily() {
	r := recurrence.Daily(6, 30).In("America/New_York")
	rule, _ := recurrence.Compile(r, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	at := rule.Next(time.Date(2026, 3, 6, 12, 0, 0, 0, time.UTC))
	for range 3 {
		fmt.Println(at.Format(time.RFC3339))
		at = rule.Next(at)
	}
	// Output:
	// 2026-03-07T06:30:00-05:00
	// 2026-03-08T06:30:00-04:00
	// 2026-03-09T06:30:00-04:00
}
