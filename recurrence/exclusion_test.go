package recurrence_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/recurrence"
)

func TestExclusionsExcludes(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	wall := func(s string) time.Time {
		w, err := time.Parse("2006-01-02T15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	e, err := recurrence.CompileExclusions(berlin,
		[]time.Time{wall("2026-12-25T00:00:00")},
		[]recurrence.ExclusionRange{{Start: wall("2026-12-31T12:00:00"), End: wall("2027-01-02T00:00:00")}},
		[]*recurrence.Recurrence{{Frequency: recurrence.Year, Schedule: &recurrence.Schedule{Months: []int{5}, MonthDays: []int{1}}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		at   time.Time // an instant
		want bool
	}{
		{"a listed date, Berlin morning", time.Date(2026, 12, 25, 8, 0, 0, 0, berlin), true},
		{"a listed date, last second", time.Date(2026, 12, 25, 23, 59, 59, 0, berlin), true},
		{"the day after a listed date", time.Date(2026, 12, 26, 0, 0, 0, 0, berlin), false},
		{"UTC 24 Dec 23:30 is 25 Dec in Berlin", time.Date(2026, 12, 24, 23, 30, 0, 0, time.UTC), true},
		{"before a range", time.Date(2026, 12, 31, 11, 59, 59, 0, berlin), false},
		{"a range's start", time.Date(2026, 12, 31, 12, 0, 0, 0, berlin), true},
		{"within a range", time.Date(2027, 1, 1, 9, 0, 0, 0, berlin), true},
		{"a range's end is not excluded", time.Date(2027, 1, 2, 0, 0, 0, 0, berlin), false},
		{"a rule's date", time.Date(2028, 5, 1, 17, 0, 0, 0, berlin), true},
		{"the day before a rule's date", time.Date(2028, 4, 30, 17, 0, 0, 0, berlin), false},
		{"an ordinary day", time.Date(2027, 3, 3, 9, 0, 0, 0, berlin), false},
	}
	for _, tt := range tests {
		if got := e.Excludes(tt.at); got != tt.want {
			t.Errorf("%s: Excludes(%v) = %v, want %v", tt.name, tt.at, got, tt.want)
		}
	}
}

func TestExclusionsPlace(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	weekends := &recurrence.Recurrence{Frequency: recurrence.Week,
		Schedule: &recurrence.Schedule{WeekDays: []recurrence.Weekday{recurrence.Saturday, recurrence.Sunday}}}
	e, err := recurrence.CompileExclusions(berlin, []time.Time{time.Date(2027, 3, 29, 0, 0, 0, 0, time.UTC)}, nil,
		[]*recurrence.Recurrence{weekends})
	if err != nil {
		t.Fatal(err)
	}
	// The last day of each month at 18:00, moved to the last business day.
	last, err := recurrence.Compile(&recurrence.Recurrence{Frequency: recurrence.Month, TimeZone: "Europe/Berlin",
		Schedule: &recurrence.Schedule{MonthDays: []int{-1}, Hours: []int{18}, Minutes: []int{0}}},
		time.Date(2027, 1, 1, 0, 0, 0, 0, berlin))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	at := time.Date(2027, 1, 1, 0, 0, 0, 0, berlin)
	for range 4 {
		at = last.Next(at)
		p, ok := e.Place(at, recurrence.OnExcludedPreviousIncluded)
		if !ok {
			t.Fatalf("Place(%v, PreviousIncluded) found no day", at)
		}
		got = append(got, p.In(berlin).Format("Mon 2006-01-02 15:04 MST"))
	}
	want := []string{
		"Fri 2027-01-29 18:00 CET",  // 31 Jan is a Sunday
		"Fri 2027-02-26 18:00 CET",  // 28 Feb is a Sunday
		"Wed 2027-03-31 18:00 CEST", // a weekday
		"Fri 2027-04-30 18:00 CEST",
	}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Errorf("last business day %d = %v, want %v", i, got, want)
			break
		}
	}
	tests := []struct {
		name string
		at   time.Time
		on   recurrence.OnExcluded
		want time.Time // zero: not run
	}{
		{"included", time.Date(2027, 3, 26, 9, 0, 0, 0, berlin), recurrence.OnExcludedSkip, time.Date(2027, 3, 26, 9, 0, 0, 0, berlin)},
		{"skipped", time.Date(2027, 3, 27, 9, 0, 0, 0, berlin), recurrence.OnExcludedSkip, time.Time{}},
		{"empty means skip", time.Date(2027, 3, 27, 9, 0, 0, 0, berlin), "", time.Time{}},
		// Saturday in CET, over Sunday (the change to CEST) and the
		// holiday Monday, to Tuesday's 09:00 CEST.
		{"next across DST and a holiday", time.Date(2027, 3, 27, 9, 0, 0, 0, berlin), recurrence.OnExcludedNextIncluded, time.Date(2027, 3, 30, 9, 0, 0, 0, berlin)},
		{"previous", time.Date(2027, 3, 28, 9, 0, 0, 0, berlin), recurrence.OnExcludedPreviousIncluded, time.Date(2027, 3, 26, 9, 0, 0, 0, berlin)},
	}
	for _, tt := range tests {
		got, ok := e.Place(tt.at.UTC(), tt.on)
		if ok != !tt.want.IsZero() || !got.Equal(tt.want) {
			t.Errorf("%s: Place(%v, %q) = %v, %v; want %v", tt.name, tt.at, tt.on, got, ok, tt.want)
		}
	}
	all, err := recurrence.CompileExclusions(nil, nil, nil, []*recurrence.Recurrence{{Frequency: recurrence.Day}})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := all.Place(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), recurrence.OnExcludedNextIncluded); ok {
		t.Errorf("Place with every day excluded = %v, want none", got)
	}
}

