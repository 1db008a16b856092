package recurrence_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// TestNextNearClockChange checks Next within the hour on each side of every
// clock change of 2026 and 2027 in secondsZones, against the oracles, for
// rules that run seconds, minutes and hours apart and Month and Year rules
// that run on the day of the change: every run of those two
// hours one after another, and Next from many instants scattered over them
// (some between seconds, some on the change itself) asked of one rule in
// random order, so that the zone period it remembers is often another one.
func TestNextNearClockChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 3))
	rules, questions := 32, 300
	if testing.Short() {
		rules, questions = 4, 60
	}
	runs, compared := 0, 0
	for _, zone := range secondsZones {
		loc, trs := clockChanges(t, zone)
		for _, tr := range trs {
			near := nearHours(loc, tr)
			from, to := tr.Add(-time.Hour), tr.Add(time.Hour)
			for i := range rules {
				start := tr.Add(-2*time.Hour - time.Duration(rng.IntN(3600))*time.Second)
				if i%4 != 0 {
					start = start.Truncate(time.Minute) // the oracle reads whole minutes
				}
				_, off := start.In(loc).Zone()
				wallStart := start.Add(time.Duration(off) * time.Second).UTC()
				horizon := to.Add(3 * time.Hour)
				var rec *recurrence.Recurrence
				var want []time.Time
				switch i % 4 {
				case 0: // seconds apart
					o := randomSeconds(rng, wallStart, near)
					rec, want = o.rec, secondsOracle(o, loc, wallStart, start, horizon)
				case 1: // minutes apart
					o := randomSubHourly(rng, wallStart)
					rec, want = o.rec, oracle(o, loc, start, horizon)
				case 2: // an hour apart, or at fixed times near the change
					o := hourly(rng, near)
					rec, want = o.rec, oracle(o, loc, start, horizon)
				default: // on the day of the change, every month or in its month
					o := monthly(rng, loc, tr, wallStart, near)
					rec, want = o.rec, oracle(o, loc, start, horizon)
				}
				rec.TimeZone = zone
				name := fmt.Sprintf("%s around %v from %v: %+v %+v", zone, tr, start.In(loc), rec, rec.Schedule)
				rule, err := recurrence.Compile(rec, start)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				lo, _ := slices.BinarySearchFunc(want, from, time.Time.Compare)
				hi, _ := slices.BinarySearchFunc(want, to.Add(time.Nanosecond), time.Time.Compare)
				if got := between(rule.Next, from, to); !slices.EqualFunc(got, want[lo:hi], time.Time.Equal) {
					t.Fatalf("%s:\n jobclock %v\n   oracle %v", name, firstDifference(got, want[lo:hi]), firstDifference(want[lo:hi], got))
				}
				runs += hi - lo
				rule, _ = recurrence.Compile(rec, start)
				for q := range questions {
					at := from.Add(time.Duration(rng.Int64N(int64(to.Sub(from)))))
					switch q % 4 {
					case 0:
						at = at.Truncate(time.Second)
					case 1:
						at = tr.Add(time.Duration(rng.IntN(5)-2) * time.Second)
					}
					if checkNextAfter(t, name, rule, want, at) {
						compared++
					}
				}
			}
		}
	}
	if runs == 0 || compared == 0 {
		t.Fatalf("%d runs and %d answers compared", runs, compared)
	}
	t.Logf("%d runs and %d scattered answers compared", runs, compared)
}

// hourly returns a random recurrence that runs an hour apart (at a minute
// of every hour, which leaves the hour free) or at a minute of a few fixed
// hours taken from near, the wall clock hours around a clock change.
func hourly(rng *rand.Rand, near []int) oracleRecurrence {
	m := rng.IntN(60)
	minute := func(w time.Time) bool { return w.Minute() == m }
	if rng.IntN(2) == 0 {
		return oracleRecurrence{&recurrence.Recurrence{Frequency: recurrence.Hour, Schedule: &recurrence.Schedule{Minutes: []int{m}}}, true, minute}
	}
	hours := []int{near[rng.IntN(len(near))], near[rng.IntN(len(near))]}
	slices.Sort(hours)
	hours = slices.Compact(hours)
	return oracleRecurrence{&recurrence.Recurrence{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Hours: hours, Minutes: []int{m}}}, false,
		func(w time.Time) bool { return minute(w) && slices.Contains(hours, w.Hour()) }}
}

// monthly returns a random Month or Year rule that runs on the local dates
// of the clock change at tr (the day before it and its own, which differ
// when the change is at midnight): every few minutes of them (a cron spec,
// which leaves the hour free; in every month or in the months of those
// dates), or at a minute of a few fixed hours taken from near (a Month rule
// on those days of every month, or a Year rule on the start's date).
func monthly(rng *rand.Rand, loc *time.Location, tr, wallStart time.Time, near []int) oracleRecurrence {
	d1, d2 := tr.Add(-time.Second).In(loc), tr.In(loc)
	days := slices.Compact([]int{d1.Day(), d2.Day()})
	months := slices.Compact([]int{int(d1.Month()), int(d2.Month())})
	list := func(l []int) string { return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(l)), ","), "[]") }
	onDay := func(w time.Time) bool { return slices.Contains(days, w.Day()) }
	step := []int{5, 10, 15, 20, 30}[rng.IntN(5)]
	everyFew := func(w time.Time) bool { return w.Minute()%step == 0 && onDay(w) }
	m := rng.IntN(60)
	hours := []int{near[rng.IntN(len(near))], near[rng.IntN(len(near))]}
	slices.Sort(hours)
	hours = slices.Compact(hours)
	atHours := func(w time.Time) bool { return w.Minute() == m && slices.Contains(hours, w.Hour()) }
	switch rng.IntN(4) {
	case 0:
		return oracleRecurrence{recurrence.Cron(fmt.Sprintf("*/%d * %s * *", step, list(days))), true, everyFew}
	case 1:
		return oracleRecurrence{recurrence.Cron(fmt.Sprintf("*/%d * %s %s *", step, list(days), list(months))), true,
			func(w time.Time) bool { return everyFew(w) && slices.Contains(months, int(w.Month())) }}
	case 2:
		return oracleRecurrence{&recurrence.Recurrence{Frequency: recurrence.Month, Schedule: &recurrence.Schedule{MonthDays: days, Hours: hours, Minutes: []int{m}}}, false,
			func(w time.Time) bool { return atHours(w) && onDay(w) }}
	default:
		return oracleRecurrence{&recurrence.Recurrence{Frequency: recurrence.Year, Schedule: &recurrence.Schedule{Hours: hours, Minutes: []int{m}}}, false,
			func(w time.Time) bool {
				return atHours(w) && w.Month() == wallStart.Month() && w.Day() == wallStart.Day()
			}}
	}
}
