package recurrence

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// reference is Next computed the slow way: expand the rule compiled from
// its start as RRULE says (the frequency as given, no re-anchoring, no
// caching), through every wall clock reading up to a few periods past after,
// and take the earliest instant after after.
func reference(r *Rule, rec *Recurrence, after time.Time) time.Time {
	sched := rec.Schedule
	if sched != nil && sched.empty() {
		sched = nil
	}
	// Fields the schedule leaves out default from the start's own wall
	// clock reading; the expansion runs from r.wallStart, which lies
	// earlier near a change of the clocks.
	defaults := r.zone.wall(r.start).Truncate(time.Second)
	next := r.wallsOf(buildOptions(rec.Frequency, int(r.interval), sched, defaults), r.wallStart, r.wallUntil)
	reach := map[Frequency]time.Duration{Minute: 72 * time.Hour, Hour: 72 * time.Hour, Day: 72 * time.Hour,
		Week: 30 * 24 * time.Hour, Month: 2 * 366 * 24 * time.Hour, Year: 12 * 366 * 24 * time.Hour}[rec.Frequency]
	limit := r.zone.wall(after).Add(reach)
	var best time.Time
	conv := converter{z: r.zone}
	for {
		w, ok := next()
		if !ok || w.After(limit) {
			return best
		}
		first, second, n := r.instants(&conv, w.Unix())
		for _, x := range []int64{first, second}[:n] {
			t := time.Unix(x, int64(r.nanos))
			if t.Before(r.start) || !t.After(after) || r.hasEnd && t.After(r.end) {
				continue
			}
			if best.IsZero() || t.Before(best) {
				best = t
			}
		}
	}
}

