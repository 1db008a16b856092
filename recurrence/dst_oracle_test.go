package recurrence_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// oracleRecurrence is a sub-hourly recurrence of a shape the oracle below
// expands without the package: which wall clock readings of a day it names,
// and whether its hour is free.
type oracleRecurrence struct {
	rec  *recurrence.Recurrence
	free bool
	// names reports whether the rule names the wall reading w (a civil
	// time written as UTC).
	names func(w time.Time) bool
}

// randomSubHourly returns a random sub-hourly recurrence: every few
// minutes of every hour (Hour with minutes; Day or Week with minutes and no
// hours, or with all 24 hours listed; Minute with an interval, counted on
// the wall clock from the start's reading), or of a few fixed hours.
func randomSubHourly(rng *rand.Rand, wallStart time.Time) oracleRecurrence {
	step := []int{5, 10, 15, 20, 30}[rng.IntN(5)]
	var mins []int
	for m := rng.IntN(step); m < 60; m += step {
		mins = append(mins, m)
	}
	minuteSet := func(w time.Time) bool { return slices.Contains(mins, w.Minute()) }
	all := make([]int, 24)
	for h := range all {
		all[h] = h
	}
	switch rng.IntN(6) {
	case 0:
		return oracleRecurrence{&recurrence.Recurrence{Frequency: recurrence.Hour, Schedule: &recurrence.Schedule{Minutes: mins}}, true, minuteSet}
	case 1:
		return oracleRecurrence{&recurrence.Recurrence{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Minutes: mins}}, true, minuteSet}
	case 2:
		return oracleRecurrence{&recurrence.Recurrence{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Hours: all, Minutes: mins}}, true, minuteSet}
	case 3:
		days := []recurrence.Weekday{recurrence.Sunday, recurrence.Saturday, recurrence.Monday}[:1+rng.IntN(3)]
		return oracleRecurrence{&recurrence.Recurrence{Frequency: recurrence.Week, Schedule: &recurrence.Schedule{WeekDays: days, Minutes: mins}}, true,
			func(w time.Time) bool {
				return minuteSet(w) && slices.ContainsFunc(days, func(d recurrence.Weekday) bool { wd, _ := d.Time(); return wd == w.Weekday() })
			}}
	case 4:
		k := []int{7, 15, 20, 45, 90}[rng.IntN(5)]
		return oracleRecurrence{&recurrence.Recurrence{Frequency: recurrence.Minute, Interval: int32(k), Schedule: &recurrence.Schedule{Hours: all}}, true,
			func(w time.Time) bool { return int(w.Sub(wallStart)/time.Minute)%k == 0 }}
	default:
		hours := []int{rng.IntN(4), 1 + rng.IntN(3)}
		slices.Sort(hours)
		hours = slices.Compact(hours)
		return oracleRecurrence{&recurrence.Recurrence{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Hours: hours, Minutes: mins}}, false,
			func(w time.Time) bool { return minuteSet(w) && slices.Contains(hours, w.Hour()) }}
	}
}

