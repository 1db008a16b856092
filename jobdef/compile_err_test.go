package jobdef

import (
	"fmt"
	"testing"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// TestCompileErrIsCompile: compileErr reports what recurrence.Compile
// reports, for the Day and Week rules it checks without compiling and for
// the others.
func TestCompileErrIsCompile(t *testing.T) {
	starts := []time.Time{
		time.Date(2026, 1, 31, 10, 30, 15, 5, time.UTC),
		time.Date(2026, 3, 29, 1, 30, 0, 0, time.FixedZone("", 3600)),
		time.Date(2026, 2, 28, 23, 59, 59, 0, time.UTC),
	}
	recs := []*recurrence.Recurrence{
		{Frequency: recurrence.Day},
		{Frequency: recurrence.Day, Interval: 3, Count: 2},
		{Frequency: recurrence.Day, Interval: 549},
		{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Hours: []int{0, 23}, Minutes: []int{0, 59}}},
		{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Hours: []int{24}}},
		{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Hours: []int{5, 5}}},
		{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{WeekDays: []recurrence.Weekday{recurrence.Monday}}},
		{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{}},
		{Frequency: recurrence.Day, TimeZone: "Europe/Berlin", Schedule: &recurrence.Schedule{Hours: []int{2}, Minutes: []int{30}}},
		{Frequency: recurrence.Day, TimeZone: "Nowhere/Atlantis"},
		{Frequency: recurrence.Day, TimeZone: "W. Europe Standard Time"},
		{Frequency: recurrence.Day, EndTime: ptrTo(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))},
		{Frequency: recurrence.Day, Count: 3, EndTime: ptrTo(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))},
		{Frequency: recurrence.Week},
		{Frequency: recurrence.Week, Interval: 79},
		{Frequency: recurrence.Week, Interval: 2, Schedule: &recurrence.Schedule{WeekDays: []recurrence.Weekday{recurrence.Monday, recurrence.Friday}, Hours: []int{10, 22}}},
		{Frequency: recurrence.Week, Schedule: &recurrence.Schedule{WeekDays: []recurrence.Weekday{"Funday"}}},
		{Frequency: recurrence.Week, Schedule: &recurrence.Schedule{MonthDays: []int{1}}},
		{Frequency: recurrence.Week, Schedule: &recurrence.Schedule{Months: []int{2}}},
		{Frequency: recurrence.Week, TimeZone: "America/New_York", Schedule: &recurrence.Schedule{Minutes: []int{60}}},
		{Frequency: recurrence.Week, Count: -1},
		{Frequency: recurrence.Week, Interval: -2},
		{Frequency: "week"},
		{Frequency: "Fortnight"},
		{Frequency: recurrence.Minute, Interval: 7, Schedule: &recurrence.Schedule{Hours: []int{3}, Minutes: []int{1}}},
		{Frequency: recurrence.Hour, Interval: 5, Schedule: &recurrence.Schedule{Hours: []int{2}}},
		{Frequency: recurrence.Month, Schedule: &recurrence.Schedule{MonthDays: []int{31}, Months: []int{2}}},
		{Frequency: recurrence.Month, Interval: 3, Schedule: &recurrence.Schedule{Months: []int{3}}},
		{Frequency: recurrence.Year, Schedule: &recurrence.Schedule{Months: []int{2}, MonthDays: []int{30}}},
		{Cron: "0 9 * * 1-5"},
		{Cron: "0 9 * * 1-5", Frequency: recurrence.Week},
		{Cron: "61 9 * * *"},
	}
	for _, r := range recs {
		for _, start := range starts {
			_, want := recurrence.Compile(r, start)
			got := compileErr(r, start)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("compileErr(%+v, %v) = %v, want %v", r, start, got, want)
			}
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
