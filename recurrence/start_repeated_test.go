package recurrence_test

import (
	"testing"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// TestStartInRepeatedHour pins the first runs of rules without a schedule
// whose start lies in the second pass of a repeated hour: the start is
// the first occurrence, as for every other start, and later ones run at
// the start's wall time, at its first instant when it occurs twice.
func TestStartInRepeatedHour(t *testing.T) {
	tests := []struct {
		name  string
		freq  recurrence.Frequency
		zone  string
		start string
		end   string // empty: none
		want  []string
	}{
		// New York, 2027-11-07: 02:00 EDT becomes 01:00 EST (06:00 UTC).
		{"New York daily from the second 01:30", recurrence.Day, "America/New_York", "2027-11-07T06:30:00Z", "",
			[]string{"2027-11-07T06:30:00Z", "2027-11-08T06:30:00Z", "2027-11-09T06:30:00Z"}},
		{"New York daily from the second 01:30:17.5", recurrence.Day, "America/New_York", "2027-11-07T06:30:17.5Z", "",
			[]string{"2027-11-07T06:30:17.5Z", "2027-11-08T06:30:17.5Z"}},
		{"New York daily from the second 01:30, ending the same day", recurrence.Day, "America/New_York", "2027-11-07T06:30:00Z", "2027-11-07T12:00:00Z",
			[]string{"2027-11-07T06:30:00Z"}},
		{"New York weekly from the second 01:30", recurrence.Week, "America/New_York", "2027-11-07T06:30:00Z", "",
			[]string{"2027-11-07T06:30:00Z", "2027-11-14T06:30:00Z"}},
		// Berlin, 2027-10-31: 03:00 CEST becomes 02:00 CET (01:00 UTC).
		{"Berlin monthly from the second 02:30:17", recurrence.Month, "Europe/Berlin", "2027-10-31T01:30:17Z", "",
			[]string{"2027-10-31T01:30:17Z", "2027-12-31T01:30:17Z"}},
		{"Berlin yearly from the second 02:30", recurrence.Year, "Europe/Berlin", "2027-10-31T01:30:00Z", "",
			[]string{"2027-10-31T01:30:00Z", "2028-10-31T01:30:00Z"}},
		{"Berlin daily from the first 02:30 runs it once", recurrence.Day, "Europe/Berlin", "2027-10-31T00:30:00Z", "",
			[]string{"2027-10-31T00:30:00Z", "2027-11-01T01:30:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recurrence.Recurrence{Frequency: tt.freq, TimeZone: tt.zone}
			if tt.end != "" {
				end := mustTime(t, tt.end)
				r.EndTime = &end
			}
			start := mustTime(t, tt.start)
			want := make([]time.Time, len(tt.want))
			for i, s := range tt.want {
				want[i] = mustTime(t, s)
			}
			rule := mustCompile(t, r, start)
			checkWalk(t, rule, start, want)
			if got := rule.Next(want[len(want)-1]); tt.end != "" && !got.IsZero() {
				t.Errorf("Next(%v) = %v, want none", want[len(want)-1], got)
			}
			second := start.Add(-time.Hour).In(rule.Location()).Hour() == start.In(rule.Location()).Hour()
			if got := rule.Repeated(want[0]); got != second {
				t.Errorf("Repeated(%v) = %v, want %v", want[0], got, second)
			}
			for _, w := range want[1:] {
				if rule.Repeated(w) {
					t.Errorf("Repeated(%v) = true, want false", w)
				}
			}
			// A fresh rule asked once, far from its first runs first, so
			// that it answers from its template.
			rule = mustCompile(t, r, start)
			rule.Next(start.AddDate(0, 3, 0))
			rule.Next(start.AddDate(2, 0, 0))
			if got := rule.Next(start.Add(-time.Nanosecond)); !got.Equal(want[0]) {
				t.Errorf("Next(%v) after later questions = %v, want %v", start.Add(-time.Nanosecond), got, want[0])
			}
		})
	}
}

// TestStartIsFirstWithoutSchedule checks, for Day, Week, Month and Year
// rules without a schedule started at instants all around every clock
// change of 2026 and 2027 in zones whose clocks move by an hour, half an
// hour and at midnight, that the start is the first occurrence, asked
// first or after the rule has answered later questions.
func TestStartIsFirstWithoutSchedule(t *testing.T) {
	compared := 0
	for _, zone := range []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Santiago", "America/Havana"} {
		loc, trs := clockChanges(t, zone)
		for _, tr := range trs {
			for k := -12; k <= 12; k++ {
				start := tr.Add(time.Duration(k)*7*time.Minute + time.Duration(k+12)*time.Second + 250*time.Millisecond)
				for _, f := range []recurrence.Frequency{recurrence.Day, recurrence.Week, recurrence.Month, recurrence.Year} {
					r := &recurrence.Recurrence{Frequency: f, Interval: 2, TimeZone: zone}
					rule := mustCompile(t, r, start)
					if got := rule.Next(start.Add(-time.Nanosecond)); !got.Equal(start) {
						t.Fatalf("%s %s from %v: first occurrence %v, want the start", zone, f, start.In(loc), got.In(loc))
					}
					second := rule.Next(start)
					if w, s := second.In(loc), start.In(loc); !second.After(start) || w.Hour() != s.Hour() || w.Minute() != s.Minute() || w.Nanosecond() != s.Nanosecond() {
						t.Fatalf("%s %s from %v: second occurrence %v, want a later one at the start's time of day", zone, f, s, w)
					}
					rule = mustCompile(t, r, start)
					rule.Next(start.AddDate(3, 0, 0))
					rule.Next(start.AddDate(5, 0, 0))
					if got := rule.Next(start.Add(-time.Nanosecond)); !got.Equal(start) {
						t.Fatalf("%s %s from %v: first occurrence after later questions %v, want the start", zone, f, start.In(loc), got.In(loc))
					}
					compared++
				}
			}
		}
	}
	t.Logf("%d rules compared", compared)
}
