package recurrence_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// secondsRecurrence is a recurrence that runs seconds apart, of a shape
// the oracle below expands without the package: either the wall clock
// readings (to the second) it names and whether its hour is free, or,
// for one that steps in elapsed time, the step.
type secondsRecurrence struct {
	rec  *recurrence.Recurrence
	free bool
	// names reports whether the rule names the wall reading w (a civil
	// time written as UTC).
	names func(w time.Time) bool
	// step, when not zero, is the elapsed time between runs from the
	// start; names is then unused.
	step time.Duration
}

// secondsIntervals are the intervals, in seconds, of the random rules.
var secondsIntervals = []int{7, 10, 15, 30, 45, 90}

// randomSecondList returns a random list of seconds of a minute, every
// step seconds from a random offset, or a few scattered ones.
func randomSecondList(rng *rand.Rand) []int {
	if rng.IntN(4) == 0 {
		l := []int{rng.IntN(60), rng.IntN(60), rng.IntN(60)}
		slices.Sort(l)
		return slices.Compact(l)
	}
	step := []int{5, 10, 15, 20, 30}[rng.IntN(5)]
	var l []int
	for s := rng.IntN(step); s < 60; s += step {
		l = append(l, s)
	}
	return l
}

// cronField writes the set l of values lo-hi as a cron field: "*" when
// it holds every value, a step when it is one, else a list.
func cronField(l []int, lo, hi int) string {
	if len(l) == hi-lo+1 {
		return "*"
	}
	if len(l) > 1 && l[0] == lo {
		step := l[1] - l[0]
		var s []int
		for v := lo; v <= hi; v += step {
			s = append(s, v)
		}
		if slices.Equal(s, l) {
			return "*/" + strconv.Itoa(step)
		}
	}
	parts := make([]string, len(l))
	for i, v := range l {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}

// randomSeconds returns a random recurrence that runs seconds apart:
// frequency Second with an interval (counted on the wall clock from the
// start's reading when it has a schedule, in elapsed time without one),
// Minute, Hour or Day with a list of seconds, a six-field cron spec, or
// "@every Ns". Those that fix their hours take them from near, the wall
// clock hours around a clock change.
func randomSeconds(rng *rand.Rand, wallStart time.Time, near []int) secondsRecurrence {
	all := make([]int, 24)
	for h := range all {
		all[h] = h
	}
	fixed := []int{near[rng.IntN(len(near))], near[rng.IntN(len(near))]}
	slices.Sort(fixed)
	fixed = slices.Compact(fixed)
	k := secondsIntervals[rng.IntN(len(secondsIntervals))]
	// counted reports whether the reading w is a whole number of k
	// seconds from the start's reading.
	counted := func(w time.Time) bool { return int64(w.Sub(wallStart)/time.Second)%int64(k) == 0 }
	secs := randomSecondList(rng)
	sec := func(w time.Time) bool { return slices.Contains(secs, w.Second()) }
	mins := randomSecondList(rng) // minutes of an hour, drawn as seconds
	minute := func(w time.Time) bool { return slices.Contains(mins, w.Minute()) }
	switch rng.IntN(9) {
	case 0:
		return secondsRecurrence{rec: &recurrence.Recurrence{Frequency: recurrence.Second, Interval: int32(k), Schedule: &recurrence.Schedule{Hours: all}}, free: true, names: counted}
	case 1:
		return secondsRecurrence{rec: &recurrence.Recurrence{Frequency: recurrence.Second, Interval: int32(k), Schedule: &recurrence.Schedule{Hours: fixed}},
			names: func(w time.Time) bool { return counted(w) && slices.Contains(fixed, w.Hour()) }}
	case 2:
		return secondsRecurrence{rec: &recurrence.Recurrence{Frequency: recurrence.Minute, Schedule: &recurrence.Schedule{Seconds: secs}}, free: true, names: sec}
	case 3:
		return secondsRecurrence{rec: &recurrence.Recurrence{Frequency: recurrence.Hour, Schedule: &recurrence.Schedule{Minutes: mins, Seconds: secs}}, free: true,
			names: func(w time.Time) bool { return minute(w) && sec(w) }}
	case 4:
		return secondsRecurrence{rec: &recurrence.Recurrence{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Seconds: secs}}, free: true, names: sec}
	case 5:
		return secondsRecurrence{rec: &recurrence.Recurrence{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Hours: fixed, Minutes: mins, Seconds: secs}},
			names: func(w time.Time) bool { return slices.Contains(fixed, w.Hour()) && minute(w) && sec(w) }}
	case 6, 7:
		hours := [][]int{all, {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22}, {0, 3, 6, 9, 12, 15, 18, 21}, fixed}[rng.IntN(4)]
		if rng.IntN(3) == 0 {
			mins = make([]int, 60)
			for m := range mins {
				mins[m] = m
			}
		}
		hourField := cronField(hours, 0, 23)
		spec := strings.Join([]string{cronField(secs, 0, 59), cronField(mins, 0, 59), hourField, "*", "*", "*"}, " ")
		if spec[0] == '0' && spec[1] == ' ' {
			spec = "0,30" + spec[1:] // a seconds field of 0 alone is the five-field spec
			secs = []int{0, 30}
		}
		// A "*" or a step in the hour field leaves the hour free, even
		// when the step writes fixed hours (hours 0 and 23 as */23).
		return secondsRecurrence{rec: recurrence.Cron(spec), free: strings.Contains(hourField, "*"),
			names: func(w time.Time) bool { return slices.Contains(hours, w.Hour()) && minute(w) && sec(w) }}
	default:
		if rng.IntN(2) == 0 {
			return secondsRecurrence{rec: recurrence.Cron(fmt.Sprintf("@every %ds", k)), step: time.Duration(k) * time.Second}
		}
		return secondsRecurrence{rec: recurrence.Every(k, recurrence.Second), step: time.Duration(k) * time.Second}
	}
}

