package recurrence_test

import (
	"testing"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// TestDST pins the behaviour on the days clocks change. A time whose hour
// the schedule fixes runs shifted forward by the gap when it does not exist
// (02:30 becomes 03:30) and once, at the first instant, when it exists
// twice; a time whose hour the schedule leaves free (minutes without
// hours, Hour with a schedule) keeps its cadence: it is skipped in a gap
// and runs in both passes of a repeated hour. Minute and Hour frequencies
// without a schedule step in elapsed time. Expected instants are written
// in UTC.
func TestDST(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no zone data:", err)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no zone data:", err)
	}
	onTheHour := &recurrence.Schedule{Minutes: []int{0}}
	halfHours := &recurrence.Schedule{Minutes: []int{0, 30}}
	tests := []struct {
		name  string
		zone  string
		freq  recurrence.Frequency
		sched *recurrence.Schedule
		start time.Time
		from  time.Time // zero: start
		want  []time.Time
	}{
		// New York, 2025-03-09: 02:00 EST becomes 03:00 EDT (07:00 UTC).
		{"NY spring daily 02:30", "America/New_York", recurrence.Day, nil,
			time.Date(2025, 3, 7, 2, 30, 0, 0, ny), time.Time{},
			[]time.Time{utc(2025, 3, 7, 7, 30), utc(2025, 3, 8, 7, 30), utc(2025, 3, 9, 7, 30) /* 03:30 EDT */, utc(2025, 3, 10, 6, 30)}},
		{"NY spring daily schedule 02:30", "America/New_York", recurrence.Day, &recurrence.Schedule{Hours: []int{2}, Minutes: []int{30}},
			time.Date(2025, 3, 8, 0, 0, 0, 0, ny), time.Time{},
			[]time.Time{utc(2025, 3, 8, 7, 30), utc(2025, 3, 9, 7, 30), utc(2025, 3, 10, 6, 30)}},
		{"NY spring every hour on the hour", "America/New_York", recurrence.Day, onTheHour,
			time.Date(2025, 3, 9, 0, 0, 0, 0, ny), time.Time{},
			// 00:00 EST, 01:00 EST, (02:00 does not exist) 03:00 EDT, 04:00 EDT
			[]time.Time{utc(2025, 3, 9, 5, 0), utc(2025, 3, 9, 6, 0), utc(2025, 3, 9, 7, 0), utc(2025, 3, 9, 8, 0)}},
		{"NY spring every half hour", "America/New_York", recurrence.Day, halfHours,
			time.Date(2025, 3, 9, 1, 0, 0, 0, ny), time.Time{},
			// 01:00 01:30 EST, (02:00 and 02:30 do not exist) 03:00 03:30 04:00 EDT
			[]time.Time{utc(2025, 3, 9, 6, 0), utc(2025, 3, 9, 6, 30), utc(2025, 3, 9, 7, 0), utc(2025, 3, 9, 7, 30), utc(2025, 3, 9, 8, 0)}},
		{"NY spring hourly in elapsed time", "America/New_York", recurrence.Hour, nil,
			time.Date(2025, 3, 9, 0, 30, 0, 0, ny), time.Time{},
			[]time.Time{utc(2025, 3, 9, 5, 30), utc(2025, 3, 9, 6, 30), utc(2025, 3, 9, 7, 30), utc(2025, 3, 9, 8, 30)}},
		{"NY spring hourly with a schedule", "America/New_York", recurrence.Hour, onTheHour,
			time.Date(2025, 3, 9, 0, 0, 0, 0, ny), time.Time{},
			// 00:00 01:00 EST, (02:00 does not exist) 03:00 04:00 EDT
			[]time.Time{utc(2025, 3, 9, 5, 0), utc(2025, 3, 9, 6, 0), utc(2025, 3, 9, 7, 0), utc(2025, 3, 9, 8, 0)}},
		{"NY spring weekly", "America/New_York", recurrence.Week, &recurrence.Schedule{WeekDays: week(recurrence.Sunday), Hours: []int{2}, Minutes: []int{15}},
			time.Date(2025, 3, 1, 0, 0, 0, 0, ny), time.Time{},
			[]time.Time{utc(2025, 3, 2, 7, 15), utc(2025, 3, 9, 7, 15) /* 03:15 EDT */, utc(2025, 3, 16, 6, 15)}},
		// New York, 2025-11-02: 02:00 EDT becomes 01:00 EST (06:00 UTC).
		{"NY fall daily 01:30", "America/New_York", recurrence.Day, nil,
			time.Date(2025, 11, 1, 1, 30, 0, 0, ny), time.Time{},
			[]time.Time{utc(2025, 11, 1, 5, 30), utc(2025, 11, 2, 5, 30) /* 01:30 EDT */, utc(2025, 11, 3, 6, 30)}},
		{"NY fall every hour on the hour", "America/New_York", recurrence.Day, onTheHour,
			time.Date(2025, 11, 2, 0, 0, 0, 0, ny), time.Time{},
			// 00:00 EDT, 01:00 EDT, 01:00 EST (the repeated hour runs too), 02:00 EST
			[]time.Time{utc(2025, 11, 2, 4, 0), utc(2025, 11, 2, 5, 0), utc(2025, 11, 2, 6, 0), utc(2025, 11, 2, 7, 0)}},
		{"NY fall every half hour from the first pass", "America/New_York", recurrence.Hour, halfHours,
			time.Date(2025, 11, 2, 5, 40, 0, 0, time.UTC), time.Time{},
			// started at 01:40 EDT: 01:00 and 01:30 EST come after it
			[]time.Time{utc(2025, 11, 2, 6, 0), utc(2025, 11, 2, 6, 30), utc(2025, 11, 2, 7, 0)}},
		{"NY fall every half hour at 01", "America/New_York", recurrence.Day, &recurrence.Schedule{Hours: []int{1}, Minutes: []int{0, 30}},
			time.Date(2025, 11, 2, 0, 0, 0, 0, ny), time.Time{},
			// the hour is fixed: 01:00 and 01:30 EDT only, then the next day
			[]time.Time{utc(2025, 11, 2, 5, 0), utc(2025, 11, 2, 5, 30), utc(2025, 11, 3, 6, 0)}},
		{"NY fall every hour, all 24 listed", "America/New_York", recurrence.Hour, &recurrence.Schedule{Hours: allHours(), Minutes: []int{15}},
			time.Date(2025, 11, 2, 0, 0, 0, 0, ny), time.Time{},
			[]time.Time{utc(2025, 11, 2, 4, 15), utc(2025, 11, 2, 5, 15), utc(2025, 11, 2, 6, 15), utc(2025, 11, 2, 7, 15)}},
		{"NY fall from inside the repeated hour", "America/New_York", recurrence.Day, halfHours,
			time.Date(2025, 11, 1, 0, 0, 0, 0, ny), utc(2025, 11, 2, 6, 10), // 01:10 EST
			[]time.Time{utc(2025, 11, 2, 6, 30), utc(2025, 11, 2, 7, 0), utc(2025, 11, 2, 7, 30)}},
		{"NY fall hourly in elapsed time", "America/New_York", recurrence.Hour, nil,
			time.Date(2025, 11, 2, 0, 30, 0, 0, ny), time.Time{},
			[]time.Time{utc(2025, 11, 2, 4, 30), utc(2025, 11, 2, 5, 30), utc(2025, 11, 2, 6, 30), utc(2025, 11, 2, 7, 30)}},
		{"NY fall every minute in elapsed time", "America/New_York", recurrence.Minute, nil,
			time.Date(2025, 11, 2, 1, 30, 0, 0, ny), utc(2025, 11, 2, 5, 59),
			// 01:59 EDT, 01:00 EST, 01:01 EST
			[]time.Time{utc(2025, 11, 2, 5, 59), utc(2025, 11, 2, 6, 0), utc(2025, 11, 2, 6, 1)}},
		// Berlin, 2025-03-30: 02:00 CET becomes 03:00 CEST (01:00 UTC).
		{"Berlin spring daily 02:30", "Europe/Berlin", recurrence.Day, nil,
			time.Date(2025, 3, 29, 2, 30, 0, 0, berlin), time.Time{},
			[]time.Time{utc(2025, 3, 29, 1, 30), utc(2025, 3, 30, 1, 30) /* 03:30 CEST */, utc(2025, 3, 31, 0, 30)}},
		{"Berlin spring every hour on the hour", "Europe/Berlin", recurrence.Day, onTheHour,
			time.Date(2025, 3, 30, 0, 0, 0, 0, berlin), time.Time{},
			[]time.Time{utc(2025, 3, 29, 23, 0), utc(2025, 3, 30, 0, 0), utc(2025, 3, 30, 1, 0), utc(2025, 3, 30, 2, 0)}},
		// Berlin, 2025-10-26: 03:00 CEST becomes 02:00 CET (01:00 UTC).
		{"Berlin fall daily 02:30", "Europe/Berlin", recurrence.Day, nil,
			time.Date(2025, 10, 25, 2, 30, 0, 0, berlin), time.Time{},
			[]time.Time{utc(2025, 10, 25, 0, 30), utc(2025, 10, 26, 0, 30) /* 02:30 CEST */, utc(2025, 10, 27, 1, 30)}},
		{"Berlin fall every hour on the hour", "Europe/Berlin", recurrence.Day, onTheHour,
			time.Date(2025, 10, 26, 0, 0, 0, 0, berlin), time.Time{},
			// 00:00 01:00 02:00 CEST, 02:00 03:00 CET
			[]time.Time{utc(2025, 10, 25, 22, 0), utc(2025, 10, 25, 23, 0), utc(2025, 10, 26, 0, 0), utc(2025, 10, 26, 1, 0), utc(2025, 10, 26, 2, 0)}},
		{"Berlin fall hourly with a schedule", "Europe/Berlin", recurrence.Hour, &recurrence.Schedule{Minutes: []int{30}},
			time.Date(2025, 10, 26, 1, 0, 0, 0, berlin), time.Time{},
			// 01:30 CEST, 02:30 CEST, 02:30 CET, 03:30 CET
			[]time.Time{utc(2025, 10, 25, 23, 30), utc(2025, 10, 26, 0, 30), utc(2025, 10, 26, 1, 30), utc(2025, 10, 26, 2, 30)}},
		// Lord Howe Island, 2026-10-04: 02:00 (+10:30) becomes 02:30 (+11).
		{"Lord Howe spring every 20 minutes", "Australia/Lord_Howe", recurrence.Hour, &recurrence.Schedule{Minutes: []int{0, 20, 40}},
			time.Date(2026, 10, 4, 1, 40, 0, 0, time.UTC).Add(-630 * time.Minute), time.Time{},
			// 01:40 +1030, (02:00 and 02:20 do not exist) 02:40 03:00 +11
			[]time.Time{utc(2026, 10, 3, 15, 10), utc(2026, 10, 3, 15, 40), utc(2026, 10, 3, 16, 0)}},
		{"Lord Howe spring daily 02:20", "Australia/Lord_Howe", recurrence.Day, &recurrence.Schedule{Hours: []int{2}, Minutes: []int{20}},
			time.Date(2026, 10, 3, 0, 0, 0, 0, time.UTC), time.Time{},
			// 4 October: 02:50 +11 (shifted by the half-hour gap); 5, 6 October: 02:20 +11
			[]time.Time{utc(2026, 10, 3, 15, 50), utc(2026, 10, 4, 15, 20), utc(2026, 10, 5, 15, 20)}},
		{"Berlin fall hourly in elapsed time", "Europe/Berlin", recurrence.Hour, nil,
			time.Date(2025, 10, 26, 1, 0, 0, 0, berlin), time.Time{},
			[]time.Time{utc(2025, 10, 25, 23, 0), utc(2025, 10, 26, 0, 0), utc(2025, 10, 26, 1, 0), utc(2025, 10, 26, 2, 0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule := mustCompile(t, &recurrence.Recurrence{Frequency: tt.freq, TimeZone: tt.zone, Schedule: tt.sched}, tt.start)
			from := tt.from
			if from.IsZero() {
				from = tt.start
			}
			checkWalk(t, rule, from, tt.want)
		})
	}
}

func allHours() []int {
	h := make([]int, 24)
	for i := range h {
		h[i] = i
	}
	return h
}
