package recurrence_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// TestStartAfterGap pins the first runs of rules that fix their hours
// when the start lies just after a spring-forward gap, before the instant
// a time in that gap runs at: that time runs, shifted by the gap, as it
// does for a rule that started earlier (the first schedule match at or
// after the start). Expected instants are written in UTC.
func TestStartAfterGap(t *testing.T) {
	at230 := &recurrence.Schedule{Hours: []int{2}, Minutes: []int{30}}
	tests := []struct {
		name     string
		freq     recurrence.Frequency
		interval int32
		zone     string
		sched    *recurrence.Schedule
		start    string
		want     []string
	}{
		// Berlin, 2027-03-28: 02:00 CET becomes 03:00 CEST (01:00 UTC).
		{"Berlin daily 02:30 from 03:10", recurrence.Day, 1, "Europe/Berlin", at230, "2027-03-28T01:10:00Z",
			[]string{"2027-03-28T01:30:00Z", "2027-03-29T00:30:00Z"}},
		{"Berlin daily 02:30 from 03:00", recurrence.Day, 1, "Europe/Berlin", at230, "2027-03-28T01:00:00Z",
			[]string{"2027-03-28T01:30:00Z", "2027-03-29T00:30:00Z"}},
		{"Berlin daily 02:30 from 03:30", recurrence.Day, 1, "Europe/Berlin", at230, "2027-03-28T01:30:00Z",
			[]string{"2027-03-28T01:30:00Z", "2027-03-29T00:30:00Z"}},
		{"Berlin daily 02:30 from 03:31", recurrence.Day, 1, "Europe/Berlin", at230, "2027-03-28T01:31:00Z",
			[]string{"2027-03-29T00:30:00Z"}},
		{"Berlin hourly in hour 2 from 03:10", recurrence.Hour, 1, "Europe/Berlin", at230, "2027-03-28T01:10:00Z",
			[]string{"2027-03-28T01:30:00Z", "2027-03-29T00:30:00Z"}},
		{"Berlin on the 28th at 02:30 from 03:10", recurrence.Month, 1, "Europe/Berlin",
			&recurrence.Schedule{MonthDays: []int{28}, Hours: []int{2}, Minutes: []int{30}}, "2027-03-28T01:10:00Z",
			[]string{"2027-03-28T01:30:00Z", "2027-04-28T00:30:00Z"}},
		// New York, 2027-03-14: 02:00 EST becomes 03:00 EDT (07:00 UTC).
		{"New York every 2 days at 02:30 from 03:10", recurrence.Day, 2, "America/New_York", at230, "2027-03-14T07:10:00Z",
			[]string{"2027-03-14T07:30:00Z", "2027-03-16T06:30:00Z"}},
		{"New York every 2 weeks on Sunday at 02:30 from 03:10", recurrence.Week, 2, "America/New_York",
			&recurrence.Schedule{WeekDays: week(recurrence.Sunday), Hours: []int{2}, Minutes: []int{30}}, "2027-03-14T07:10:00Z",
			[]string{"2027-03-14T07:30:00Z", "2027-03-28T06:30:00Z"}},
		// London, 2027-03-28: 01:00 GMT becomes 02:00 BST (01:00 UTC).
		{"London weekly on Sunday at 01:30 from 02:10", recurrence.Week, 1, "Europe/London",
			&recurrence.Schedule{WeekDays: week(recurrence.Sunday), Hours: []int{1}, Minutes: []int{30}}, "2027-03-28T01:10:00Z",
			[]string{"2027-03-28T01:30:00Z", "2027-04-04T00:30:00Z"}},
		// Santiago, 2027-09-05: midnight (-04) becomes 01:00 (-03), at 04:00 UTC.
		{"Santiago daily 00:30 from 01:10", recurrence.Day, 1, "America/Santiago",
			&recurrence.Schedule{Hours: []int{0}, Minutes: []int{30}}, "2027-09-05T04:10:00Z",
			[]string{"2027-09-05T04:30:00Z", "2027-09-06T03:30:00Z"}},
		// Havana, 2027-03-14: midnight (-05) becomes 01:00 (-04), at 05:00 UTC.
		{"Havana weekly on Saturday and Sunday at 00:30 and 02:30 from 01:10", recurrence.Week, 1, "America/Havana",
			&recurrence.Schedule{WeekDays: week(recurrence.Saturday, recurrence.Sunday), Hours: []int{0, 2}, Minutes: []int{30}}, "2027-03-14T05:10:00Z",
			[]string{"2027-03-14T05:30:00Z", "2027-03-14T06:30:00Z", "2027-03-20T04:30:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recurrence.Recurrence{Frequency: tt.freq, Interval: tt.interval, TimeZone: tt.zone, Schedule: tt.sched}
			start := mustTime(t, tt.start)
			want := make([]time.Time, len(tt.want))
			for i, s := range tt.want {
				want[i] = mustTime(t, s)
			}
			rule := mustCompile(t, r, start)
			checkWalk(t, rule, start, want)
			loc := rule.Location()
			if shifted := !slices.Contains(tt.sched.Hours, want[0].In(loc).Hour()); rule.Shifted(want[0]) != shifted {
				t.Errorf("Shifted(%v) = %v, want %v", want[0], !shifted, shifted)
			}
			// A fresh rule asked once, far from its first runs first, so
			// that it answers from its template.
			rule = mustCompile(t, r, start)
			rule.Next(start.AddDate(1, 0, 0))
			rule.Next(start.AddDate(2, 0, 0))
			if got := rule.Next(start.Add(-time.Nanosecond)); !got.Equal(want[0]) {
				t.Errorf("Next(%v) after later questions = %v, want %v", start.Add(-time.Nanosecond), got, want[0])
			}
		})
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// TestUnreachedMonthsAfterGap checks that a Month rule whose interval never
// reaches a listed month, started just after a spring-forward gap, is
// refused with the months counted from the start's own month, as anywhere
// else.
func TestUnreachedMonthsAfterGap(t *testing.T) {
	r := &recurrence.Recurrence{Frequency: recurrence.Month, Interval: 2, TimeZone: "Europe/Berlin",
		Schedule: &recurrence.Schedule{Months: []int{4}, Hours: []int{2}, Minutes: []int{30}}}
	for _, start := range []string{"2027-03-28T01:10:00Z", "2027-03-20T12:00:00Z"} {
		_, err := recurrence.Compile(r, mustTime(t, start))
		var fe *recurrence.FieldError
		if !asFieldError(err, &fe) {
			t.Fatalf("Compile from %s: %v, want a FieldError", start, err)
		}
		const want = "are March, May, July, September, November and January, none of them a listed month"
		if fe.Path != "schedule.months" || !strings.Contains(fe.Reason, want) {
			t.Errorf("Compile from %s: %s: %s, want the reason to say %q", start, fe.Path, fe.Reason, want)
		}
	}
}
