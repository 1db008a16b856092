package recurrence

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// expanded returns a copy of the rule compiled from rec and start that
// never uses a template: every call expands with rrule-go.
func expanded(t *testing.T, rec *Recurrence, start time.Time) *Rule {
	t.Helper()
	r, err := Compile(rec, start)
	if err != nil {
		t.Fatal(err)
	}
	r.tpl.Store(noTemplate)
	return r
}

// templateZones are zones with offset changes of every kind: none, an hour
// in spring and fall, half an hour (Lord Howe), at midnight (São Paulo until
// 2019), and a whole day skipped (Apia, 2011-12-30).
var templateZones = []string{"", "Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata",
	"Australia/Lord_Howe", "America/Sao_Paulo", "Pacific/Apia", "Asia/Tehran"}

// randomAfter returns an instant for a scattered query on r: anywhere from
// a little before start to years after it, often close to an offset change
// of the zone or exactly on a whole minute or hour.
func randomAfter(rng *rand.Rand, r *Rule, start time.Time) time.Time {
	after := start.Add(time.Duration(rng.Int64N(int64(3*365*24*time.Hour))) - 48*time.Hour)
	switch rng.IntN(4) {
	case 0:
		after = after.Truncate(time.Hour)
	case 1:
		after = after.Truncate(time.Minute).Add(-time.Duration(rng.IntN(2)))
	}
	if _, end := after.In(r.loc).ZoneBounds(); !end.IsZero() && rng.IntN(2) == 0 {
		after = end.Add(time.Duration(rng.IntN(6*60)-3*60) * time.Minute)
	}
	return after
}

// TestTemplateEquivalence checks that rules answered from a one-period
// template give exactly what expanding them with rrule-go gives, for queries
// scattered over years, near offset changes, before the start and after
// the end, and for walks from each answer.
func TestTemplateEquivalence(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rules, templates, compared := 0, 0, 0
	for i := 0; rules < 600 && i < 10000; i++ {
		rec := randomRecurrence(rng)
		rec.TimeZone = templateZones[rng.IntN(len(templateZones))]
		lo := time.Date(2009, 1, 1, 0, 0, 0, 0, time.UTC)
		start := lo.Add(time.Duration(rng.Int64N(int64(18 * 365 * 24 * time.Hour))))
		if rec.TimeZone == "Pacific/Apia" && rng.IntN(2) == 0 {
			start = time.Date(2011, 12, 20, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(int64(20 * 24 * time.Hour))))
		}
		if loc, err := LoadTimeZone(rec.TimeZone); err == nil && rng.IntN(3) == 0 {
			// Start close to an offset change, even inside a gap.
			if _, end := start.In(loc).ZoneBounds(); !end.IsZero() {
				start = end.Add(time.Duration(rng.IntN(6*60)-3*60) * time.Minute)
			}
		}
		if rng.IntN(3) != 0 {
			start = start.Truncate(time.Second)
		}
		if rng.IntN(3) == 0 {
			end := start.Add(time.Duration(rng.Int64N(int64(2 * 365 * 24 * time.Hour))))
			rec.EndTime = &end
		}
		r, err := Compile(rec, start)
		if err != nil {
			continue // a schedule that never matches
		}
		rules++
		tp := r.buildTemplate()
		r.tpl.Store(tp)
		if r.step == 0 && rec.Frequency != Minute && rec.Frequency != Hour && !tp.ok {
			t.Fatalf("%+v %+v: no template", rec, rec.Schedule)
		}
		if tp.ok {
			templates++
		}
		slow := expanded(t, rec, start)
		check := func(after time.Time) time.Time {
			got, want := r.Next(after), slow.Next(after)
			if !got.Equal(want) || got.Location() != want.Location() {
				t.Fatalf("%+v %+v start %v end %v: Next(%v) = %v, want %v", rec, rec.Schedule, start, rec.EndTime, after, got, want)
			}
			compared++
			return got
		}
		for k := range 8 {
			after := randomAfter(rng, r, start)
			if k == 0 {
				after = start.Add(time.Duration(rng.IntN(4*60)-2*60) * time.Minute)
			}
			got := check(after)
			if !got.IsZero() {
				check(got.Add(-1))
				for range 3 {
					if got = check(got); got.IsZero() {
						break
					}
				}
			}
		}
	}
	if rules < 300 || templates < 200 {
		t.Fatalf("only %d rules, %d with a template", rules, templates)
	}
	t.Logf("%d rules, %d with a template, %d answers compared", rules, templates, compared)
}