func randomRecurrence(rng *rand.Rand) *Recurrence {
	freqs := []Frequency{Second, Minute, Hour, Day, Week, Month, Year}
	f := freqs[rng.IntN(len(freqs))]
	maxIv := map[Frequency]int{Second: 120, Minute: 90, Hour: 30, Day: 10, Week: 5, Month: 4, Year: 3}[f]
	rec := &Recurrence{Frequency: f, Interval: int32(rng.IntN(maxIv) + 1)}
	pick := func(n, lo, hi int) []int {
		seen := map[int]bool{}
		var out []int
		for range n {
			v := lo + rng.IntN(hi-lo+1)
			if !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
		return out
	}
	s := &Schedule{}
	if f != Month && f != Year && rng.IntN(3) == 0 {
		s.Seconds = pick(rng.IntN(4)+1, 0, 59)
	}
	if rng.IntN(2) == 0 {
		s.Minutes = pick(rng.IntN(4)+1, 0, 59)
	}
	if rng.IntN(2) == 0 {
		s.Hours = pick(rng.IntN(4)+1, 0, 23)
	}
	switch f {
	case Week:
		if rng.IntN(2) == 0 {
			for _, i := range pick(rng.IntN(3)+1, 0, 6) {
				s.WeekDays = append(s.WeekDays, weekdays[i])
			}
		}
	case Month:
		if rng.IntN(2) == 0 {
			for _, d := range pick(rng.IntN(3)+1, -31, 31) {
				if d != 0 {
					s.MonthDays = append(s.MonthDays, d)
				}
			}
		}
		if rng.IntN(2) == 0 {
			seen := map[MonthlyOccurrence]bool{}
			for range rng.IntN(3) + 1 {
				o := MonthlyOccurrence{Day: weekdays[rng.IntN(7)], Occurrence: rng.IntN(11) - 5}
				if !seen[o] {
					seen[o] = true
					s.MonthlyOccurrences = append(s.MonthlyOccurrences, o)
				}
			}
		}
		fallthrough
	case Year:
		if rng.IntN(3) == 0 {
			s.Months = pick(rng.IntN(4)+1, 1, 12)
		}
	}
	if rng.IntN(4) != 0 {
		rec.Schedule = s
	}
	return rec
}

// TestAnchorEquivalence checks that re-anchored, windowed Next gives
// exactly what expanding the original rule from its start gives.
func TestAnchorEquivalence(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	zones := []string{"", "Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata"}
	checked, compared := 0, 0
	for i := 0; checked < 1000 && i < 10000; i++ {
		rec := randomRecurrence(rng)
		rec.TimeZone = zones[rng.IntN(len(zones))]
		start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(int64(2 * 365 * 24 * time.Hour))))
		start = start.Truncate(time.Second)
		r, err := Compile(rec, start)
		if err != nil {
			continue // a schedule that never matches
		}
		if r.step > 0 {
			continue // elapsed time: no expansion
		}
		checked++
		// Periods are at most a year of walls; look a few periods ahead.
		span := map[Frequency]time.Duration{Second: 24 * time.Hour, Minute: 3 * 24 * time.Hour, Hour: 20 * 24 * time.Hour, Day: 60 * 24 * time.Hour,
			Week: 120 * 24 * time.Hour, Month: 2 * 365 * 24 * time.Hour, Year: 4 * 365 * 24 * time.Hour}[rec.Frequency]
		for range 5 {
			after := start.Add(time.Duration(rng.Int64N(int64(span))) - time.Hour)
			if rng.IntN(3) == 0 {
				after = after.Truncate(time.Hour) // land on schedule instants too
			}
			if _, end := after.In(r.loc).ZoneBounds(); !end.IsZero() && rng.IntN(2) == 0 {
				// Close to the zone's next change of offset.
				after = end.Add(time.Duration(rng.IntN(6*60)-3*60) * time.Minute)
				if after.Before(start) {
					after = start
				}
			}
			want := reference(r, rec, after)
			if want.IsZero() {
				continue // nothing within the reference's reach
			}
			got := r.Next(after)
			compared++
			if !got.Equal(want) {
				t.Fatalf("%+v %+v start %v: Next(%v) = %v, want %v", rec, rec.Schedule, start, after, got, want)
			}
			// Walk a few steps through the cache too.
			for range 3 {
				after = got
				got, want = r.Next(after), reference(r, rec, after)
				if !want.IsZero() && !got.Equal(want) {
					t.Fatalf("%+v %+v start %v: Next(%v) = %v, want %v", rec, rec.Schedule, start, after, got, want)
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d rules checked", checked)
	}
	t.Logf("%d rules, %d instants compared", checked, compared)
}

// TestInstant pins the conversion of wall clock readings to instants,
// which time.Date does not do consistently (it resolves New York's spring
// gap backwards and Berlin's fall overlap to the second instant).
func TestInstant(t *testing.T) {
	for _, tt := range []struct {
		zone string
		wall time.Time
		want time.Time
	}{
		{"America/New_York", time.Date(2025, 3, 9, 2, 30, 0, 0, time.UTC), time.Date(2025, 3, 9, 7, 30, 0, 0, time.UTC)},
		{"America/New_York", time.Date(2025, 11, 2, 1, 30, 0, 0, time.UTC), time.Date(2025, 11, 2, 5, 30, 0, 0, time.UTC)},
		{"Europe/Berlin", time.Date(2025, 3, 30, 2, 30, 0, 0, time.UTC), time.Date(2025, 3, 30, 1, 30, 0, 0, time.UTC)},
		{"Europe/Berlin", time.Date(2025, 10, 26, 2, 30, 0, 0, time.UTC), time.Date(2025, 10, 26, 0, 30, 0, 0, time.UTC)},
		{"Europe/Berlin", time.Date(2025, 7, 1, 12, 0, 0, 0, time.UTC), time.Date(2025, 7, 1, 10, 0, 0, 0, time.UTC)},
		{"Australia/Lord_Howe", time.Date(2025, 10, 5, 2, 15, 0, 0, time.UTC), time.Date(2025, 10, 4, 15, 45, 0, 0, time.UTC)}, // 30-minute gap
	} {
		loc, err := time.LoadLocation(tt.zone)
		if err != nil {
			t.Skip(err)
		}
		z := zoneOf(loc)
		for _, c := range []*converter{{z: z}, {z: z}} {
			c.instant(tt.wall.Add(-3 * time.Hour)) // warm the remembered period
			if got := c.instant(tt.wall); !got.Equal(tt.want) {
				t.Errorf("%s: instant(%v) = %v, want %v", tt.zone, tt.wall, got.UTC(), tt.want)
			}
		}
	}
}

// TestInstants pins the instants of a reading for a rule whose hours are
// free: none in a gap, both when the reading occurs twice.
func TestInstants(t *testing.T) {
	for _, tt := range []struct {
		zone string
		wall time.Time
		want []time.Time
	}{
		{"America/New_York", time.Date(2026, 3, 8, 2, 30, 0, 0, time.UTC), nil},
		{"America/New_York", time.Date(2026, 11, 1, 1, 30, 0, 0, time.UTC), []time.Time{time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC)}},
		{"America/New_York", time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC), []time.Time{time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC)}},
		{"Australia/Lord_Howe", time.Date(2026, 10, 4, 2, 15, 0, 0, time.UTC), nil},
		{"Australia/Lord_Howe", time.Date(2026, 4, 5, 1, 45, 0, 0, time.UTC), []time.Time{time.Date(2026, 4, 4, 14, 45, 0, 0, time.UTC), time.Date(2026, 4, 4, 15, 15, 0, 0, time.UTC)}},
		{"Europe/Berlin", time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC), []time.Time{time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)}},
	} {
		loc, err := time.LoadLocation(tt.zone)
		if err != nil {
			t.Skip(err)
		}
		r := &Rule{zone: zoneOf(loc), free: true}
		for _, c := range []*converter{{z: r.zone}, {z: r.zone}} {
			r.instants(c, tt.wall.Add(-3*time.Hour).Unix()) // warm the remembered period
			first, second, n := r.instants(c, tt.wall.Unix())
			var got []time.Time
			for _, x := range []int64{first, second}[:n] {
				got = append(got, time.Unix(x, 0).UTC())
			}
			if !slices.EqualFunc(got, tt.want, time.Time.Equal) {
				t.Errorf("%s: instants(%v) = %v, want %v", tt.zone, tt.wall, got, tt.want)
			}
		}
	}
}

// TestWindowsZonesLoad checks that every Windows name maps to a zone the
// host knows.
func TestWindowsZonesLoad(t *testing.T) {
	if _, err := time.LoadLocation("Europe/Berlin"); err != nil {
		t.Skip("no zone data:", err)
	}
	for win, iana := range windowsZones {
		if _, err := LoadTimeZone(win); err != nil {
			t.Errorf("LoadTimeZone(%q) (%s): %v", win, iana, err)
		}
	}
}
