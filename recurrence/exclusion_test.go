package recurrence_test

import (
	"testing"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

func TestExclusionsExcludes(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	wall := func(s string) time.Time {
		w, err := time.Parse("2006-01-02T15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	e, err := recurrence.CompileExclusions(berlin,
		[]time.Time{wall("2026-12-25T00:00:00")},
		[]recurrence.ExclusionRange{{Start: wall("2026-12-31T12:00:00"), End: wall("2027-01-02T00:00:00")}},
		[]*recurrence.Recurrence{{Frequency: recurrence.Year, Schedule: &recurrence.Schedule{Months: []int{5}, MonthDays: []int{1}}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		at   time.Time // an instant
		want bool
	}{
		{"a listed date, Berlin morning", time.Date(2026, 12, 25, 8, 0, 0, 0, berlin), true},
		{"a listed date, last second", time.Date(2026, 12, 25, 23, 59, 59, 0, berlin), true},
		{"the day after a listed date", time.Date(2026, 12, 26, 0, 0, 0, 0, berlin), false},
		{"UTC 24 Dec 23:30 is 25 Dec in Berlin", time.Date(2026, 12, 24, 23, 30, 0, 0, time.UTC), true},
		{"before a range", time.Date(2026, 12, 31, 11, 59, 59, 0, berlin), false},
		{"a range's start", time.Date(2026, 12, 31, 12, 0, 0, 0, berlin), true},
		{"within a range", time.Date(2027, 1, 1, 9, 0, 0, 0, berlin), true},
		{"a range's end is not excluded", time.Date(2027, 1, 2, 0, 0, 0, 0, berlin), false},
		{"a rule's date", time.Date(2028, 5, 1, 17, 0, 0, 0, berlin), true},
		{"the day before a rule's date", time.Date(2028, 4, 30, 17, 0, 0, 0, berlin), false},
		{"an ordinary day", time.Date(2027, 3, 3, 9, 0, 0, 0, berlin), false},
	}
	for _, tt := range tests {
		if got := e.Excludes(tt.at); got != tt.want {
			t.Errorf("%s: Excludes(%v) = %v, want %v", tt.name, tt.at, got, tt.want)
		}
	}
}
