package recurrence_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/recurrence"
)

// utc builds a UTC instant; ts builds one from RFC 3339 text.
func utc(y int, mo time.Month, d, h, mi int) time.Time {
	return time.Date(y, mo, d, h, mi, 0, 0, time.UTC)
}

func ts(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustCompile(t testing.TB, r *recurrence.Recurrence, start time.Time) *recurrence.Rule {
	t.Helper()
	rule, err := recurrence.Compile(r, start)
	if err != nil {
		t.Fatalf("Compile(%+v, %v): %v", r, start, err)
	}
	return rule
}

// take returns the first n occurrences at or after from.
func take(r *recurrence.Rule, from time.Time, n int) []time.Time {
	var out []time.Time
	for t := range r.Occurrences(from) {
		out = append(out, t)
		if len(out) == n {
			break
		}
	}
	return out
}

// checkWalk checks Occurrences(from) against want, and that Next walks the
// same instants one by one.
func checkWalk(t *testing.T, rule *recurrence.Rule, from time.Time, want []time.Time) {
	t.Helper()
	got := take(rule, from, len(want))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Occurrences(%v) (-want +got):\n%s", from, diff)
	}
	after := from.Add(-time.Nanosecond)
	for _, w := range want {
		if got := rule.Next(after); !got.Equal(w) {
			t.Errorf("Next(%v) = %v, want %v", after, got, w)
			return
		}
		after = w
	}
}

func week(days ...recurrence.Weekday) []recurrence.Weekday { return days }

func hoursRange(from, to int) []int {
	var h []int
	for i := from; i <= to; i++ {
		h = append(h, i)
	}
	return h
}