// oracle lists the instants in [from, to] at which o runs by the product's
// rules, reading every minute of the wall clock and converting it with
// wallInstant: a reading whose hour is free is skipped in a gap and runs at
// both instants of a repeated time; a fixed one runs shifted by a gap and
// once, at the first instant, when it occurs twice. No instant before the
// start (from) runs; a fixed time in a gap just before the start runs when
// its shifted instant is not before the start.
func oracle(o oracleRecurrence, loc *time.Location, from, to time.Time) []time.Time {
	seen := map[int64]bool{}
	var out []time.Time
	add := func(t time.Time) {
		if !t.Before(from) && !t.After(to) && !seen[t.Unix()] {
			seen[t.Unix()] = true
			out = append(out, t.UTC())
		}
	}
	lo := time.Date(from.In(loc).Year(), from.In(loc).Month(), from.In(loc).Day()-1, 0, 0, 0, 0, time.UTC)
	hi := lo.Add(time.Duration(to.Sub(from)) + 72*time.Hour)
	for w := lo; w.Before(hi); w = w.Add(time.Minute) {
		if !o.names(w) {
			continue
		}
		at, gap, rep := wallInstant(loc, w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute())
		if o.free && gap {
			continue
		}
		add(at)
		if o.free && !rep.IsZero() {
			add(rep)
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// TestSubHourlyDaylightSaving runs random sub-hourly recurrences across
// every clock change of 2026 and 2027 in New York, Berlin, Sydney and Lord
// Howe (whose clocks move by half an hour), and checks Next against the
// oracle, walking from a day before the change to a day after it and
// asking from scattered instants around it.
func TestSubHourlyDaylightSaving(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 1))
	rules := 30
	if testing.Short() {
		rules = 8
	}
	compared := 0
	for _, zone := range []string{"America/New_York", "Europe/Berlin", "Australia/Sydney", "Australia/Lord_Howe"} {
		loc, trs := clockChanges(t, zone)
		for _, tr := range trs {
			for range rules {
				start := tr.Add(-time.Duration(20+rng.IntN(10)) * time.Hour).Truncate(time.Minute)
				switch rng.IntN(4) {
				case 0:
					// Just before the change: in the first pass of a
					// repeated hour, whose readings come again.
					start = tr.Add(-time.Duration(1+rng.IntN(60)) * time.Minute)
				case 1:
					// Just after it: in the second pass of a repeated hour,
					// or after a gap whose times run shifted after it.
					start = tr.Add(time.Duration(rng.IntN(60)) * time.Minute)
				}
				_, off := start.In(loc).Zone()
				wallStart := start.Add(time.Duration(off) * time.Second).UTC()
				o := randomSubHourly(rng, wallStart)
				o.rec.TimeZone = zone
				name := fmt.Sprintf("%s around %v: %+v %+v", zone, tr, o.rec, o.rec.Schedule)
				rule, err := recurrence.Compile(o.rec, start)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				to := tr.Add(24 * time.Hour)
				want := oracle(o, loc, start, to)
				if got := between(rule.Next, start, to); !slices.EqualFunc(got, want, time.Time.Equal) {
					t.Fatalf("%s:\n jobclock %v\n   oracle %v", name, got, want)
				}
				// Scattered questions on a fresh rule, which answers them
				// from its template once used.
				rule, _ = recurrence.Compile(o.rec, start)
				for range 20 {
					after := tr.Add(time.Duration(rng.IntN(4*60)-2*60)*time.Minute + time.Duration(rng.IntN(2))*time.Second)
					if checkNextAfter(t, name, rule, want, after) {
						compared++
					}
				}
			}
		}
	}
	t.Logf("%d scattered answers compared", compared)
}

// clockChanges loads zone and returns the instants its clocks change in
// 2026 and 2027, failing the test unless there are four.
func clockChanges(t *testing.T, zone string) (*time.Location, []time.Time) {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	trs := append(transitions(loc, 2026), transitions(loc, 2027)...)
	if len(trs) != 4 {
		t.Fatalf("%s: %d clock changes in 2026 and 2027, want 4", zone, len(trs))
	}
	return loc, trs
}

// checkNextAfter checks that rule.Next(after) is the first instant of want
// (sorted) after after, and reports whether want has one.
func checkNextAfter(t *testing.T, name string, rule *recurrence.Rule, want []time.Time, after time.Time) bool {
	t.Helper()
	i, _ := slices.BinarySearchFunc(want, after, func(a, b time.Time) int {
		if a.After(b) {
			return 1
		}
		return -1
	})
	if i == len(want) {
		return false
	}
	if got := rule.Next(after); !got.Equal(want[i]) {
		t.Fatalf("%s: Next(%v) = %v, want %v", name, after, got.UTC(), want[i])
	}
	return true
}
