package recurrence_test

import (
	"testing"
	"time"

	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

// benchWalk measures Next as a scheduler calls it: each call asks for the
// occurrence after the previous one.
func benchWalk(b *testing.B, rec *recurrence.Recurrence, start, from time.Time) {
	rule, err := recurrence.Compile(rec, start)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	t := from
	for b.Loop() {
		t = rule.Next(t)
		if t.IsZero() {
			b.Fatal("no occurrence")
		}
	}
}

func BenchmarkNextDocumentedSchedule(b *testing.B) {
	start := time.Date(2012, 8, 4, 0, 0, 0, 0, time.UTC)
	benchWalk(b, &recurrence.Recurrence{Frequency: recurrence.Week, Schedule: &recurrence.Schedule{
		WeekDays: []recurrence.Weekday{recurrence.Monday, recurrence.Wednesday, recurrence.Friday}, Hours: []int{10, 22}}},
		start, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

func BenchmarkNextWeekdays15Min(b *testing.B) {
	benchWalk(b, &recurrence.Recurrence{Frequency: recurrence.Week, Schedule: &recurrence.Schedule{
		WeekDays: []recurrence.Weekday{recurrence.Monday, recurrence.Tuesday, recurrence.Wednesday, recurrence.Thursday, recurrence.Friday},
		Hours:    []int{9, 10, 11, 12, 13, 14, 15, 16}, Minutes: []int{0, 15, 30, 45}}},
		time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

// The minutely benchmarks use a schedule (every minute of every hour) so
// that they expand through rrule-go; a Minute rule without a schedule is
// plain arithmetic.
var minutely = &recurrence.Recurrence{Frequency: recurrence.Minute, Schedule: &recurrence.Schedule{
	Hours: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}}}

func BenchmarkNextMinutelyYearOld(b *testing.B) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	benchWalk(b, minutely, now.AddDate(-1, 0, 0), now)
}

func BenchmarkNextMinutelyFresh(b *testing.B) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	benchWalk(b, minutely, now, now)
}

// BenchmarkNextMinutelyYearOldCold calls Next for instants far apart, so
// every call expands a new window: the cost of re-anchoring itself.
func BenchmarkNextMinutelyYearOldCold(b *testing.B) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rule, err := recurrence.Compile(minutely, now.AddDate(-1, 0, 0))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	t := now
	for b.Loop() {
		t = rule.Next(t).Add(24 * time.Hour)
	}
}

func BenchmarkNextMinutelyElapsed(b *testing.B) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	benchWalk(b, &recurrence.Recurrence{Frequency: recurrence.Minute}, now.AddDate(-1, 0, 0), now)
}

// scatteredAfters returns n instants step apart from from, so that
// consecutive calls cannot be answered from the previous call's work.
func scatteredAfters(from time.Time, step time.Duration, n int) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = from.Add(time.Duration(i) * step)
	}
	return out
}

// benchScattered measures Next for instants far apart.
func benchScattered(b *testing.B, rec *recurrence.Recurrence, start time.Time, afters []time.Time) {
	rule, err := recurrence.Compile(rec, start)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if rule.Next(afters[i%len(afters)]).IsZero() {
			b.Fatal("no occurrence")
		}
		i++
	}
}

func BenchmarkNextScatteredWeekdaysBerlin(b *testing.B) {
	benchScattered(b, &recurrence.Recurrence{Frequency: recurrence.Week, TimeZone: "Europe/Berlin", Schedule: &recurrence.Schedule{
		WeekDays: []recurrence.Weekday{recurrence.Monday, recurrence.Tuesday, recurrence.Wednesday, recurrence.Thursday, recurrence.Friday},
		Hours:    []int{9, 10, 11, 12, 13, 14, 15, 16}, Minutes: []int{0, 15, 30, 45}}},
		time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC),
		scatteredAfters(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 3*24*time.Hour+7*time.Minute+13*time.Second, 512))
}

func BenchmarkNextScatteredMonthlyNewYork(b *testing.B) {
	benchScattered(b, &recurrence.Recurrence{Frequency: recurrence.Month, TimeZone: "America/New_York", Schedule: &recurrence.Schedule{
		MonthlyOccurrences: []recurrence.MonthlyOccurrence{{Day: recurrence.Friday, Occurrence: -1}, {Day: recurrence.Monday, Occurrence: 1}},
		Hours:              []int{9}, Minutes: []int{30}}},
		time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC),
		scatteredAfters(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 11*24*time.Hour+7*time.Minute+13*time.Second, 512))
}

func BenchmarkNextScatteredYearly(b *testing.B) {
	benchScattered(b, &recurrence.Recurrence{Frequency: recurrence.Year},
		time.Date(2024, 2, 29, 9, 0, 0, 0, time.UTC),
		scatteredAfters(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 101*24*time.Hour+7*time.Minute, 512))
}

// BenchmarkNextWindow walks an hourly schedule (minute 0 of every hour,
// as "0 * * * *" gives it) with and without a window of 15 minutes: the
// window's cost is the difference.
func BenchmarkNextWindow(b *testing.B) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, w := range []time.Duration{0, 15 * time.Minute} {
		rec := &recurrence.Recurrence{Frequency: recurrence.Hour, Schedule: &recurrence.Schedule{Minutes: []int{0}},
			Extensions: &recurrence.Extensions{Window: retry.Duration(w)}}
		b.Run("window="+retry.Duration(w).String(), func(b *testing.B) {
			rule, err := recurrence.CompileJob(rec, now.AddDate(-1, 0, 0), "reports", "nightly")
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			t := now
			for b.Loop() {
				if t = rule.Next(t); t.IsZero() {
					b.Fatal("no occurrence")
				}
			}
		})
	}
}

// everySecondBerlin runs every second of the wall clock in a zone whose
// clocks change.
func everySecondBerlin() *recurrence.Recurrence {
	r := recurrence.Cron("* * * * * *")
	r.TimeZone = "Europe/Berlin"
	return r
}

func BenchmarkNextEverySecondBerlin(b *testing.B) {
	start := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	benchWalk(b, everySecondBerlin(), start, start)
}

// BenchmarkNextEverySecondBerlinClockChange walks the hour before and the
// hour after Berlin's clocks go back, over and over.
func BenchmarkNextEverySecondBerlinClockChange(b *testing.B) {
	change := time.Date(2026, 10, 25, 1, 0, 0, 0, time.UTC)
	benchAroundChange(b, everySecondBerlin(), change.Add(-24*time.Hour), change)
}

// BenchmarkNextMonthlyClockChange walks the hour before and the hour
// after New York's clocks go back on 1 November 2026 with a Month rule
// that runs every second of the first of each month ("* * * 1 * *").
func BenchmarkNextMonthlyClockChange(b *testing.B) {
	r := recurrence.Cron("* * * 1 * *")
	r.TimeZone = "America/New_York"
	change := time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC)
	benchAroundChange(b, r, change.Add(-60*24*time.Hour), change)
}

// benchAroundChange walks the rule of rec, started at start, through the
// hour before and the hour after the clock change at change, over and
// over.
func benchAroundChange(b *testing.B, rec *recurrence.Recurrence, start, change time.Time) {
	rule, err := recurrence.Compile(rec, start)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	t := change.Add(-time.Hour)
	for b.Loop() {
		if t = rule.Next(t); t.After(change.Add(time.Hour)) {
			t = change.Add(-time.Hour)
		}
	}
}