// TestAzureExamples covers every row of the Azure Scheduler documentation's
// table of recurrence schedules, with interval 1 and the frequency each row
// implies. The start is Monday 2015-08-03 12:25 UTC, so that rows that run
// "at start time" run at 12:25, and fields a row leaves out default from the
// start (minute 25, hour 12, Monday, day 3).
func TestAzureExamples(t *testing.T) {
	start := utc(2015, 8, 3, 12, 25)
	fri := func(n int) recurrence.MonthlyOccurrence {
		return recurrence.MonthlyOccurrence{Day: recurrence.Friday, Occurrence: n}
	}
	mwf := week(recurrence.Monday, recurrence.Wednesday, recurrence.Friday)
	weekdays := week(recurrence.Monday, recurrence.Tuesday, recurrence.Wednesday, recurrence.Thursday, recurrence.Friday)
	q := []int{0, 15, 30, 45}
	tests := []struct {
		name  string
		freq  recurrence.Frequency
		sched recurrence.Schedule
		from  time.Time // zero: start
		want  []time.Time
	}{
		{"hours 5 (minute from start)", recurrence.Day, recurrence.Schedule{Hours: []int{5}}, time.Time{},
			[]time.Time{utc(2015, 8, 4, 5, 25), utc(2015, 8, 5, 5, 25), utc(2015, 8, 6, 5, 25)}},
		{"5:15", recurrence.Day, recurrence.Schedule{Minutes: []int{15}, Hours: []int{5}}, time.Time{},
			[]time.Time{utc(2015, 8, 4, 5, 15), utc(2015, 8, 5, 5, 15), utc(2015, 8, 6, 5, 15)}},
		{"5:15 and 17:15", recurrence.Day, recurrence.Schedule{Minutes: []int{15}, Hours: []int{5, 17}}, time.Time{},
			[]time.Time{utc(2015, 8, 3, 17, 15), utc(2015, 8, 4, 5, 15), utc(2015, 8, 4, 17, 15), utc(2015, 8, 5, 5, 15)}},
		{"5:15 5:45 17:15 17:45", recurrence.Day, recurrence.Schedule{Minutes: []int{15, 45}, Hours: []int{5, 17}}, time.Time{},
			[]time.Time{utc(2015, 8, 3, 17, 15), utc(2015, 8, 3, 17, 45), utc(2015, 8, 4, 5, 15), utc(2015, 8, 4, 5, 45), utc(2015, 8, 4, 17, 15)}},
		{"every 15 minutes", recurrence.Day, recurrence.Schedule{Minutes: q}, time.Time{},
			[]time.Time{utc(2015, 8, 3, 12, 30), utc(2015, 8, 3, 12, 45), utc(2015, 8, 3, 13, 0), utc(2015, 8, 3, 13, 15)}},
		{"every 15 minutes across midnight", recurrence.Day, recurrence.Schedule{Minutes: q}, utc(2015, 8, 3, 23, 31),
			[]time.Time{utc(2015, 8, 3, 23, 45), utc(2015, 8, 4, 0, 0), utc(2015, 8, 4, 0, 15)}},
		{"every hour at the start's minute", recurrence.Day, recurrence.Schedule{Hours: hoursRange(0, 23)}, time.Time{},
			[]time.Time{utc(2015, 8, 3, 12, 25), utc(2015, 8, 3, 13, 25), utc(2015, 8, 3, 14, 25)}},
		{"every hour across midnight", recurrence.Day, recurrence.Schedule{Hours: hoursRange(0, 23)}, utc(2015, 8, 3, 23, 0),
			[]time.Time{utc(2015, 8, 3, 23, 25), utc(2015, 8, 4, 0, 25), utc(2015, 8, 4, 1, 25)}},
		{"every hour on the hour", recurrence.Day, recurrence.Schedule{Minutes: []int{0}}, time.Time{},
			[]time.Time{utc(2015, 8, 3, 13, 0), utc(2015, 8, 3, 14, 0), utc(2015, 8, 3, 15, 0)}},
		{"15 past every hour", recurrence.Day, recurrence.Schedule{Minutes: []int{15}}, time.Time{},
			[]time.Time{utc(2015, 8, 3, 13, 15), utc(2015, 8, 3, 14, 15), utc(2015, 8, 3, 15, 15)}},
		{"15 past every hour ends 23:15", recurrence.Day, recurrence.Schedule{Minutes: []int{15}}, utc(2015, 8, 3, 22, 16),
			[]time.Time{utc(2015, 8, 3, 23, 15), utc(2015, 8, 4, 0, 15)}},
		{"17h on Saturday", recurrence.Week, recurrence.Schedule{Hours: []int{17}, WeekDays: week(recurrence.Saturday)}, time.Time{},
			[]time.Time{utc(2015, 8, 8, 17, 25), utc(2015, 8, 15, 17, 25), utc(2015, 8, 22, 17, 25)}},
		{"17h Mon Wed Fri", recurrence.Week, recurrence.Schedule{Hours: []int{17}, WeekDays: mwf}, time.Time{},
			[]time.Time{utc(2015, 8, 3, 17, 25), utc(2015, 8, 5, 17, 25), utc(2015, 8, 7, 17, 25), utc(2015, 8, 10, 17, 25)}},
		{"17:15 17:45 Mon Wed Fri", recurrence.Week, recurrence.Schedule{Minutes: []int{15, 45}, Hours: []int{17}, WeekDays: mwf}, time.Time{},
			[]time.Time{utc(2015, 8, 3, 17, 15), utc(2015, 8, 3, 17, 45), utc(2015, 8, 5, 17, 15), utc(2015, 8, 5, 17, 45), utc(2015, 8, 7, 17, 15)}},
		{"5h 17h Mon Wed Fri", recurrence.Week, recurrence.Schedule{Hours: []int{5, 17}, WeekDays: mwf}, time.Time{},
			[]time.Time{utc(2015, 8, 3, 17, 25), utc(2015, 8, 5, 5, 25), utc(2015, 8, 5, 17, 25), utc(2015, 8, 7, 5, 25)}},
		{"5:15 5:45 17:15 17:45 Mon Wed Fri", recurrence.Week, recurrence.Schedule{Minutes: []int{15, 45}, Hours: []int{5, 17}, WeekDays: mwf}, time.Time{},
			[]time.Time{utc(2015, 8, 3, 17, 15), utc(2015, 8, 3, 17, 45), utc(2015, 8, 5, 5, 15), utc(2015, 8, 5, 5, 45), utc(2015, 8, 5, 17, 15)}},
		{"every 15 minutes on weekdays", recurrence.Week, recurrence.Schedule{Minutes: q, WeekDays: weekdays}, time.Time{},
			[]time.Time{utc(2015, 8, 3, 12, 30), utc(2015, 8, 3, 12, 45), utc(2015, 8, 3, 13, 0)}},
		{"every 15 minutes on weekdays, Friday to Monday", recurrence.Week, recurrence.Schedule{Minutes: q, WeekDays: weekdays}, utc(2015, 8, 7, 23, 46),
			[]time.Time{utc(2015, 8, 10, 0, 0), utc(2015, 8, 10, 0, 15)}},
		{"every 15 minutes on weekdays 9-16:45", recurrence.Week, recurrence.Schedule{Minutes: q, Hours: hoursRange(9, 16), WeekDays: weekdays}, utc(2015, 8, 3, 16, 45),
			[]time.Time{utc(2015, 8, 3, 16, 45), utc(2015, 8, 4, 9, 0), utc(2015, 8, 4, 9, 15)}},
		{"every 15 minutes on weekdays 9-16:45, Friday to Monday", recurrence.Week, recurrence.Schedule{Minutes: q, Hours: hoursRange(9, 16), WeekDays: weekdays}, utc(2015, 8, 7, 16, 46),
			[]time.Time{utc(2015, 8, 10, 9, 0), utc(2015, 8, 10, 9, 15)}},
		{"Sundays at start time", recurrence.Week, recurrence.Schedule{WeekDays: week(recurrence.Sunday)}, time.Time{},
			[]time.Time{utc(2015, 8, 9, 12, 25), utc(2015, 8, 16, 12, 25), utc(2015, 8, 23, 12, 25)}},
		{"Tuesdays and Thursdays at start time", recurrence.Week, recurrence.Schedule{WeekDays: week(recurrence.Tuesday, recurrence.Thursday)}, time.Time{},
			[]time.Time{utc(2015, 8, 4, 12, 25), utc(2015, 8, 6, 12, 25), utc(2015, 8, 11, 12, 25), utc(2015, 8, 13, 12, 25)}},
		{"6h on the 28th", recurrence.Month, recurrence.Schedule{Minutes: []int{0}, Hours: []int{6}, MonthDays: []int{28}}, time.Time{},
			[]time.Time{utc(2015, 8, 28, 6, 0), utc(2015, 9, 28, 6, 0), utc(2015, 10, 28, 6, 0)}},
		{"6h on the last day", recurrence.Month, recurrence.Schedule{Minutes: []int{0}, Hours: []int{6}, MonthDays: []int{-1}}, time.Time{},
			[]time.Time{utc(2015, 8, 31, 6, 0), utc(2015, 9, 30, 6, 0), utc(2015, 10, 31, 6, 0), utc(2015, 11, 30, 6, 0),
				utc(2015, 12, 31, 6, 0), utc(2016, 1, 31, 6, 0), utc(2016, 2, 29, 6, 0)}},
		{"6h on the first and last day", recurrence.Month, recurrence.Schedule{Minutes: []int{0}, Hours: []int{6}, MonthDays: []int{1, -1}}, time.Time{},
			[]time.Time{utc(2015, 8, 31, 6, 0), utc(2015, 9, 1, 6, 0), utc(2015, 9, 30, 6, 0), utc(2015, 10, 1, 6, 0), utc(2015, 10, 31, 6, 0)}},
		{"first and last day at start time", recurrence.Month, recurrence.Schedule{MonthDays: []int{1, -1}}, time.Time{},
			[]time.Time{utc(2015, 8, 31, 12, 25), utc(2015, 9, 1, 12, 25), utc(2015, 9, 30, 12, 25), utc(2015, 10, 1, 12, 25)}},
		{"1st and 14th at start time", recurrence.Month, recurrence.Schedule{MonthDays: []int{1, 14}}, time.Time{},
			[]time.Time{utc(2015, 8, 14, 12, 25), utc(2015, 9, 1, 12, 25), utc(2015, 9, 14, 12, 25), utc(2015, 10, 1, 12, 25)}},
		{"2nd at start time", recurrence.Month, recurrence.Schedule{MonthDays: []int{2}}, time.Time{},
			[]time.Time{utc(2015, 9, 2, 12, 25), utc(2015, 10, 2, 12, 25), utc(2015, 11, 2, 12, 25)}},
		{"first Friday 5h", recurrence.Month, recurrence.Schedule{Minutes: []int{0}, Hours: []int{5}, MonthlyOccurrences: []recurrence.MonthlyOccurrence{fri(1)}}, time.Time{},
			[]time.Time{utc(2015, 8, 7, 5, 0), utc(2015, 9, 4, 5, 0), utc(2015, 10, 2, 5, 0), utc(2015, 11, 6, 5, 0)}},
		{"first Friday at start time", recurrence.Month, recurrence.Schedule{MonthlyOccurrences: []recurrence.MonthlyOccurrence{fri(1)}}, time.Time{},
			[]time.Time{utc(2015, 8, 7, 12, 25), utc(2015, 9, 4, 12, 25), utc(2015, 10, 2, 12, 25)}},
		{"third Friday from the end", recurrence.Month, recurrence.Schedule{MonthlyOccurrences: []recurrence.MonthlyOccurrence{fri(-3)}}, time.Time{},
			[]time.Time{utc(2015, 8, 14, 12, 25), utc(2015, 9, 11, 12, 25), utc(2015, 10, 16, 12, 25), utc(2015, 11, 13, 12, 25)}},
		{"first and last Friday 5:15", recurrence.Month, recurrence.Schedule{Minutes: []int{15}, Hours: []int{5}, MonthlyOccurrences: []recurrence.MonthlyOccurrence{fri(1), fri(-1)}}, time.Time{},
			[]time.Time{utc(2015, 8, 7, 5, 15), utc(2015, 8, 28, 5, 15), utc(2015, 9, 4, 5, 15), utc(2015, 9, 25, 5, 15), utc(2015, 10, 2, 5, 15), utc(2015, 10, 30, 5, 15)}},
		{"first and last Friday at start time", recurrence.Month, recurrence.Schedule{MonthlyOccurrences: []recurrence.MonthlyOccurrence{fri(1), fri(-1)}}, time.Time{},
			[]time.Time{utc(2015, 8, 7, 12, 25), utc(2015, 8, 28, 12, 25), utc(2015, 9, 4, 12, 25), utc(2015, 9, 25, 12, 25)}},
		{"fifth Friday, skipped when there is none", recurrence.Month, recurrence.Schedule{MonthlyOccurrences: []recurrence.MonthlyOccurrence{fri(5)}}, time.Time{},
			[]time.Time{utc(2015, 10, 30, 12, 25), utc(2016, 1, 29, 12, 25), utc(2016, 4, 29, 12, 25), utc(2016, 7, 29, 12, 25)}},
		{"every 15 minutes on the last Friday", recurrence.Month, recurrence.Schedule{Minutes: q, MonthlyOccurrences: []recurrence.MonthlyOccurrence{fri(-1)}}, time.Time{},
			[]time.Time{utc(2015, 8, 28, 0, 0), utc(2015, 8, 28, 0, 15), utc(2015, 8, 28, 0, 30)}},
		{"every 15 minutes on the last Friday, to the next month", recurrence.Month, recurrence.Schedule{Minutes: q, MonthlyOccurrences: []recurrence.MonthlyOccurrence{fri(-1)}}, utc(2015, 8, 28, 23, 50),
			[]time.Time{utc(2015, 9, 25, 0, 0), utc(2015, 9, 25, 0, 15)}},
		{"5:15 5:45 17:15 17:45 third Wednesday", recurrence.Month, recurrence.Schedule{Minutes: []int{15, 45}, Hours: []int{5, 17},
			MonthlyOccurrences: []recurrence.MonthlyOccurrence{{Day: recurrence.Wednesday, Occurrence: 3}}}, time.Time{},
			[]time.Time{utc(2015, 8, 19, 5, 15), utc(2015, 8, 19, 5, 45), utc(2015, 8, 19, 17, 15), utc(2015, 8, 19, 17, 45), utc(2015, 9, 16, 5, 15)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sched := tt.sched
			rule := mustCompile(t, &recurrence.Recurrence{Frequency: tt.freq, Schedule: &sched}, start)
			from := tt.from
			if from.IsZero() {
				from = start
			}
			checkWalk(t, rule, from, tt.want)
		})
	}
}