// TestPlacementOrder walks rules under calendars with each onExcluded and
// checks what Placement.Next promises: the instants a walk returns
// increase, each is the first after the one before when asked cold (a new
// Placement, from any instant in between), and the moved ones are where
// the calendar says.
func TestPlacementOrder(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	weekends := []*recurrence.Recurrence{{Frequency: recurrence.Week,
		Schedule: &recurrence.Schedule{WeekDays: []recurrence.Weekday{recurrence.Saturday, recurrence.Sunday}}}}
	span := []recurrence.ExclusionRange{{Start: time.Date(2026, 1, 5, 13, 0, 0, 0, time.UTC), End: time.Date(2026, 1, 7, 10, 0, 0, 0, time.UTC)}}
	tests := []struct {
		name   string
		rec    *recurrence.Recurrence
		ranges []recurrence.ExclusionRange
		rules  []*recurrence.Recurrence
		on     recurrence.OnExcluded
		want   []string // the first runs, as 2006-01-02T15:04
	}{
		{"daily, weekends skipped", &recurrence.Recurrence{Frequency: recurrence.Day}, nil, weekends, recurrence.OnExcludedSkip,
			[]string{"2026-01-01T00:00", "2026-01-02T00:00", "2026-01-05T00:00", "2026-01-06T00:00"}},
		{"daily, weekends onto Monday run once", &recurrence.Recurrence{Frequency: recurrence.Day}, nil, weekends, recurrence.OnExcludedNextIncluded,
			[]string{"2026-01-01T00:00", "2026-01-02T00:00", "2026-01-05T00:00", "2026-01-06T00:00"}},
		{"every third day, weekends moved", &recurrence.Recurrence{Frequency: recurrence.Day, Interval: 3}, nil, weekends, recurrence.OnExcludedNextIncluded,
			[]string{"2026-01-01T00:00", "2026-01-05T00:00", "2026-01-07T00:00", "2026-01-12T00:00"}},
		{"every third day, weekends moved back", &recurrence.Recurrence{Frequency: recurrence.Day, Interval: 3}, nil, weekends, recurrence.OnExcludedPreviousIncluded,
			[]string{"2026-01-01T00:00", "2026-01-02T00:00", "2026-01-07T00:00", "2026-01-09T00:00"}},
		{"last business day", &recurrence.Recurrence{Frequency: recurrence.Month, Schedule: &recurrence.Schedule{MonthDays: []int{-1}, Hours: []int{18}, Minutes: []int{0}}},
			nil, weekends, recurrence.OnExcludedPreviousIncluded,
			[]string{"2026-01-30T18:00", "2026-02-27T18:00", "2026-03-31T18:00", "2026-04-30T18:00", "2026-05-29T18:00"}},
		// 14:00 on the 5th would move to 14:00 on the 7th, past 09:00
		// on the 6th (itself moved to the 8th, past 14:00 on the 6th):
		// both run as the occurrence they passed.
		{"a span of hours: moves keep the order", &recurrence.Recurrence{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{Hours: []int{9, 14}, Minutes: []int{0}}},
			span, nil, recurrence.OnExcludedNextIncluded,
			[]string{"2026-01-01T09:00", "2026-01-01T14:00", "2026-01-02T09:00", "2026-01-02T14:00", "2026-01-03T09:00", "2026-01-03T14:00",
				"2026-01-04T09:00", "2026-01-04T14:00", "2026-01-05T09:00", "2026-01-07T14:00", "2026-01-08T09:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule, err := recurrence.Compile(tt.rec, start)
			if err != nil {
				t.Fatal(err)
			}
			e, err := recurrence.CompileExclusions(time.UTC, nil, tt.ranges, tt.rules)
			if err != nil {
				t.Fatal(err)
			}
			walk := e.Apply(rule, tt.on)
			var got []string
			var runs []time.Time
			at := start.Add(-time.Nanosecond)
			for range len(tt.want) {
				_, at = walk.Next(at)
				got = append(got, at.Format("2006-01-02T15:04"))
				runs = append(runs, at)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("runs (-want +got):\n%s", diff)
			}
			for i := 1; i < len(runs); i++ {
				for _, after := range []time.Time{runs[i-1], runs[i-1].Add(time.Second), runs[i].Add(-time.Second)} {
					if _, cold := e.Apply(rule, tt.on).Next(after); !cold.Equal(runs[i]) {
						t.Errorf("Next(%v) on a new Placement = %v, want %v", after, cold, runs[i])
					}
				}
			}
		})
	}
}

