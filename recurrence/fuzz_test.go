package recurrence_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	cron "github.com/robfig/cron/v3"

	"github.com/jobclock/scheduler/recurrence"
)

// FuzzNext builds a recurrence from the fuzzer's numbers, skips the ones
// Validate or Compile reject, and checks that Next strictly increases,
// never passes endTime, never returns something before the start, and that
// Occurrences honours count.
func FuzzNext(f *testing.F) {
	// freq, interval, count, minutes, hours, days (bit mask), monthDay,
	// occurrence, month, zone, start (Unix seconds), after offset (seconds),
	// end offset (seconds, 0 = none).
	start := utc(2015, 8, 3, 12, 25).Unix()
	f.Add(uint8(3), 1, 10, uint64(0), uint32(1<<10|1<<22), uint8(0b0101010), int8(0), int8(0), uint8(0), uint8(0), start, int64(0), int64(0))
	f.Add(uint8(3), 1, 0, uint64(1|1<<15|1<<30|1<<45), uint32(0xff<<9), uint8(0b0111110), int8(0), int8(0), uint8(0), uint8(0), start, int64(86400*400), int64(0))
	f.Add(uint8(4), 1, 0, uint64(1), uint32(1<<6), uint8(0), int8(-1), int8(0), uint8(0), uint8(1), start, int64(0), int64(0))
	f.Add(uint8(4), 1, 3, uint64(1<<15), uint32(1<<5), uint8(0b0100000), int8(0), int8(-1), uint8(0), uint8(2), start, int64(3600), int64(86400*90))
	f.Add(uint8(2), 2, 0, uint64(0), uint32(0), uint8(0), int8(0), int8(0), uint8(0), uint8(0), utc(2015, 4, 7, 14, 0).Unix(), int64(23*3600), int64(0))
	f.Add(uint8(0), 15, 5, uint64(0), uint32(0), uint8(0), int8(0), int8(0), uint8(0), uint8(1), start, int64(-86400*365), int64(86400))
	f.Add(uint8(1), 1, 0, uint64(1<<30), uint32(0), uint8(0), int8(0), int8(0), uint8(0), uint8(2), utc(2025, 3, 8, 0, 0).Unix(), int64(86400), int64(0))
	f.Add(uint8(5), 1, 0, uint64(1), uint32(1<<6), uint8(0), int8(0), int8(0), uint8(2), uint8(0), utc(2016, 2, 29, 0, 0).Unix(), int64(0), int64(0))
	zones := []string{"", "America/New_York", "Europe/Berlin", "W. Europe Standard Time", "Australia/Lord_Howe"}
	freqs := []recurrence.Frequency{recurrence.Minute, recurrence.Hour, recurrence.Day, recurrence.Week, recurrence.Month, recurrence.Year}
	days := []recurrence.Weekday{recurrence.Sunday, recurrence.Monday, recurrence.Tuesday, recurrence.Wednesday, recurrence.Thursday, recurrence.Friday, recurrence.Saturday}
	f.Fuzz(func(t *testing.T, freq uint8, interval, count int, minutes uint64, hours uint32, dayMask uint8, monthDay, occurrence int8, month, zone uint8,
		startUnix, afterOff, endOff int64) {
		if startUnix < 0 || startUnix > 1<<33 || afterOff < -1<<32 || afterOff > 1<<32 || endOff < -1<<32 || endOff > 1<<32 {
			t.Skip()
		}
		rec := &recurrence.Recurrence{
			Frequency: freqs[int(freq)%len(freqs)],
			Interval:  int32(interval),
			Count:     int32(count),
			TimeZone:  zones[int(zone)%len(zones)],
			Schedule:  &recurrence.Schedule{},
		}
		s := rec.Schedule
		for m := range 60 {
			if minutes&(1<<m) != 0 {
				s.Minutes = append(s.Minutes, m)
			}
		}
		for h := range 24 {
			if hours&(1<<h) != 0 {
				s.Hours = append(s.Hours, h)
			}
		}
		for d := range 7 {
			if dayMask&(1<<d) != 0 {
				s.WeekDays = append(s.WeekDays, days[d])
			}
		}
		if monthDay != 0 {
			s.MonthDays = []int{int(monthDay)}
		}
		if occurrence != 0 {
			s.MonthlyOccurrences = []recurrence.MonthlyOccurrence{{Day: days[int(dayMask)%7], Occurrence: int(occurrence)}}
		}
		if month != 0 {
			s.Months = []int{int(month)}
		}
		start := time.Unix(startUnix, 0).UTC()
		if endOff != 0 {
			end := start.Add(time.Duration(endOff) * time.Second)
			rec.EndTime = &end
		}
		if rec.Validate() != nil {
			t.Skip()
		}
		rule, err := recurrence.Compile(rec, start)
		if err != nil {
			t.Skip()
		}
		after := start.Add(time.Duration(afterOff) * time.Second)
		prev := after
		for range 20 {
			next := rule.Next(prev)
			if next.IsZero() {
				break
			}
			if !next.After(prev) {
				t.Fatalf("Next(%v) = %v, not after it", prev, next)
			}
			if next.Before(start) {
				t.Fatalf("Next(%v) = %v, before start %v", prev, next, start)
			}
			if rec.EndTime != nil && next.After(*rec.EndTime) {
				t.Fatalf("Next(%v) = %v, after endTime %v", prev, next, *rec.EndTime)
			}
			prev = next
		}
		n := 0
		for o := range rule.Occurrences(after) {
			if o.Before(after) {
				t.Fatalf("Occurrences(%v) yielded %v", after, o)
			}
			n++
			if n > 30 {
				break
			}
		}
		if rec.Count > 0 && n > int(rec.Count) {
			t.Fatalf("Occurrences yielded %d, count is %d", n, rec.Count)
		}
	})
}