// TestObservedService replays what the real service answered in 2015 for
// jobs that started 2015-07-13 00:00 UTC (a Monday) and were created on
// 2015-08-04: the next execution time it reported.
func TestObservedService(t *testing.T) {
	start := ts(t, "2015-07-13T00:00:00Z")
	end := ts(t, "2015-10-10T10:10:10Z")
	hm := recurrence.Schedule{Hours: []int{5, 10, 15, 20}, Minutes: []int{0, 10, 20, 30, 40, 50}}
	with := func(f func(*recurrence.Schedule)) *recurrence.Schedule {
		s := hm
		f(&s)
		return &s
	}
	tests := []struct {
		name    string
		rec     recurrence.Recurrence
		created string
		want    string
	}{
		{"day", recurrence.Recurrence{Frequency: recurrence.Day, Count: 100, EndTime: &end, Schedule: &hm},
			"2015-08-04T23:08:14Z", "2015-08-05T05:00:00Z"},
		{"week", recurrence.Recurrence{Frequency: recurrence.Week, Interval: 1, Count: 10000, EndTime: &end,
			Schedule: with(func(s *recurrence.Schedule) { s.WeekDays = week(recurrence.Monday) })},
			"2015-08-04T23:11:25Z", "2015-08-10T05:00:00Z"},
		{"month days", recurrence.Recurrence{Frequency: recurrence.Month, Interval: 1,
			Schedule: with(func(s *recurrence.Schedule) { s.MonthDays = []int{15, 30} })},
			"2015-08-04T23:08:41Z", "2015-08-15T05:00:00Z"},
		{"monthly occurrences", recurrence.Recurrence{Frequency: recurrence.Month, Interval: 1,
			Schedule: with(func(s *recurrence.Schedule) {
				s.MonthlyOccurrences = []recurrence.MonthlyOccurrence{{Day: recurrence.Monday, Occurrence: 1}, {Day: recurrence.Friday, Occurrence: 1}}
			})},
			"2015-08-04T23:14:05Z", "2015-08-07T05:00:00Z"},
		{"week without schedule", recurrence.Recurrence{Frequency: recurrence.Week, Interval: 1, Count: 10000, EndTime: &end},
			"2015-08-04T23:07:07Z", "2015-08-10T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule := mustCompile(t, &tt.rec, start)
			created, want := ts(t, tt.created), ts(t, tt.want)
			if got := rule.Next(created); !got.Equal(want) {
				t.Errorf("Next(%v) = %v, want %v", created, got, want)
			}
		})
	}
}

