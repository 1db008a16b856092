package recurrence_test

import (
	"testing"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// TestHourIntervalCountsWallHours pins what the documentation says of an
// Hour rule with an interval and a schedule: the interval counts the hours
// the clocks show, as "0 */2 * * *" does, so across New York's changes two
// runs lie one or three real hours apart; without a schedule the rule steps
// in elapsed time.
func TestHourIntervalCountsWallHours(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	everyTwo := &recurrence.Recurrence{Frequency: recurrence.Hour, Interval: 2, TimeZone: "America/New_York", Schedule: &recurrence.Schedule{Minutes: []int{0}}}
	cron := recurrence.Cron("0 */2 * * *").In("America/New_York")
	elapsed := &recurrence.Recurrence{Frequency: recurrence.Hour, Interval: 2, TimeZone: "America/New_York"}
	for _, tt := range []struct {
		name  string
		rec   *recurrence.Recurrence
		start time.Time
		want  []time.Time
	}{
		// 2027-03-14: 02:00 EST becomes 03:00 EDT (07:00 UTC).
		{"spring, schedule", everyTwo, time.Date(2027, 3, 13, 22, 0, 0, 0, ny),
			[]time.Time{utc(2027, 3, 14, 3, 0), utc(2027, 3, 14, 5, 0), utc(2027, 3, 14, 8, 0), utc(2027, 3, 14, 10, 0)}},
		{"spring, cron", cron, time.Date(2027, 3, 13, 22, 0, 0, 0, ny),
			[]time.Time{utc(2027, 3, 14, 3, 0), utc(2027, 3, 14, 5, 0), utc(2027, 3, 14, 8, 0), utc(2027, 3, 14, 10, 0)}},
		// 2027-11-07: 02:00 EDT becomes 01:00 EST (06:00 UTC); from 21:00,
		// odd hours: 01:00 runs in both passes.
		{"fall, odd hours", everyTwo, time.Date(2027, 11, 6, 21, 0, 0, 0, ny),
			[]time.Time{utc(2027, 11, 7, 1, 0), utc(2027, 11, 7, 3, 0), utc(2027, 11, 7, 5, 0), utc(2027, 11, 7, 6, 0), utc(2027, 11, 7, 8, 0)}},
		{"spring, elapsed", elapsed, time.Date(2027, 3, 13, 22, 0, 0, 0, ny),
			[]time.Time{utc(2027, 3, 14, 3, 0), utc(2027, 3, 14, 5, 0), utc(2027, 3, 14, 7, 0), utc(2027, 3, 14, 9, 0)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkWalk(t, mustCompile(t, tt.rec, tt.start), tt.start, tt.want)
		})
	}
}

// TestWeeklyWithoutDays pins that Weekly with no days runs on the
// weekday of the start.
func TestWeeklyWithoutDays(t *testing.T) {
	start := time.Date(2027, 11, 10, 12, 0, 0, 0, time.UTC) // a Wednesday
	checkWalk(t, mustCompile(t, recurrence.Weekly(9, 0), start), start,
		[]time.Time{utc(2027, 11, 17, 9, 0), utc(2027, 11, 24, 9, 0)})
}