// FuzzParseCron checks that ParseCron never panics, that every spec it
// accepts gives a recurrence that validates, compiles, runs, and survives
// JSON, and that where robfig/cron also accepts a plain spec (no
// extension, no zone, no @every), both give the same first instants.
func FuzzParseCron(f *testing.F) {
	for _, c := range cronCases {
		f.Add(c.spec)
	}
	for _, c := range cronErrors {
		f.Add(c.spec)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seconds := cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	f.Fuzz(func(t *testing.T, spec string) {
		rec, err := recurrence.ParseCron(spec)
		if err != nil {
			if rec != nil {
				t.Fatalf("ParseCron(%q) = %+v and error %v", spec, rec, err)
			}
			if !strings.HasPrefix(err.Error(), "cron: ") {
				t.Fatalf("ParseCron(%q) error %q lacks the cron: prefix", spec, err)
			}
			return
		}
		if err := rec.Validate(); err != nil {
			t.Fatalf("ParseCron(%q) = %+v, which does not validate: %v", spec, rec, err)
		}
		rule, err := recurrence.Compile(rec, start)
		if err != nil {
			t.Fatalf("Compile(ParseCron(%q)): %v", spec, err)
		}
		first := rule.Next(start)
		if !first.After(start) {
			t.Fatalf("ParseCron(%q): Next(%v) = %v", spec, start, first)
		}
		if x := throughJSON(t, rec); !cmp.Equal(rec, x) {
			t.Fatalf("ParseCron(%q) = %+v, after JSON %+v", spec, rec, x)
		}

		fields := strings.Fields(spec)
		if rec.TimeZone != "" || strings.HasPrefix(rec.Cron, "@every") || strings.ContainsAny(spec, "lLwW#") && !strings.HasPrefix(rec.Cron, "@") {
			return
		}
		parser := cron.ParseStandard
		if len(fields) == 6 {
			parser = seconds.Parse
		}
		var sched cron.Schedule
		func() {
			defer func() { _ = recover() }() // robfig/cron panics on some input
			sched, err = parser(spec)
		}()
		if sched == nil || err != nil {
			return // robfig/cron refuses it (7 for Sunday, descriptors in upper case)
		}
		a, b := start, start
		for range 5 {
			a, b = rule.Next(a), sched.Next(b.In(time.UTC))
			if !a.Equal(b) {
				t.Fatalf("%q: jobclock %v, robfig/cron %v", spec, a, b)
			}
		}
	})
}