// TestStartInThePast is the documented example: start 2015-04-07 14:00,
// every 2 days, looked at on 2015-04-08 13:00.
func TestStartInThePast(t *testing.T) {
	rec := &recurrence.Recurrence{Frequency: recurrence.Day, Interval: 2}
	want := []time.Time{utc(2015, 4, 9, 14, 0), utc(2015, 4, 11, 14, 0), utc(2015, 4, 13, 14, 0), utc(2015, 4, 15, 14, 0)}
	for _, start := range []time.Time{utc(2015, 4, 7, 14, 0), utc(2015, 4, 5, 14, 0), utc(2015, 4, 1, 14, 0)} {
		rule := mustCompile(t, rec, start)
		checkWalk(t, rule, utc(2015, 4, 8, 13, 0), want)
	}
}

func TestRules(t *testing.T) {
	end := func(s string) *time.Time { v := ts(t, s); return &v }
	tests := []struct {
		name  string
		rec   recurrence.Recurrence
		start time.Time
		from  time.Time // zero: start
		want  []time.Time
	}{
		{"no schedule keeps the start's seconds", recurrence.Recurrence{Frequency: recurrence.Day},
			ts(t, "2015-08-03T12:25:17.5Z"), time.Time{},
			[]time.Time{ts(t, "2015-08-03T12:25:17.5Z"), ts(t, "2015-08-04T12:25:17.5Z")}},
		{"a schedule runs on whole minutes", recurrence.Recurrence{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Hours: []int{13}}},
			ts(t, "2015-08-03T12:25:17.5Z"), time.Time{},
			[]time.Time{utc(2015, 8, 3, 13, 25), utc(2015, 8, 4, 13, 25)}},
		{"a schedule runs no sooner than start", recurrence.Recurrence{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Hours: []int{12}}},
			ts(t, "2015-08-03T12:25:17Z"), time.Time{},
			[]time.Time{utc(2015, 8, 4, 12, 25)}},
		{"every 15 minutes in elapsed time", recurrence.Recurrence{Frequency: recurrence.Minute, Interval: 15},
			ts(t, "2015-08-03T12:25:30Z"), ts(t, "2015-08-03T13:00:00Z"),
			[]time.Time{ts(t, "2015-08-03T13:10:30Z"), ts(t, "2015-08-03T13:25:30Z")}},
		{"hourly with minutes, interval 2", recurrence.Recurrence{Frequency: recurrence.Hour, Interval: 2, Schedule: &recurrence.Schedule{Minutes: []int{0, 30}}},
			utc(2015, 8, 3, 10, 10), time.Time{},
			[]time.Time{utc(2015, 8, 3, 10, 30), utc(2015, 8, 3, 12, 0), utc(2015, 8, 3, 12, 30), utc(2015, 8, 3, 14, 0)}},
		{"minutely within hours", recurrence.Recurrence{Frequency: recurrence.Minute, Interval: 20, Schedule: &recurrence.Schedule{Hours: []int{9}}},
			utc(2015, 8, 3, 8, 5), time.Time{},
			[]time.Time{utc(2015, 8, 3, 9, 5), utc(2015, 8, 3, 9, 25), utc(2015, 8, 3, 9, 45), utc(2015, 8, 4, 9, 5)}},
		{"every 3 days at 8 with the start's minute", recurrence.Recurrence{Frequency: recurrence.Day, Interval: 3, Schedule: &recurrence.Schedule{Hours: []int{8}}},
			utc(2015, 8, 3, 12, 25), time.Time{},
			[]time.Time{utc(2015, 8, 6, 8, 25), utc(2015, 8, 9, 8, 25), utc(2015, 8, 12, 8, 25)}},
		{"monthDays 31 skips short months", recurrence.Recurrence{Frequency: recurrence.Month, Schedule: &recurrence.Schedule{MonthDays: []int{31}, Hours: []int{6}, Minutes: []int{0}}},
			utc(2015, 8, 3, 12, 25), time.Time{},
			[]time.Time{utc(2015, 8, 31, 6, 0), utc(2015, 10, 31, 6, 0), utc(2015, 12, 31, 6, 0), utc(2016, 1, 31, 6, 0), utc(2016, 3, 31, 6, 0)}},
		{"monthly on the start's day skips short months", recurrence.Recurrence{Frequency: recurrence.Month},
			utc(2016, 1, 31, 8, 0), time.Time{},
			[]time.Time{utc(2016, 1, 31, 8, 0), utc(2016, 3, 31, 8, 0), utc(2016, 5, 31, 8, 0)}},
		{"monthDays and monthlyOccurrences are a union", recurrence.Recurrence{Frequency: recurrence.Month, Schedule: &recurrence.Schedule{
			MonthDays: []int{15}, MonthlyOccurrences: []recurrence.MonthlyOccurrence{{Day: recurrence.Monday, Occurrence: 1}, {Day: recurrence.Sunday}}, Hours: []int{6}, Minutes: []int{0}}},
			utc(2015, 8, 3, 12, 25), time.Time{},
			// Sundays of Aug 2015: 9, 16, 23, 30; 15th; first Monday of September is the 7th.
			[]time.Time{utc(2015, 8, 9, 6, 0), utc(2015, 8, 15, 6, 0), utc(2015, 8, 16, 6, 0), utc(2015, 8, 23, 6, 0), utc(2015, 8, 30, 6, 0), utc(2015, 9, 6, 6, 0), utc(2015, 9, 7, 6, 0), utc(2015, 9, 13, 6, 0), utc(2015, 9, 15, 6, 0)}},
		{"every 2 months counts from the start's month", recurrence.Recurrence{Frequency: recurrence.Month, Interval: 2, Schedule: &recurrence.Schedule{MonthDays: []int{1}, Hours: []int{0}, Minutes: []int{0}}},
			utc(2015, 8, 3, 12, 25), time.Time{},
			[]time.Time{utc(2015, 10, 1, 0, 0), utc(2015, 12, 1, 0, 0), utc(2016, 2, 1, 0, 0)}},
		{"biweekly counts Monday-based weeks from the start's week", recurrence.Recurrence{Frequency: recurrence.Week, Interval: 2,
			Schedule: &recurrence.Schedule{WeekDays: week(recurrence.Sunday, recurrence.Monday), Hours: []int{10}, Minutes: []int{0}}},
			utc(2015, 8, 9, 9, 0), time.Time{}, // a Sunday: last day of the week of Monday Aug 3
			[]time.Time{utc(2015, 8, 9, 10, 0), utc(2015, 8, 17, 10, 0), utc(2015, 8, 23, 10, 0), utc(2015, 8, 31, 10, 0), utc(2015, 9, 6, 10, 0)}},
		{"biweekly from a Wednesday", recurrence.Recurrence{Frequency: recurrence.Week, Interval: 2,
			Schedule: &recurrence.Schedule{WeekDays: week(recurrence.Monday, recurrence.Friday), Hours: []int{10}, Minutes: []int{0}}},
			utc(2015, 8, 5, 10, 0), utc(2015, 8, 20, 0, 0),
			[]time.Time{utc(2015, 8, 21, 10, 0), utc(2015, 8, 31, 10, 0), utc(2015, 9, 4, 10, 0), utc(2015, 9, 14, 10, 0)}},
		{"yearly in given months on the start's day", recurrence.Recurrence{Frequency: recurrence.Year, Schedule: &recurrence.Schedule{Months: []int{2, 8}, Hours: []int{6}, Minutes: []int{0}}},
			utc(2015, 8, 3, 12, 25), time.Time{},
			[]time.Time{utc(2016, 2, 3, 6, 0), utc(2016, 8, 3, 6, 0), utc(2017, 2, 3, 6, 0), utc(2017, 8, 3, 6, 0)}},
		{"yearly without schedule", recurrence.Recurrence{Frequency: recurrence.Year, Interval: 2},
			utc(2015, 8, 3, 12, 25), utc(2016, 1, 1, 0, 0),
			[]time.Time{utc(2017, 8, 3, 12, 25), utc(2019, 8, 3, 12, 25)}},
		{"monthly months filter", recurrence.Recurrence{Frequency: recurrence.Month, Schedule: &recurrence.Schedule{Months: []int{1, 7}, MonthDays: []int{-1}, Hours: []int{0}, Minutes: []int{0}}},
			utc(2015, 8, 3, 12, 25), time.Time{},
			[]time.Time{utc(2016, 1, 31, 0, 0), utc(2016, 7, 31, 0, 0), utc(2017, 1, 31, 0, 0)}},
		{"endTime is inclusive", recurrence.Recurrence{Frequency: recurrence.Day, EndTime: end("2015-08-05T12:00:00Z")},
			utc(2015, 8, 3, 12, 0), time.Time{},
			[]time.Time{utc(2015, 8, 3, 12, 0), utc(2015, 8, 4, 12, 0), utc(2015, 8, 5, 12, 0)}},
		{"count and endTime: endTime first", recurrence.Recurrence{Frequency: recurrence.Day, Count: 5, EndTime: end("2015-08-04T12:00:00Z")},
			utc(2015, 8, 3, 12, 0), time.Time{},
			[]time.Time{utc(2015, 8, 3, 12, 0), utc(2015, 8, 4, 12, 0)}},
		{"count and endTime: count first, counted from the first yielded", recurrence.Recurrence{Frequency: recurrence.Day, Count: 2, EndTime: end("2015-09-01T00:00:00Z")},
			utc(2015, 8, 3, 12, 0), utc(2015, 8, 10, 0, 0),
			[]time.Time{utc(2015, 8, 10, 12, 0), utc(2015, 8, 11, 12, 0)}},
		{"endTime in the past", recurrence.Recurrence{Frequency: recurrence.Minute, EndTime: end("2015-08-01T00:00:00Z")},
			utc(2015, 8, 3, 12, 0), time.Time{}, nil},
		{"endTime before start with a schedule", recurrence.Recurrence{Frequency: recurrence.Day, EndTime: end("2015-08-01T00:00:00Z"), Schedule: &recurrence.Schedule{Minutes: []int{0}}},
			utc(2015, 8, 3, 12, 0), time.Time{}, nil},
		{"empty schedule arrays are absent", recurrence.Recurrence{Frequency: recurrence.Hour, Schedule: &recurrence.Schedule{Hours: []int{}}},
			ts(t, "2015-08-03T12:25:30Z"), time.Time{},
			[]time.Time{ts(t, "2015-08-03T12:25:30Z"), ts(t, "2015-08-03T13:25:30Z")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule := mustCompile(t, &tt.rec, tt.start)
			from := tt.from
			if from.IsZero() {
				from = tt.start
			}
			got := take(rule, from, len(tt.want)+3)
			if tt.rec.Count == 0 && tt.rec.EndTime == nil {
				got = got[:len(tt.want)]
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Occurrences(%v) (-want +got):\n%s", from, diff)
			}
		})
	}
}

