package recurrence_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// TestSeconds pins frequency Second and schedule seconds: in elapsed time
// without a schedule, on the clock's seconds with one.
func TestSeconds(t *testing.T) {
	start := time.Date(2026, 3, 1, 11, 59, 45, 500_000_000, time.UTC)
	at := func(h, m, s int) time.Time { return time.Date(2026, 3, 1, h, m, s, 0, time.UTC) }
	for _, tt := range []struct {
		name string
		rec  *recurrence.Recurrence
		want []time.Time
	}{
		{"Every(10, Second) steps from the start", recurrence.Every(10, recurrence.Second),
			[]time.Time{start, start.Add(10 * time.Second), start.Add(20 * time.Second), start.Add(30 * time.Second)}},
		{"seconds of every minute", &recurrence.Recurrence{Frequency: recurrence.Minute, Schedule: &recurrence.Schedule{Seconds: []int{50, 10}}},
			[]time.Time{at(11, 59, 50), at(12, 0, 10), at(12, 0, 50), at(12, 1, 10)}},
		{"seconds without minutes at frequency Day run every minute", &recurrence.Recurrence{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Seconds: []int{0, 30}}},
			[]time.Time{at(12, 0, 0), at(12, 0, 30), at(12, 1, 0), at(12, 1, 30)}},
		{"frequency Second with a schedule", &recurrence.Recurrence{Frequency: recurrence.Second, Interval: 20, Schedule: &recurrence.Schedule{Hours: []int{12}}},
			[]time.Time{at(12, 0, 5), at(12, 0, 25), at(12, 0, 45), at(12, 1, 5)}},
		{"one second at a fixed time", &recurrence.Recurrence{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Seconds: []int{30}, Minutes: []int{0}, Hours: []int{9}}},
			[]time.Time{time.Date(2026, 3, 2, 9, 0, 30, 0, time.UTC), time.Date(2026, 3, 3, 9, 0, 30, 0, time.UTC)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkWalk(t, mustCompile(t, tt.rec, start), start, tt.want)
		})
	}
}

// TestSecondsKeepCadenceThroughClockChanges: seconds follow the rule for
// times whose hour the schedule does not fix. Every 30 seconds in Berlin
// stays 30 seconds apart when clocks go forward (the readings of the gap
// are skipped) and when they go back (the repeated readings run twice).
func TestSecondsKeepCadenceThroughClockChanges(t *testing.T) {
	for _, rec := range []*recurrence.Recurrence{
		{Frequency: recurrence.Minute, Schedule: &recurrence.Schedule{Seconds: []int{0, 30}}, TimeZone: "Europe/Berlin"},
		{Frequency: recurrence.Second, Interval: 30, Schedule: &recurrence.Schedule{Seconds: []int{0, 30}}, TimeZone: "Europe/Berlin"},
		{Cron: "*/30 * * * * *", TimeZone: "Europe/Berlin"},
	} {
		for _, change := range []time.Time{time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC), time.Date(2026, 10, 25, 1, 0, 0, 0, time.UTC)} {
			from := change.Add(-2 * time.Hour)
			rule := mustCompile(t, rec, from)
			prev := rule.Next(from.Add(-time.Nanosecond))
			repeated := 0
			for range 4 * 60 * 2 {
				next := rule.Next(prev)
				if d := next.Sub(prev); d != 30*time.Second {
					t.Fatalf("%+v around %v: Next(%v) = %v, %v later, want 30s", rec, change, prev, next, d)
				}
				if rule.Repeated(next) {
					repeated++
				}
				prev = next
			}
			if want := map[bool]int{true: 0, false: 120}[change.Month() == time.March]; repeated != want {
				t.Errorf("%+v around %v: %d repeated occurrences, want %d", rec, change, repeated, want)
			}
		}
	}
	// A time with a fixed hour still runs once, shifted by the gap.
	rec := &recurrence.Recurrence{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Seconds: []int{15}, Minutes: []int{30}, Hours: []int{2}}, TimeZone: "Europe/Berlin"}
	rule := mustCompile(t, rec, time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC))
	if got, want := rule.Next(time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)), time.Date(2026, 3, 29, 1, 30, 15, 0, time.UTC); !got.Equal(want) || !rule.Shifted(got) {
		t.Errorf("02:30:15 on the day clocks go forward = %v (shifted %v), want %v, shifted", got, rule.Shifted(got), want)
	}
}

func TestSecondsValidation(t *testing.T) {
	for _, tt := range []struct {
		rec  *recurrence.Recurrence
		want string
	}{
		{&recurrence.Recurrence{Frequency: recurrence.Minute, Schedule: &recurrence.Schedule{Seconds: []int{0, 60, 0}}},
			"schedule.seconds[1]: 60 is not a second (0-59)\nschedule.seconds[2]: 0 repeats schedule.seconds[0]"},
		{&recurrence.Recurrence{Frequency: recurrence.Second, Interval: 1001}, "interval: 1001 is more than 1000, the most frequency Second allows"},
		{&recurrence.Recurrence{Frequency: "Fortnight"}, `frequency: "Fortnight" is not a frequency (Second, Minute, Hour, Day, Week, Month or Year)`},
	} {
		if err := tt.rec.Validate(); err == nil || err.Error() != tt.want {
			t.Errorf("Validate(%+v) = %v, want %s", tt.rec, err, tt.want)
		}
	}
	// Every 2 seconds from an even second never reaches second 1.
	_, err := recurrence.Compile(&recurrence.Recurrence{Frequency: recurrence.Second, Interval: 2, Schedule: &recurrence.Schedule{Seconds: []int{1}}},
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if err == nil || !strings.Contains(err.Error(), "never lands on a scheduled hour, minute and second") {
		t.Errorf("Compile(every 2 seconds at second 1) = %v, want a schedule that never matches", err)
	}
}

func TestResolution(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		rec  *recurrence.Recurrence
		want time.Duration
	}{
		{recurrence.Every(1, recurrence.Minute), time.Minute},
		{recurrence.Every(10, recurrence.Second), time.Second},
		{recurrence.Daily(9, 30), time.Minute},
		{&recurrence.Recurrence{Frequency: recurrence.Hour, Schedule: &recurrence.Schedule{Seconds: []int{30}}}, time.Minute},
		{&recurrence.Recurrence{Frequency: recurrence.Hour, Schedule: &recurrence.Schedule{Seconds: []int{0, 30}}}, time.Second},
		{recurrence.Cron("*/10 * * * * *"), time.Second},
	} {
		if got := mustCompile(t, tt.rec, start).Resolution(); got != tt.want {
			t.Errorf("Resolution of %+v = %v, want %v", tt.rec, got, tt.want)
		}
	}
}
