package recurrence_test

import (
	"testing"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// TestPlaceOntoClockChange pins where Exclusions.Place moves an
// occurrence whose wall time does not exist, or exists twice, on the day
// it moves to: as the rules' own fixed times run, shifted by the gap
// (02:30 runs at 03:30), and at the first of the two instants. Expected
// instants are written in UTC.
func TestPlaceOntoClockChange(t *testing.T) {
	tests := []struct {
		name     string
		zone     string
		excluded string // a date
		at       string
		on       recurrence.OnExcluded
		want     string
	}{
		// New York, 2000-04-02: 02:00 EST becomes 03:00 EDT (07:00 UTC).
		{"New York Saturday 02:30 onto Sunday's gap", "America/New_York", "2000-04-01", "2000-04-01T07:30:00Z", recurrence.OnExcludedNextIncluded,
			"2000-04-02T07:30:00Z"},
		{"New York Monday 02:30 back onto Sunday's gap", "America/New_York", "2000-04-03", "2000-04-03T06:30:00Z", recurrence.OnExcludedPreviousIncluded,
			"2000-04-02T07:30:00Z"},
		// Santiago, 2027-09-05: midnight (-04) becomes 01:00 (-03), at 04:00 UTC.
		{"Santiago Monday 00:30 back onto Sunday's gap", "America/Santiago", "2027-09-06", "2027-09-06T03:30:00Z", recurrence.OnExcludedPreviousIncluded,
			"2027-09-05T04:30:00Z"},
		{"Santiago Saturday 00:30 onto Sunday's gap", "America/Santiago", "2027-09-04", "2027-09-04T04:30:00Z", recurrence.OnExcludedNextIncluded,
			"2027-09-05T04:30:00Z"},
		// Berlin, 2000-10-29: 03:00 CEST becomes 02:00 CET (01:00 UTC).
		{"Berlin Monday 02:30 back onto Sunday's repeated hour", "Europe/Berlin", "2000-10-30", "2000-10-30T01:30:00Z", recurrence.OnExcludedPreviousIncluded,
			"2000-10-29T00:30:00Z"},
		{"Berlin Saturday 02:30 onto Sunday's repeated hour", "Europe/Berlin", "2000-10-28", "2000-10-28T00:30:00Z", recurrence.OnExcludedNextIncluded,
			"2000-10-29T00:30:00Z"},
		// New York, 2000-10-29: 02:00 EDT becomes 01:00 EST (06:00 UTC).
		{"New York Monday 01:30 back onto Sunday's repeated hour", "America/New_York", "2000-10-30", "2000-10-30T06:30:00Z", recurrence.OnExcludedPreviousIncluded,
			"2000-10-29T05:30:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := recurrence.LoadTimeZone(tt.zone)
			if err != nil {
				t.Fatal(err)
			}
			e, err := recurrence.CompileExclusions(loc, []time.Time{mustTime(t, tt.excluded+"T00:00:00Z")}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			at, want := mustTime(t, tt.at), mustTime(t, tt.want)
			if !e.Excludes(at) {
				t.Fatalf("Excludes(%v) = false, want true", at.In(loc))
			}
			got, ok := e.Place(at, tt.on)
			if !ok || !got.Equal(want) {
				t.Errorf("Place(%v, %s) = %v, %v; want %v", at.In(loc), tt.on, got.In(loc), ok, want.In(loc))
			}
		})
	}
}

// TestExcludesAroundMidnightGap checks that a calendar rule excludes the
// local date its occurrence falls on when the next day begins in a
// spring-forward gap at midnight: Santiago's clocks go from Saturday
// 24:00 to Sunday 01:00, and a rule that runs Saturdays at 23:30 excludes
// the Saturday, not the Sunday, in the span whose dates the calendar
// keeps and after it (2201).
func TestExcludesAroundMidnightGap(t *testing.T) {
	loc, err := recurrence.LoadTimeZone("America/Santiago")
	if err != nil {
		t.Fatal(err)
	}
	saturdayNight := &recurrence.Recurrence{Frequency: recurrence.Week,
		Schedule: &recurrence.Schedule{WeekDays: []recurrence.Weekday{recurrence.Saturday}, Hours: []int{23}, Minutes: []int{30}}}
	e, err := recurrence.CompileExclusions(loc, nil, nil, []*recurrence.Recurrence{saturdayNight})
	if err != nil {
		t.Fatal(err)
	}
	for _, saturday := range []time.Time{time.Date(2027, 9, 4, 0, 0, 0, 0, time.UTC), time.Date(2201, 9, 5, 0, 0, 0, 0, time.UTC)} {
		for d := -1; d <= 2; d++ {
			y, m, dd := saturday.AddDate(0, 0, d).Date()
			at := time.Date(y, m, dd, 12, 0, 0, 0, loc)
			if got, want := e.Excludes(at), d == 0; got != want {
				t.Errorf("Excludes(%v, a %v) = %v, want %v", at, at.Weekday(), got, want)
			}
		}
	}
}
