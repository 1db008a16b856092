// Package recurrence_test compares jobclock's recurrence expansion with
// robfig/cron v3 on the same schedule and the same instants.
package recurrence_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/jobclock/scheduler/recurrence"
)

// The schedule: every 15 minutes on weekdays, 9:00 to 16:45 UTC.
const cronSpec = "*/15 9-16 * * 1-5"

var from = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// zone is where the zoned benchmarks evaluate the schedule: its clocks
// change twice a year, outside the scheduled hours.
const zone = "Europe/Berlin"

func jobclockRule(tb testing.TB) *recurrence.Rule { return jobclockRuleIn(tb, "") }

func jobclockRuleIn(tb testing.TB, tz string) *recurrence.Rule {
	tb.Helper()
	rule, err := recurrence.Compile(&recurrence.Recurrence{
		Frequency: recurrence.Week,
		TimeZone:  tz,
		Schedule: &recurrence.Schedule{
			WeekDays: []recurrence.Weekday{recurrence.Monday, recurrence.Tuesday, recurrence.Wednesday, recurrence.Thursday, recurrence.Friday},
			Hours:    []int{9, 10, 11, 12, 13, 14, 15, 16},
			Minutes:  []int{0, 15, 30, 45},
		},
	}, time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC))
	if err != nil {
		tb.Fatal(err)
	}
	return rule
}

func cronSchedule(tb testing.TB) cron.Schedule { return cronScheduleIn(tb, "") }

func cronScheduleIn(tb testing.TB, tz string) cron.Schedule {
	tb.Helper()
	spec := cronSpec
	if tz != "" {
		spec = "CRON_TZ=" + tz + " " + spec
	}
	s, err := cron.ParseStandard(spec)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// scattered returns instants a little over three days apart, so that
// consecutive calls cannot be answered from the previous call's work.
func scattered() []time.Time {
	out := make([]time.Time, 512)
	for i := range out {
		out[i] = from.Add(time.Duration(i) * (3*24*time.Hour + 7*time.Minute + 13*time.Second))
	}
	return out
}

// TestSameInstants makes sure both benchmarks ask the same questions and
// get the same answers.
func TestSameInstants(t *testing.T) {
	for _, tz := range []string{"", zone} {
		rule, sched := jobclockRuleIn(t, tz), cronScheduleIn(t, tz)
		a, b := from, from
		for range 5000 {
			a, b = rule.Next(a), sched.Next(b)
			if !a.Equal(b) {
				t.Fatalf("%q: jobclock %v, robfig/cron %v", tz, a, b)
			}
		}
		for _, after := range scattered() {
			if a, b := rule.Next(after), sched.Next(after); !a.Equal(b) {
				t.Fatalf("%q: Next(%v): jobclock %v, robfig/cron %v", tz, after, a, b)
			}
		}
	}
}

// BenchmarkWalk walks forward occurrence by occurrence from the same
// instant, as a scheduler does.
func BenchmarkWalk(b *testing.B) {
	b.Run("jobclock", func(b *testing.B) {
		rule := jobclockRule(b)
		b.ReportAllocs()
		t := from
		for b.Loop() {
			t = rule.Next(t)
		}
	})
	b.Run("robfig-cron", func(b *testing.B) {
		sched := cronSchedule(b)
		b.ReportAllocs()
		t := from
		for b.Loop() {
			t = sched.Next(t)
		}
	})
}

// BenchmarkScattered asks for the next occurrence after instants days
// apart, where no call can reuse the previous one's work.
func BenchmarkScattered(b *testing.B) {
	afters := scattered()
	b.Run("jobclock", func(b *testing.B) {
		rule := jobclockRule(b)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			rule.Next(afters[i%len(afters)])
			i++
		}
	})
	b.Run("robfig-cron", func(b *testing.B) {
		sched := cronSchedule(b)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			sched.Next(afters[i%len(afters)])
			i++
		}
	})
}

// BenchmarkScatteredZoned is BenchmarkScattered with the schedule
// evaluated in a zone whose clocks change.
func BenchmarkScatteredZoned(b *testing.B) {
	afters := scattered()
	b.Run("jobclock", func(b *testing.B) {
		rule := jobclockRuleIn(b, zone)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			rule.Next(afters[i%len(afters)])
			i++
		}
	})
	b.Run("robfig-cron", func(b *testing.B) {
		sched := cronScheduleIn(b, zone)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			sched.Next(afters[i%len(afters)])
			i++
		}
	})
}

// The same schedule as the recurrence JSON a user would write for it.
const jsonRecurrence = `{"frequency": "Week", "schedule": {"weekDays": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
	"hours": [9, 10, 11, 12, 13, 14, 15, 16], "minutes": [0, 15, 30, 45]}}`

// cronAndJSONRules compiles cronSpec as a cron spec (a recurrence that
// only has "cron", as a job definition may give it) and as JSON, in tz.
func cronAndJSONRules(tb testing.TB, tz string) (fromCron, fromJSON *recurrence.Rule) {
	tb.Helper()
	start := time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)
	var err error
	if fromCron, err = recurrence.Compile(&recurrence.Recurrence{Cron: cronSpec, TimeZone: tz}, start); err != nil {
		tb.Fatal(err)
	}
	var rec recurrence.Recurrence
	if err := json.Unmarshal([]byte(jsonRecurrence), &rec); err != nil {
		tb.Fatal(err)
	}
	rec.TimeZone = tz
	if fromJSON, err = recurrence.Compile(&rec, start); err != nil {
		tb.Fatal(err)
	}
	return fromCron, fromJSON
}

// TestCronSameAsJSON makes sure the cron benchmarks compare rules that
// give the same instants.
func TestCronSameAsJSON(t *testing.T) {
	for _, tz := range []string{"", zone} {
		c, j := cronAndJSONRules(t, tz)
		a, b := from, from
		for range 5000 {
			if a, b = c.Next(a), j.Next(b); !a.Equal(b) {
				t.Fatalf("%q: from cron %v, from JSON %v", tz, a, b)
			}
		}
	}
}

// BenchmarkCronNext measures Next on the rule compiled from cronSpec
// against the rule compiled from the same recurrence written as JSON:
// walking from one occurrence to the next, and scattered instants (also in
// a zone with clock changes).
func BenchmarkCronNext(b *testing.B) {
	afters := scattered()
	for _, tz := range []string{"", zone} {
		c, j := cronAndJSONRules(b, tz)
		for _, r := range []struct {
			name string
			rule *recurrence.Rule
		}{{"json", j}, {"cron", c}} {
			name := r.name
			if tz != "" {
				name += "-zoned"
			}
			b.Run("walk/"+name, func(b *testing.B) {
				b.ReportAllocs()
				t := from
				for b.Loop() {
					t = r.rule.Next(t)
				}
			})
			b.Run("scattered/"+name, func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					r.rule.Next(afters[i%len(afters)])
					i++
				}
			})
		}
	}
}

// BenchmarkParseCron measures parsing a spec into a recurrence (target:
// under 5 µs), next to robfig/cron's parser on the same spec.
func BenchmarkParseCron(b *testing.B) {
	for _, spec := range []string{cronSpec, "CRON_TZ=" + zone + " " + cronSpec, "0 0,12 1,15 */2 MON-FRI", "@daily"} {
		b.Run("jobclock/"+spec, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := recurrence.ParseCron(spec); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("robfig-cron/"+spec, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cron.ParseStandard(spec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