// secondsOracle lists the instants in [from, to] at which o runs by the
// product's rules, reading every second of the wall clock and converting
// its minute with wallInstant (clocks change on whole minutes): a reading
// whose hour is free is skipped in a gap and runs at both instants of a
// repeated time; a fixed one runs shifted by a gap and once, at the first
// instant, when it occurs twice. No instant before the start (from)
// runs; a fixed time in a gap just before the start runs when its shifted
// instant is not before the start.
func secondsOracle(o secondsRecurrence, loc *time.Location, wallStart, from, to time.Time) []time.Time {
	var out []time.Time
	if o.step > 0 {
		for at := from; !at.After(to); at = at.Add(o.step) {
			out = append(out, at.UTC())
		}
		return out
	}
	seen := map[int64]bool{}
	add := func(t time.Time) {
		if !t.Before(from) && !t.After(to) && !seen[t.Unix()] {
			seen[t.Unix()] = true
			out = append(out, t.UTC())
		}
	}
	lo := wallStart.Truncate(time.Minute).Add(-2 * time.Hour)
	hi := wallStart.Add(to.Sub(from) + 2*time.Hour)
	for m := lo; m.Before(hi); m = m.Add(time.Minute) {
		at, gap, rep := wallInstant(loc, m.Year(), m.Month(), m.Day(), m.Hour(), m.Minute())
		if o.free && gap {
			continue
		}
		for s := range 60 {
			w := m.Add(time.Duration(s) * time.Second)
			if !o.names(w) {
				continue
			}
			d := time.Duration(s) * time.Second
			add(at.Add(d))
			if o.free && !rep.IsZero() {
				add(rep.Add(d))
			}
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// secondsZones are the zones whose clock changes TestSecondsDaylightSaving
// crosses: an hour at 02:00 (New York), an hour at 01:00 UTC (Berlin), half
// an hour (Lord Howe) and an hour at midnight, so that the gap holds the
// start of a day (Santiago). Asia/Tehran, which kept daylight saving time
// until 2022, has no clock change in 2026 or 2027 in the time zone
// database; the test checks that it still has none.
var secondsZones = []string{"America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Santiago"}

// TestSecondsDaylightSaving runs random recurrences that run seconds
// apart across every clock change of 2026 and 2027 in secondsZones and
// checks Next against secondsOracle: from a start up to three hours before
// the change (sometimes inside a repeated hour), the runs around the change
// one after another and Next from scattered instants up to 90 minutes after
// it.
func TestSecondsDaylightSaving(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 2))
	rules := 5
	if testing.Short() {
		rules = 2
	}
	tehran, err := time.LoadLocation("Asia/Tehran")
	if err != nil {
		t.Fatal(err)
	}
	if trs := append(transitions(tehran, 2026), transitions(tehran, 2027)...); len(trs) != 0 {
		t.Errorf("Asia/Tehran changes its clocks at %v: add it to secondsZones", trs)
	}
	compared, runs := 0, 0
	for _, zone := range secondsZones {
		loc, trs := clockChanges(t, zone)
		for _, tr := range trs {
			near := nearHours(loc, tr)
			for range rules {
				start := tr.Add(-time.Duration(10+rng.IntN(170))*time.Minute - time.Duration(rng.IntN(60))*time.Second)
				if rng.IntN(4) == 0 {
					// Shortly after the change: inside the second pass of a
					// repeated hour, whose readings came before.
					start = tr.Add(time.Duration(rng.IntN(40*60)) * time.Second)
				}
				_, off := start.In(loc).Zone()
				wallStart := start.Add(time.Duration(off) * time.Second).UTC()
				o := randomSeconds(rng, wallStart, near)
				o.rec.TimeZone = zone
				name := fmt.Sprintf("%s around %v from %v: %+v %+v", zone, tr, start.In(loc), o.rec, o.rec.Schedule)
				rule, err := recurrence.Compile(o.rec, start)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				to := tr.Add(4 * time.Hour)
				want := secondsOracle(o, loc, wallStart, start, to)
				// Walk the runs just around the change (TestNextNearClockChange
				// walks the two hours around it).
				j, _ := slices.BinarySearchFunc(want, tr.Add(-2*time.Minute), time.Time.Compare)
				lo, hi := max(0, j-12), min(len(want), j+24)
				if lo == hi {
					// Hours fixed before a start in the second pass.
					if got := rule.Next(start); !got.After(to) {
						t.Fatalf("%s: Next(%v) = %v, want none before %v", name, start, got, to)
					}
					continue
				}
				from := start
				if lo > 0 {
					from = want[lo-1].Add(time.Nanosecond)
				}
				if got := between(rule.Next, from, want[hi-1]); !slices.EqualFunc(got, want[lo:hi], time.Time.Equal) {
					t.Fatalf("%s:\n jobclock %v\n   oracle %v", name, firstDifference(got, want[lo:hi]), firstDifference(want[lo:hi], got))
				}
				runs += hi - lo
				// Scattered questions on a fresh rule, some between seconds.
				rule, _ = recurrence.Compile(o.rec, start)
				for range 10 {
					after := start.Add(time.Duration(rng.Int64N(int64(tr.Add(90 * time.Minute).Sub(start)))))
					if rng.IntN(2) == 0 {
						after = after.Truncate(time.Second)
					}
					if checkNextAfter(t, name, rule, want, after) {
						compared++
					}
				}
			}
		}
	}
	t.Logf("%d runs and %d scattered answers compared", runs, compared)
}

// nearHours returns the wall clock hours just before and just after the
// clock change at tr, the hour before and after those, and the hour the
// clocks would read at tr had they not changed (the hour of a gap's
// readings).
func nearHours(loc *time.Location, tr time.Time) []int {
	before, after := tr.Add(-time.Second).In(loc), tr.In(loc).Hour()
	_, off := before.Zone()
	unchanged := tr.In(time.FixedZone("", off)).Hour()
	return []int{before.Hour(), after, (before.Hour() + 23) % 24, (after + 1) % 24, unchanged}
}

// firstDifference returns a's elements from a little before the first
// index where a and b differ, so that a failure shows where they part.
func firstDifference(a, b []time.Time) string {
	i := 0
	for i < len(a) && i < len(b) && a[i].Equal(b[i]) {
		i++
	}
	lo, hi := max(0, i-2), min(len(a), i+4)
	return fmt.Sprintf("[%d of %d from %d] %v", hi-lo, len(a), lo, a[lo:hi])
}

// TestSecondsDaylightSavingPinned pins runs around clock changes as
// Python's zoneinfo computes them, apart from both the package and
// secondsOracle: walking the UTC seconds from the start, a free time runs
// at every instant whose local reading it names and a fixed one only at
// the first pass (fold 0), and a fixed reading that does not exist runs
// at its fold 0 instant, which is the reading shifted by the gap.
func TestSecondsDaylightSavingPinned(t *testing.T) {
	sched := func(freq recurrence.Frequency, interval int32, zone string, s recurrence.Schedule) *recurrence.Recurrence {
		return &recurrence.Recurrence{Frequency: freq, Interval: interval, TimeZone: zone, Schedule: &s}
	}
	cron := func(spec, zone string) *recurrence.Recurrence {
		r := recurrence.Cron(spec)
		r.TimeZone = zone
		return r
	}
	every := recurrence.Cron("@every 90s")
	every.TimeZone = "Europe/Berlin"
	for _, tt := range []struct {
		name  string
		rec   *recurrence.Recurrence
		start string
		want  []string
	}{
		{"*/20 seconds through New York's repeated hour", cron("*/20 * * * * *", "America/New_York"), "2026-11-01T05:59:00Z",
			[]string{"2026-11-01T05:59:00Z", "2026-11-01T05:59:20Z", "2026-11-01T05:59:40Z", "2026-11-01T06:00:00Z", "2026-11-01T06:00:20Z", "2026-11-01T06:00:40Z"}},
		{"every 45 seconds in hour 1 runs the first pass only", sched(recurrence.Second, 45, "America/New_York", recurrence.Schedule{Hours: []int{1}}), "2026-11-01T05:58:00Z",
			[]string{"2026-11-01T05:58:00Z", "2026-11-01T05:58:45Z", "2026-11-01T05:59:30Z", "2026-11-02T06:00:15Z", "2026-11-02T06:01:00Z", "2026-11-02T06:01:45Z"}},
		{"10 */15 * * * * through Lord Howe's repeated half hour", cron("10 */15 * * * *", "Australia/Lord_Howe"), "2026-04-04T14:40:00Z",
			[]string{"2026-04-04T14:45:10Z", "2026-04-04T15:00:10Z", "2026-04-04T15:15:10Z", "2026-04-04T15:30:10Z", "2026-04-04T15:45:10Z", "2026-04-04T16:00:10Z"}},
		{"02:10:05 and 02:10:35 in Lord Howe's gap run 30 minutes later",
			sched(recurrence.Day, 1, "Australia/Lord_Howe", recurrence.Schedule{Hours: []int{2}, Minutes: []int{10}, Seconds: []int{5, 35}}), "2026-10-03T12:00:00Z",
			[]string{"2026-10-03T15:40:05Z", "2026-10-03T15:40:35Z", "2026-10-04T15:10:05Z", "2026-10-04T15:10:35Z"}},
		{"minutes 0 and 30 skip Santiago's midnight gap", sched(recurrence.Hour, 1, "America/Santiago", recurrence.Schedule{Minutes: []int{0, 30}, Seconds: []int{0}}), "2026-09-06T03:00:00Z",
			[]string{"2026-09-06T03:00:00Z", "2026-09-06T03:30:00Z", "2026-09-06T04:00:00Z", "2026-09-06T04:30:00Z"}},
		{"00:15:45 in Santiago's gap runs at 01:15:45", sched(recurrence.Day, 1, "America/Santiago", recurrence.Schedule{Hours: []int{0}, Minutes: []int{15}, Seconds: []int{45}}), "2026-09-05T12:00:00Z",
			[]string{"2026-09-06T04:15:45Z"}},
		{"seconds 7 and 37 in both passes of Santiago's repeated hour", sched(recurrence.Minute, 1, "America/Santiago", recurrence.Schedule{Seconds: []int{7, 37}}), "2026-04-05T02:59:00Z",
			[]string{"2026-04-05T02:59:07Z", "2026-04-05T02:59:37Z", "2026-04-05T03:00:07Z", "2026-04-05T03:00:37Z", "2026-04-05T03:01:07Z", "2026-04-05T03:01:37Z"}},
		{"*/15 of hour 2 in Berlin's repeated hour, first pass only",
			sched(recurrence.Day, 1, "Europe/Berlin", recurrence.Schedule{Hours: []int{2}, Minutes: []int{0, 59}, Seconds: []int{0, 15, 30, 45}}), "2026-10-25T00:59:30Z",
			[]string{"2026-10-25T00:59:30Z", "2026-10-25T00:59:45Z", "2026-10-26T01:00:00Z", "2026-10-26T01:00:15Z", "2026-10-26T01:00:30Z", "2026-10-26T01:00:45Z"}},
		{"@every 90s steps in elapsed time through Berlin's change", every, "2026-10-25T00:58:30Z",
			[]string{"2026-10-25T00:58:30Z", "2026-10-25T01:00:00Z", "2026-10-25T01:01:30Z", "2026-10-25T01:03:00Z"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start, err := time.Parse(time.RFC3339, tt.start)
			if err != nil {
				t.Fatal(err)
			}
			want := make([]time.Time, len(tt.want))
			for i, s := range tt.want {
				if want[i], err = time.Parse(time.RFC3339, s); err != nil {
					t.Fatal(err)
				}
			}
			checkWalk(t, mustCompile(t, tt.rec, start), start, want)
		})
	}
}