// TestTemplateAgainstReference checks template answers against the
// rrule-go expansion from the start itself, with no re-anchoring.
func TestTemplateAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	compared := 0
	for i := 0; i < 400; i++ {
		rec := randomRecurrence(rng)
		rec.TimeZone = templateZones[rng.IntN(len(templateZones))]
		start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(int64(15 * 365 * 24 * time.Hour))))
		r, err := Compile(rec, start)
		if err != nil || r.step > 0 {
			continue
		}
		r.tpl.Store(r.buildTemplate())
		for range 4 {
			// The reference expands from the start: keep queries close.
			span := 40 * 24 * time.Hour
			if rec.Frequency == Month || rec.Frequency == Year {
				span = 400 * 24 * time.Hour
			}
			after := start.Add(time.Duration(rng.Int64N(int64(span))) - time.Hour)
			if _, end := after.In(r.loc).ZoneBounds(); !end.IsZero() && rng.IntN(2) == 0 && end.Before(start.Add(span)) {
				after = end.Add(time.Duration(rng.IntN(6*60)-3*60) * time.Minute)
			}
			want := reference(r, rec, after)
			if want.IsZero() {
				continue // nothing within the reference's reach
			}
			if got := r.Next(after); !got.Equal(want) {
				t.Fatalf("%+v %+v start %v: Next(%v) = %v, want %v", rec, rec.Schedule, start, after, got, want)
			}
			compared++
		}
	}
	if compared < 500 {
		t.Fatalf("only %d answers compared", compared)
	}
}

