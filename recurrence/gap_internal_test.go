package recurrence

import (
	"testing"
	"time"

	"github.com/jobclock/scheduler/retry"
)

// TestGapBound walks rules through both daylight saving changes of their
// zones: no two consecutive scheduled instants lie closer than gapBound
// says, which Next relies on to skip the search for the next one.
func TestGapBound(t *testing.T) {
	all := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	tests := []*Recurrence{
		{Frequency: Hour, Schedule: &Schedule{Minutes: []int{0}}},
		{Frequency: Hour, Schedule: &Schedule{Minutes: []int{0, 5, 50}}},
		{Frequency: Day, Schedule: &Schedule{Hours: []int{1, 2, 3}, Minutes: []int{30}}},
		{Frequency: Day, Schedule: &Schedule{Hours: []int{2}, Minutes: []int{30}}},
		{Frequency: Day, Schedule: &Schedule{Hours: []int{1, 3}, Minutes: []int{0, 30}}},
		{Frequency: Minute, Interval: 7, Schedule: &Schedule{Hours: all(24)}},
		{Frequency: Second, Interval: 10, Schedule: &Schedule{Hours: []int{1, 2}}},
		{Frequency: Week, Schedule: &Schedule{WeekDays: []Weekday{Saturday, Sunday}, Hours: []int{2, 23}, Minutes: []int{30}}},
		{Frequency: Month, Schedule: &Schedule{MonthDays: []int{-1, 1}, Hours: []int{0}}},
		{Cron: "*/20 1-3 * * *"},
		{Cron: "30 1-3/2 * * *"},
	}
	for _, zone := range []string{"UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe"} {
		for _, rec := range tests {
			rec := *rec
			rec.TimeZone = zone
			rec.Extensions = &Extensions{Window: retry.Duration(time.Second)} // the bound is kept for spread rules
			r, err := Compile(&rec, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			if err != nil {
				t.Fatalf("%+v: %v", rec, err)
			}
			prev := r.next(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
			for range 5000 {
				s := r.next(prev)
				if s.IsZero() || s.After(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
					break
				}
				if gap := s.Sub(prev); gap < r.minGap {
					t.Errorf("%s %+v %+v: %v to %v is %v, less than the bound %v", zone, rec, rec.Schedule, prev, s, gap, r.minGap)
					break
				}
				prev = s
			}
		}
	}
}