func TestNextIgnoresCount(t *testing.T) {
	rule := mustCompile(t, &recurrence.Recurrence{Frequency: recurrence.Day, Count: 1}, utc(2015, 8, 3, 12, 0))
	after := utc(2015, 8, 4, 12, 0)
	if got, want := rule.Next(after), utc(2015, 8, 5, 12, 0); !got.Equal(want) {
		t.Errorf("Next(%v) = %v, want %v", after, got, want)
	}
	if got := take(rule, after, 5); len(got) != 1 {
		t.Errorf("Occurrences(%v) yielded %v, want 1 occurrence (count 1)", after, got)
	}
}

func TestWindowsTimeZone(t *testing.T) {
	rec := &recurrence.Recurrence{Frequency: recurrence.Day, TimeZone: "W. Europe Standard Time", Schedule: &recurrence.Schedule{Hours: []int{9}, Minutes: []int{0}}}
	rule := mustCompile(t, rec, utc(2025, 1, 1, 0, 0))
	for _, tt := range []struct{ after, want time.Time }{
		{utc(2025, 1, 1, 0, 0), utc(2025, 1, 1, 8, 0)}, // CET, UTC+1
		{utc(2025, 7, 1, 0, 0), utc(2025, 7, 1, 7, 0)}, // CEST, UTC+2
	} {
		if got := rule.Next(tt.after); !got.Equal(tt.want) {
			t.Errorf("Next(%v) = %v, want %v", tt.after, got, tt.want)
		}
	}
	if got := rule.Location().String(); got != "Europe/Berlin" {
		t.Errorf("Location() = %q, want Europe/Berlin", got)
	}
}