// TestPlacementSkipAgreesWithFilter: under Skip, a Placement's walk (which
// jumps over excluded spans) gives exactly the rule's instants that the
// calendar does not exclude, asked one by one, across ranges, whole
// excluded days, rules and a daylight saving change.
func TestPlacementSkipAgreesWithFilter(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 10, 20, 12, 40, 0, 0, berlin)
	rule, err := recurrence.Compile(&recurrence.Recurrence{Frequency: recurrence.Minute, Interval: 10, TimeZone: "Europe/Berlin"}, start)
	if err != nil {
		t.Fatal(err)
	}
	e, err := recurrence.CompileExclusions(berlin,
		[]time.Time{time.Date(2026, 10, 27, 0, 0, 0, 0, time.UTC), time.Date(2026, 10, 28, 0, 0, 0, 0, time.UTC)},
		[]recurrence.ExclusionRange{
			{Start: time.Date(2026, 10, 20, 13, 0, 0, 0, time.UTC), End: time.Date(2026, 10, 22, 10, 0, 0, 0, time.UTC)},
			{Start: time.Date(2026, 10, 21, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 10, 21, 1, 0, 0, 0, time.UTC)},
			{Start: time.Date(2026, 10, 28, 23, 50, 0, 0, time.UTC), End: time.Date(2026, 10, 29, 0, 20, 0, 0, time.UTC)},
		},
		[]*recurrence.Recurrence{{Frequency: recurrence.Week, Schedule: &recurrence.Schedule{WeekDays: []recurrence.Weekday{recurrence.Sunday}}}})
	if err != nil {
		t.Fatal(err)
	}
	p := e.Apply(rule, recurrence.OnExcludedSkip)
	end := time.Date(2026, 11, 10, 0, 0, 0, 0, berlin)
	s := rule.Next(start.Add(-time.Nanosecond))
	_, at := p.Next(start.Add(-time.Nanosecond))
	for s.Before(end) {
		if e.Excludes(s) {
			s = rule.Next(s)
			continue
		}
		if !at.Equal(s) {
			t.Fatalf("the walk gives %v, want %v (the next instant not excluded)", at, s)
		}
		s = rule.Next(s)
		_, at = p.Next(at)
	}
}

