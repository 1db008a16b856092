package recurrence_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/jobclock/scheduler/recurrence"
)

// BenchmarkNextExcluded compares a daily rule's Next alone ("plain") with
// Next followed by Place under a calendar of weekends and ten holidays a
// year, moving excluded occurrences to the next included day
// ("calendar"), and with the walks of a Placement as a job's timing
// makes them, for each onExcluded ("run/Skip", ...). The target: each within 2x
// of plain.
func BenchmarkNextExcluded(b *testing.B) {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		b.Fatal(err)
	}
	rule, err := recurrence.Compile(&recurrence.Recurrence{Frequency: recurrence.Day, TimeZone: "Europe/Berlin",
		Schedule: &recurrence.Schedule{Hours: []int{9}, Minutes: []int{30}}}, time.Date(2026, 1, 1, 0, 0, 0, 0, loc))
	if err != nil {
		b.Fatal(err)
	}
	var dates []time.Time
	for y := 2026; y <= 2030; y++ {
		for _, md := range [][2]int{{1, 1}, {4, 3}, {4, 6}, {5, 1}, {5, 14}, {5, 25}, {10, 3}, {12, 24}, {12, 25}, {12, 26}} {
			dates = append(dates, time.Date(y, time.Month(md[0]), md[1], 0, 0, 0, 0, time.UTC))
		}
	}
	e, err := recurrence.CompileExclusions(loc, dates, nil, []*recurrence.Recurrence{{Frequency: recurrence.Week,
		Schedule: &recurrence.Schedule{WeekDays: []recurrence.Weekday{recurrence.Saturday, recurrence.Sunday}}}})
	if err != nil {
		b.Fatal(err)
	}
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.Run("plain", func(b *testing.B) {
		at := from
		for b.Loop() {
			at = rule.Next(at)
			if at.Year() > 2029 {
				at = from
			}
		}
	})
	b.Run("calendar", func(b *testing.B) {
		at := from
		for b.Loop() {
			at = rule.Next(at)
			if p, ok := e.Place(at, recurrence.OnExcludedNextIncluded); ok && p.Year() > 2029 {
				at = from
			}
		}
	})
	for _, on := range []recurrence.OnExcluded{recurrence.OnExcludedSkip, recurrence.OnExcludedNextIncluded, recurrence.OnExcludedPreviousIncluded} {
		b.Run("run/"+string(on), func(b *testing.B) {
			p := e.Apply(rule, on)
			at := from
			for b.Loop() {
				if _, at = p.Next(at); at.Year() > 2029 {
					at = from
				}
			}
		})
	}
}

// BenchmarkNextExcludedSpan asks a Placement of an every-15-minutes rule
// for the occurrence after the last one before an excluded range of a
// day ("span=1d") or three weeks ("span=21d"), for each onExcluded. The
// target: the same cost for both lengths.
func BenchmarkNextExcludedSpan(b *testing.B) {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, loc)
	rule, err := recurrence.Compile(&recurrence.Recurrence{Frequency: recurrence.Minute, Interval: 15, TimeZone: "Europe/Berlin"}, start)
	if err != nil {
		b.Fatal(err)
	}
	from := time.Date(2026, 2, 2, 8, 0, 0, 0, time.UTC) // a wall clock reading: 08:00 in Berlin
	for _, on := range []recurrence.OnExcluded{recurrence.OnExcludedSkip, recurrence.OnExcludedNextIncluded, recurrence.OnExcludedPreviousIncluded} {
		for _, days := range []int{1, 21} {
			e, err := recurrence.CompileExclusions(loc, nil, []recurrence.ExclusionRange{{Start: from, End: from.AddDate(0, 0, days)}}, nil)
			if err != nil {
				b.Fatal(err)
			}
			p := e.Apply(rule, on)
			before := time.Date(2026, 2, 2, 7, 45, 0, 0, loc)
			b.Run(fmt.Sprintf("%s/span=%dd", on, days), func(b *testing.B) {
				for b.Loop() {
					if _, at := p.Next(before); !at.After(before) {
						b.Fatal("no occurrence")
					}
				}
			})
		}
	}
}