func TestLoadTimeZone(t *testing.T) {
	for _, name := range []string{"", "UTC", "Europe/Paris", "America/New_York", "W. Europe Standard Time", "eastern standard time",
		"Pacific Standard Time", "GMT Standard Time", "Central Europe Standard Time", "Tokyo Standard Time", "India Standard Time", "AUS Eastern Standard Time"} {
		if _, err := recurrence.LoadTimeZone(name); err != nil {
			t.Errorf("LoadTimeZone(%q): %v", name, err)
		}
	}
	for _, name := range []string{"Local", "Mars/Olympus", "Fortnight Standard Time", "../etc/passwd"} {
		if _, err := recurrence.LoadTimeZone(name); err == nil {
			t.Errorf("LoadTimeZone(%q) = nil error, want an error", name)
		}
	}
}

func TestCompileErrors(t *testing.T) {
	start := utc(2015, 8, 3, 12, 25)
	if _, err := recurrence.Compile(nil, start); err == nil {
		t.Error("Compile(nil) = nil error")
	}
	if _, err := recurrence.Compile(&recurrence.Recurrence{Frequency: recurrence.Day}, time.Time{}); err == nil {
		t.Error("Compile with zero start = nil error")
	}
	if _, err := recurrence.Compile(&recurrence.Recurrence{Frequency: "fortnight"}, start); err == nil {
		t.Error("Compile with an invalid recurrence = nil error")
	}
	never := []recurrence.Recurrence{
		{Frequency: recurrence.Month, Schedule: &recurrence.Schedule{Months: []int{2}, MonthDays: []int{30, 31}}},
		{Frequency: recurrence.Year, Schedule: &recurrence.Schedule{Months: []int{4, 6}}}, // start's day is 31
		{Frequency: recurrence.Month, Interval: 12, Schedule: &recurrence.Schedule{MonthDays: []int{31}}},
	}
	for _, rec := range never {
		_, err := recurrence.Compile(&rec, utc(2015, 4, 30, 0, 0))
		if rec.Frequency == recurrence.Year {
			_, err = recurrence.Compile(&rec, utc(2015, 1, 31, 0, 0))
		}
		var fe *recurrence.FieldError
		if !asFieldError(err, &fe) || fe.Path != "schedule" {
			t.Errorf("Compile(%+v) = %v, want a FieldError for schedule", rec.Schedule, err)
		}
	}
	// rrule-go would search forever for these: the interval never lands on
	// a scheduled minute or hour.
	for _, rec := range []recurrence.Recurrence{
		{Frequency: recurrence.Minute, Interval: 30, Schedule: &recurrence.Schedule{Minutes: []int{15}}},
		{Frequency: recurrence.Hour, Interval: 6, Schedule: &recurrence.Schedule{Hours: []int{2}}},
	} {
		_, err := recurrence.Compile(&rec, utc(2015, 8, 3, 1, 10))
		var fe *recurrence.FieldError
		if !asFieldError(err, &fe) || fe.Path != "schedule" {
			t.Errorf("Compile(%+v) = %v, want a FieldError for schedule", rec.Schedule, err)
		}
	}
	if _, err := recurrence.Compile(&recurrence.Recurrence{Frequency: recurrence.Minute, Interval: 30, Schedule: &recurrence.Schedule{Minutes: []int{40}}}, utc(2015, 8, 3, 1, 10)); err != nil {
		t.Errorf("Compile(every 30 minutes from :10 at minute 40): %v", err)
	}
	// Leap days are rare but do exist.
	if _, err := recurrence.Compile(&recurrence.Recurrence{Frequency: recurrence.Year}, utc(2016, 2, 29, 0, 0)); err != nil {
		t.Errorf("Compile(yearly from Feb 29): %v", err)
	}
}

func TestConcurrentNext(t *testing.T) {
	rule := mustCompile(t, &recurrence.Recurrence{Frequency: recurrence.Week, Schedule: &recurrence.Schedule{
		WeekDays: week(recurrence.Monday, recurrence.Tuesday, recurrence.Wednesday, recurrence.Thursday, recurrence.Friday),
		Hours:    hoursRange(9, 16), Minutes: []int{0, 15, 30, 45}}}, utc(2015, 8, 3, 0, 0))
	ref := take(rule, utc(2015, 8, 3, 0, 0), 2000)
	done := make(chan []time.Time)
	for g := range 4 {
		go func() {
			var got []time.Time
			after := utc(2015, 8, 3, 0, 0).Add(time.Duration(g) * time.Nanosecond)
			for range len(ref) {
				after = rule.Next(after)
				got = append(got, after)
			}
			done <- got
		}()
	}
	for range 4 {
		if got := <-done; !slices.EqualFunc(got, ref, time.Time.Equal) {
			t.Error("concurrent Next calls disagree with a sequential walk")
		}
	}
}