// TestPlacementAcrossLongSpan walks rules several times a day through a
// calendar whose range excludes three weeks, with each onExcluded, and
// checks every occurrence against a walk written apart from Placement:
// each instant the rule gives, excluded or not, and for an excluded one
// under NextIncluded (PreviousIncluded) the same wall time a day later (earlier), day by day, until a day the
// calendar does not exclude; it runs there unless that is at or past the
// next (previous) instant. A Placement jumps over most of such a span;
// the walk looks at every instant of it.
func TestPlacementAcrossLongSpan(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, berlin)
	e, err := recurrence.CompileExclusions(berlin, []time.Time{time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)},
		[]recurrence.ExclusionRange{
			// Three weeks across the March change of the clocks.
			{Start: time.Date(2026, 3, 15, 13, 10, 0, 0, time.UTC), End: time.Date(2026, 4, 5, 9, 20, 0, 0, time.UTC)},
			// From 02:15 in the hour that occurs twice on 25 October:
			// 02:00-02:14 of its second pass are not excluded (a Sunday;
			// the calendar excludes Mondays).
			{Start: time.Date(2026, 10, 25, 2, 15, 0, 0, time.UTC), End: time.Date(2026, 11, 8, 5, 0, 0, 0, time.UTC)},
			{Start: time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)},
		},
		[]*recurrence.Recurrence{{Frequency: recurrence.Week, Schedule: &recurrence.Schedule{WeekDays: []recurrence.Weekday{recurrence.Monday}}}})
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]*recurrence.Recurrence{
		"every 15 minutes": {Frequency: recurrence.Minute, Interval: 15, TimeZone: "Europe/Berlin"},
		"every 15 minutes, 9 to 17 on weekdays": {Frequency: recurrence.Week, TimeZone: "Europe/Berlin", Schedule: &recurrence.Schedule{
			WeekDays: []recurrence.Weekday{recurrence.Monday, recurrence.Tuesday, recurrence.Wednesday, recurrence.Thursday, recurrence.Friday},
			Hours:    []int{9, 10, 11, 12, 13, 14, 15, 16, 17}, Minutes: []int{0, 15, 30, 45}}},
		"at 09:00 and 23:50": {Frequency: recurrence.Day, TimeZone: "Europe/Berlin", Schedule: &recurrence.Schedule{Hours: []int{9, 23}, Minutes: []int{0, 50}}},
		"every 7 hours":      {Frequency: recurrence.Hour, Interval: 7, TimeZone: "Europe/Berlin"},
	}
	end := time.Date(2026, 12, 10, 0, 0, 0, 0, berlin)
	for name, rec := range rules {
		rule, err := recurrence.Compile(rec, start)
		if err != nil {
			t.Fatal(err)
		}
		var instants []time.Time
		for s := rule.Next(start.Add(-time.Nanosecond)); s.Before(end); s = rule.Next(s) {
			instants = append(instants, s)
		}
		for _, on := range []recurrence.OnExcluded{recurrence.OnExcludedSkip, recurrence.OnExcludedNextIncluded, recurrence.OnExcludedPreviousIncluded} {
			t.Run(name+"/"+string(on), func(t *testing.T) {
				var want []string
				for i, s := range instants {
					if !e.Excludes(s) {
						want = append(want, s.Format(time.RFC3339))
						continue
					}
					step := 0
					switch on {
					case recurrence.OnExcludedNextIncluded:
						step = 1
					case recurrence.OnExcludedPreviousIncluded:
						step = -1
					}
					w := s.In(berlin)
					for k := 1; step != 0 && k <= recurrence.MaxMoveDays; k++ {
						c := time.Date(w.Year(), w.Month(), w.Day()+k*step, w.Hour(), w.Minute(), w.Second(), 0, berlin)
						prev := start.Add(-time.Nanosecond) // where the walk below begins
						if i > 0 {
							prev = instants[i-1]
						}
						if step > 0 && (i+1 >= len(instants) || !c.Before(instants[i+1])) || step < 0 && !c.After(prev) {
							break
						}
						if !e.Excludes(c) {
							want = append(want, s.Format(time.RFC3339)+" -> "+c.Format(time.RFC3339))
							break
						}
					}
				}
				// The last instant's move is not decided within the list.
				want = want[:len(want)-1]
				p := e.Apply(rule, on)
				var got []string
				var runs []time.Time
				for s, at := p.Next(start.Add(-time.Nanosecond)); len(got) < len(want); s, at = p.Next(at) {
					runs = append(runs, at)
					if at.Equal(s) {
						got = append(got, s.Format(time.RFC3339))
					} else {
						got = append(got, s.Format(time.RFC3339)+" -> "+at.In(berlin).Format(time.RFC3339))
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("occurrences (-want +got):\n%s", diff)
				}
				// Asked cold, from the occurrence before, a new Placement
				// gives the same.
				for i := 1; i < len(runs); i += 5 {
					if _, at := e.Apply(rule, on).Next(runs[i-1]); !at.Equal(runs[i]) {
						t.Errorf("Next(%v) on a new Placement = %v, want %v", runs[i-1], at, runs[i])
					}
				}
			})
		}
	}
}

// TestPlacementSpanPastHorizon: a calendar that excludes more than
// CalendarHorizon after the instant asked leaves no occurrence within it,
// under each onExcluded.
func TestPlacementSpanPastHorizon(t *testing.T) {
	start := time.Date(2000, 1, 1, 1, 0, 0, 0, time.UTC)
	rule, err := recurrence.Compile(&recurrence.Recurrence{Frequency: recurrence.Day}, start)
	if err != nil {
		t.Fatal(err)
	}
	e, err := recurrence.CompileExclusions(nil, nil, []recurrence.ExclusionRange{{
		Start: time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, on := range []recurrence.OnExcluded{recurrence.OnExcludedSkip, recurrence.OnExcludedNextIncluded, recurrence.OnExcludedPreviousIncluded} {
		if s, at := e.Apply(rule, on).Next(start); !s.IsZero() || !at.IsZero() {
			t.Errorf("%s: Next(%v) = %v, %v; want none", on, start, s, at)
		}
	}
}