// TestTemplateNextDST pins a few answers that cross offset changes far
// from the start, where a scattered query lands in a period the rule has
// not met before.
func TestTemplateNextDST(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no zone data:", err)
	}
	for _, tt := range []struct {
		name  string
		rec   *Recurrence
		start time.Time
		after time.Time
		want  time.Time
	}{
		// 2025-03-09 02:30 does not exist in New York: it runs at 03:30 EDT.
		{"spring gap", &Recurrence{Frequency: Day, TimeZone: "America/New_York"},
			time.Date(2020, 1, 1, 2, 30, 0, 0, ny), time.Date(2025, 3, 9, 6, 0, 0, 0, time.UTC), time.Date(2025, 3, 9, 7, 30, 0, 0, time.UTC)},
		// 2025-11-02 01:30 exists twice: it runs at the first, 01:30 EDT.
		{"fall overlap", &Recurrence{Frequency: Day, TimeZone: "America/New_York"},
			time.Date(2020, 1, 1, 1, 30, 0, 0, ny), time.Date(2025, 11, 2, 5, 0, 0, 0, time.UTC), time.Date(2025, 11, 2, 5, 30, 0, 0, time.UTC)},
		// From inside the repeated hour, the next 01:30 is the next day's.
		{"fall overlap, second pass", &Recurrence{Frequency: Day, TimeZone: "America/New_York"},
			time.Date(2020, 1, 1, 1, 30, 0, 0, ny), time.Date(2025, 11, 2, 6, 40, 0, 0, time.UTC), time.Date(2025, 11, 3, 6, 30, 0, 0, time.UTC)},
		// Every other week on Sunday at 02:00, counted from 2025-01-05:
		// 2025-03-02 and 2025-03-16 are selected, 2025-03-09 is not.
		{"interval skips the gap's week", &Recurrence{Frequency: Week, Interval: 2, TimeZone: "America/New_York",
			Schedule: &Schedule{WeekDays: []Weekday{Sunday}, Hours: []int{2}, Minutes: []int{0}}},
			time.Date(2025, 1, 5, 0, 0, 0, 0, ny), time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC), time.Date(2025, 3, 16, 6, 0, 0, 0, time.UTC)},
		// Every 90 minutes from midnight on the day of the gap: 01:30 EST,
		// then 03:00 EDT (reading 03:00; 02:00-02:59 does not exist).
		{"minutes across the gap", &Recurrence{Frequency: Minute, Interval: 90, TimeZone: "America/New_York",
			Schedule: &Schedule{Hours: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}}},
			time.Date(2025, 3, 9, 0, 0, 0, 0, ny), time.Date(2025, 3, 9, 6, 30, 0, 0, time.UTC), time.Date(2025, 3, 9, 7, 0, 0, 0, time.UTC)},
		// Every 45 minutes from midnight on the day of the gap, every hour
		// listed, so the hour is free: reading 02:15 does not exist and is
		// skipped; 01:30 EST is followed by 03:00 EDT, then 03:45 EDT.
		{"gap skips a free reading", &Recurrence{Frequency: Minute, Interval: 45, TimeZone: "America/New_York",
			Schedule: &Schedule{Hours: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}}},
			time.Date(2025, 3, 9, 0, 0, 0, 0, ny), time.Date(2025, 3, 9, 6, 30, 0, 0, time.UTC), time.Date(2025, 3, 9, 7, 0, 0, 0, time.UTC)},
		{"gap skips a free reading, then the cadence goes on", &Recurrence{Frequency: Minute, Interval: 45, TimeZone: "America/New_York",
			Schedule: &Schedule{Hours: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}}},
			time.Date(2025, 3, 9, 0, 0, 0, 0, ny), time.Date(2025, 3, 9, 7, 0, 0, 0, time.UTC), time.Date(2025, 3, 9, 7, 45, 0, 0, time.UTC)},
		// The same rule in the repeated hour: reading 01:30 runs at 01:30
		// EDT and again at 01:30 EST.
		{"repeated hour, second pass", &Recurrence{Frequency: Minute, Interval: 45, TimeZone: "America/New_York",
			Schedule: &Schedule{Hours: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}}},
			time.Date(2025, 11, 2, 0, 0, 0, 0, ny), time.Date(2025, 11, 2, 5, 30, 0, 0, time.UTC), time.Date(2025, 11, 2, 6, 30, 0, 0, time.UTC)},
		// Started at 03:10 EDT on the day of the gap: that day's 02:30 is a
		// reading before the start's, but it runs at 03:30 EDT, after the
		// start, so it is the first occurrence.
		{"reading before the start's", &Recurrence{Frequency: Day, TimeZone: "America/New_York",
			Schedule: &Schedule{Hours: []int{2}, Minutes: []int{30}}},
			time.Date(2025, 3, 9, 3, 10, 0, 0, ny), time.Date(2025, 3, 9, 6, 0, 0, 0, time.UTC), time.Date(2025, 3, 9, 7, 30, 0, 0, time.UTC)},
		// Lord Howe Island, 2025-10-05: 02:00 (+10:30) becomes 02:30
		// (+11:00). Reading 02:10 runs at 02:40, after reading 02:30.
		{"half-hour gap reorders readings", &Recurrence{Frequency: Month, TimeZone: "Australia/Lord_Howe",
			Schedule: &Schedule{MonthDays: []int{5}, Hours: []int{2}, Minutes: []int{10, 30}}},
			time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 10, 4, 15, 0, 0, 0, time.UTC), time.Date(2025, 10, 4, 15, 30, 0, 0, time.UTC)},
		{"half-hour gap, then the shifted reading", &Recurrence{Frequency: Month, TimeZone: "Australia/Lord_Howe",
			Schedule: &Schedule{MonthDays: []int{5}, Hours: []int{2}, Minutes: []int{10, 30}}},
			time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 10, 4, 15, 30, 0, 0, time.UTC), time.Date(2025, 10, 4, 15, 40, 0, 0, time.UTC)},
		{"half-hour gap, then the next month", &Recurrence{Frequency: Month, TimeZone: "Australia/Lord_Howe",
			Schedule: &Schedule{MonthDays: []int{5}, Hours: []int{2}, Minutes: []int{10, 30}}},
			time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 10, 4, 15, 40, 0, 0, time.UTC), time.Date(2025, 11, 4, 15, 10, 0, 0, time.UTC)},
		// Yearly on February 29: the next after 2025 is in 2028.
		{"leap day", &Recurrence{Frequency: Year},
			time.Date(2024, 2, 29, 9, 0, 0, 0, time.UTC), time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2028, 2, 29, 9, 0, 0, 0, time.UTC)},
		// The last Friday of every third month, counted from January 2025:
		// April 2025 is selected, and its last Friday is the 25th.
		{"last weekday, interval", &Recurrence{Frequency: Month, Interval: 3,
			Schedule: &Schedule{MonthlyOccurrences: []MonthlyOccurrence{{Day: Friday, Occurrence: -1}}, Hours: []int{8}, Minutes: []int{0}}},
			time.Date(2025, 1, 15, 0, 0, 0, 0, time.UTC), time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 4, 25, 8, 0, 0, 0, time.UTC)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Compile(tt.rec, tt.start)
			if err != nil {
				t.Fatal(err)
			}
			r.tpl.Store(r.buildTemplate())
			if !r.tpl.Load().ok {
				t.Fatal("no template")
			}
			if got := r.Next(tt.after); !got.Equal(tt.want) {
				t.Errorf("Next(%v) = %v, want %v", tt.after, got.UTC(), tt.want)
			}
			if got := expanded(t, tt.rec, tt.start).Next(tt.after); !got.Equal(tt.want) {
				t.Errorf("expanding: Next(%v) = %v, want %v", tt.after, got.UTC(), tt.want)
			}
		})
	}
}

// TestTemplateConcurrent calls Next on one rule from several goroutines
// with queries in different zone periods, so that they replace each
// other's remembered period; run it with -race.
func TestTemplateConcurrent(t *testing.T) {
	for _, rec := range []*Recurrence{
		{Frequency: Week, TimeZone: "Europe/Berlin", Schedule: &Schedule{
			WeekDays: []Weekday{Monday, Thursday, Sunday}, Hours: []int{1, 2, 3, 9}, Minutes: []int{0, 30}}},
		{Frequency: Month, TimeZone: "America/New_York", Schedule: &Schedule{
			MonthlyOccurrences: []MonthlyOccurrence{{Day: Sunday, Occurrence: 2}, {Day: Sunday, Occurrence: 1}}, Hours: []int{1, 2}, Minutes: []int{0, 30}}},
	} {
		start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
		r, err := Compile(rec, start)
		if err != nil {
			t.Fatal(err)
		}
		slow := expanded(t, rec, start)
		rng := rand.New(rand.NewPCG(7, 8))
		afters := make([]time.Time, 400)
		wants := make([]time.Time, len(afters))
		for i := range afters {
			afters[i] = randomAfter(rng, r, start)
			wants[i] = slow.Next(afters[i])
		}
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range afters {
					j := (i*7 + g*101) % len(afters)
					if got := r.Next(afters[j]); !got.Equal(wants[j]) {
						t.Errorf("%s: Next(%v) = %v, want %v", rec.Frequency, afters[j], got, wants[j])
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

// TestCalendarMonthShapes checks that months are told apart by their
// length as well as by the weekday they begin on: February 2024 and
// February 2029 both begin on a Thursday, but only the first has a 29th.
func TestCalendarMonthShapes(t *testing.T) {
	rec := &Recurrence{Frequency: Month, Schedule: &Schedule{MonthDays: []int{-1}, Months: []int{2}, Hours: []int{0}, Minutes: []int{0}}}
	r, err := Compile(rec, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	r.tpl.Store(r.buildTemplate())
	for _, tt := range []struct{ after, want time.Time }{
		{time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2029, 2, 28, 0, 0, 0, 0, time.UTC)},
		{time.Date(2029, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, 2, 28, 0, 0, 0, 0, time.UTC)},
		{time.Date(2035, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2036, 2, 29, 0, 0, 0, 0, time.UTC)},
	} {
		if got := r.Next(tt.after); !got.Equal(tt.want) {
			t.Errorf("Next(%v) = %v, want %v", tt.after, got, tt.want)
		}
	}
}

// TestDaysFromCivil checks the calendar arithmetic against package time.
func TestDaysFromCivil(t *testing.T) {
	for y := int64(-5); y < 2500; y += 3 {
		for m := int64(1); m <= 12; m++ {
			first := time.Date(int(y), time.Month(m), 1, 0, 0, 0, 0, time.UTC)
			if got, want := daysFromCivil(y, m, 1), civilDay(first); got != want {
				t.Fatalf("daysFromCivil(%d, %d, 1) = %d, want %d", y, m, got, want)
			}
			if got, want := monthDays(y, m), int64(first.AddDate(0, 1, -1).Day()); got != want {
				t.Fatalf("monthDays(%d, %d) = %d, want %d", y, m, got, want)
			}
		}
	}
}

// TestWindowEndKeepsDroppedOccurrences: a first window that reaches the
// endTime but is cut at its limit must not claim that nothing follows it.
// Yearly on March 7 at 04:59, 15:59 and 16:59 in Kolkata, ending in August
// 2025: 2025-03-07 16:59 is the fifth occurrence and is before the end.
func TestWindowEndKeepsDroppedOccurrences(t *testing.T) {
	ist, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Skip("no zone data:", err)
	}
	end := time.Date(2025, 8, 3, 16, 28, 35, 0, time.UTC)
	rec := &Recurrence{Frequency: Year, EndTime: &end, TimeZone: "Asia/Kolkata", Schedule: &Schedule{Hours: []int{15, 16, 4}}}
	start := time.Date(2024, 3, 7, 9, 29, 24, 0, time.UTC) // 14:59:24 IST: minute 59
	for _, r := range []*Rule{mustCompileRule(t, rec, start), expanded(t, rec, start)} {
		if got, want := r.Next(start), time.Date(2024, 3, 7, 15, 59, 0, 0, ist); !got.Equal(want) {
			t.Fatalf("Next(%v) = %v, want %v", start, got, want)
		}
		after := time.Date(2025, 3, 7, 15, 59, 0, 0, ist)
		if got, want := r.Next(after), time.Date(2025, 3, 7, 16, 59, 0, 0, ist); !got.Equal(want) {
			t.Errorf("Next(%v) = %v, want %v", after, got, want)
		}
	}
}

func mustCompileRule(t *testing.T, rec *Recurrence, start time.Time) *Rule {
	t.Helper()
	r, err := Compile(rec, start)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// FuzzTemplate compares a rule answered from its template with the same
// rule expanded by rrule-go on every call, for a random rule and zone
// (drawn from seed), a start and queries around offset changes.
func FuzzTemplate(f *testing.F) {
	f.Add(uint64(1), int64(0), int64(3600))
	f.Add(uint64(2), int64(86400*30), int64(-7200))
	f.Add(uint64(3), int64(86400*400), int64(60))
	f.Fuzz(func(t *testing.T, seed uint64, startOff, afterOff int64) {
		if startOff < 0 || startOff > 20*365*86400 || afterOff < -5*365*86400 || afterOff > 5*365*86400 {
			t.Skip()
		}
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		rec := randomRecurrence(rng)
		rec.TimeZone = templateZones[rng.IntN(len(templateZones))]
		start := time.Date(2009, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(startOff) * time.Second)
		if rng.IntN(2) == 0 {
			end := start.Add(time.Duration(rng.Int64N(int64(3 * 365 * 24 * time.Hour))))
			rec.EndTime = &end
		}
		r, err := Compile(rec, start)
		if err != nil {
			t.Skip()
		}
		r.tpl.Store(r.buildTemplate())
		slow := expanded(t, rec, start)
		after := start.Add(time.Duration(afterOff) * time.Second)
		for range 6 {
			got, want := r.Next(after), slow.Next(after)
			if !got.Equal(want) {
				t.Fatalf("%+v %+v start %v: Next(%v) = %v, want %v", rec, rec.Schedule, start, after, got, want)
			}
			if got.IsZero() {
				break
			}
			after = got
		}
		if _, end := after.In(r.loc).ZoneBounds(); !end.IsZero() {
			after = end.Add(time.Duration(afterOff%(4*3600)) * time.Second)
			if got, want := r.Next(after), slow.Next(after); !got.Equal(want) {
				t.Fatalf("%+v %+v start %v: Next(%v) = %v, want %v", rec, rec.Schedule, start, after, got, want)
			}
		}
	})
}
