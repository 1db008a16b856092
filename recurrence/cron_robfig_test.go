package recurrence_test

// Differential tests against robfig/cron v3: the same specs must give the
// same instants wherever clocks do not change, and where they do change,
// every difference must be one that the package documentation lists.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	cron "github.com/robfig/cron/v3"

	"github.com/jobclock/scheduler/recurrence"
)

var (
	monthNames = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	dayNames   = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
)

// randomCronSpec returns a spec in the dialect that both robfig/cron's
// standard parser and ParseCron take: fields of *, ?, numbers, names,
// ranges, steps and lists, or a descriptor.
func randomCronSpec(rng *rand.Rand) string {
	if rng.IntN(25) == 0 {
		return []string{"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}[rng.IntN(7)]
	}
	return strings.Join([]string{
		randomCronField(rng, 0, 59, nil, 6),
		randomCronField(rng, 0, 23, nil, 3),
		randomCronField(rng, 1, 31, nil, 2),
		randomCronField(rng, 1, 12, monthNames, 2),
		randomCronField(rng, 0, 6, dayNames, 2),
	}, " ")
}

// runnableCronSpec returns a random spec that runs at all. Specs whose days
// of the month occur in none of their months are refused by ParseCron, and
// robfig/cron must then find no time for them either.
func runnableCronSpec(t *testing.T, rng *rand.Rand) string {
	t.Helper()
	for {
		spec := randomCronSpec(rng)
		_, err := recurrence.ParseCron(spec)
		if err == nil {
			return spec
		}
		if !strings.Contains(err.Error(), "so the spec never runs") {
			t.Fatalf("ParseCron(%q): %v", spec, err)
		}
		sched, err := cron.ParseStandard("CRON_TZ=UTC " + spec)
		if err != nil {
			t.Fatalf("robfig/cron ParseStandard(%q): %v", spec, err)
		}
		if next := sched.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); !next.IsZero() {
			t.Fatalf("ParseCron(%q) says it never runs; robfig/cron runs it at %v", spec, next)
		}
	}
}

// randomCronField returns a field for values lo..hi; the larger sparse
// is, the less often the field is "*".
func randomCronField(rng *rand.Rand, lo, hi int, names []string, sparse int) string {
	val := func() string {
		v := lo + rng.IntN(hi-lo+1)
		if names != nil && rng.IntN(3) == 0 {
			n := names[v-lo]
			if rng.IntN(2) == 0 {
				n = strings.ToUpper(n)
			}
			return n
		}
		return fmt.Sprint(v)
	}
	item := func() string {
		switch k := rng.IntN(10); {
		case k < 2:
			star := "*"
			if rng.IntN(4) == 0 {
				star = "?"
			}
			if rng.IntN(2) == 0 {
				return fmt.Sprintf("%s/%d", star, 1+rng.IntN(hi-lo+1))
			}
			return star
		case k < 6:
			return val()
		case k < 8:
			a := lo + rng.IntN(hi-lo+1)
			b := a + rng.IntN(hi-a+1)
			s := fmt.Sprintf("%d-%d", a, b)
			if rng.IntN(2) == 0 {
				s += fmt.Sprintf("/%d", 1+rng.IntN(hi-lo+1))
			}
			return s
		default:
			return fmt.Sprintf("%s/%d", val(), 1+rng.IntN(hi-lo+1))
		}
	}
	if rng.IntN(sparse) == 0 {
		return "*"
	}
	items := []string{item()}
	for rng.IntN(3) == 0 {
		items = append(items, item())
	}
	return strings.Join(items, ",")
}

// robfigParser is robfig/cron's standard parser that also takes a seconds
// field first, as its WithSeconds parser does.
var robfigParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// pair compiles spec with ParseCron in zone (empty: UTC) from start, and
// parses it with robfig/cron in the same zone.
func pair(t *testing.T, spec, zone string, start time.Time) (*recurrence.Rule, cron.Schedule) {
	t.Helper()
	r, err := recurrence.ParseCron(spec)
	if err != nil {
		t.Fatalf("ParseCron(%q): %v", spec, err)
	}
	r.TimeZone = zone
	rule, err := recurrence.Compile(r, start)
	if err != nil {
		t.Fatalf("Compile(%q): %v", spec, err)
	}
	z := zone
	if z == "" {
		z = "UTC"
	}
	sched, err := robfigParser.Parse("CRON_TZ=" + z + " " + spec)
	if err != nil {
		t.Fatalf("robfig/cron Parse(%q): %v", spec, err)
	}
	return rule, sched
}

// TestCronMatchesRobfig runs thousands of random specs from random starts
// for a year in zones whose clocks never change, and checks that jobclock
// and robfig/cron give the same instants: each walked from the start (the
// first 200 occurrences, or all of the year's when fewer) and the next
// occurrence after 10 instants scattered over the year.
func TestCronMatchesRobfig(t *testing.T) {
	specs, walk, probes := 2000, 200, 10
	if testing.Short() {
		specs = 300
	}
	zones := []string{"", "Asia/Kolkata", "Asia/Kathmandu", "America/Phoenix"}
	rng := rand.New(rand.NewPCG(14, 1))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range specs {
		spec := runnableCronSpec(t, rng)
		zone := zones[i%len(zones)]
		start := base.Add(time.Duration(rng.Int64N(int64(60 * 24 * time.Hour))))
		end := start.AddDate(1, 0, 0)
		rule, sched := pair(t, spec, zone, start)
		sameAsRobfig(t, rng, spec, zone, rule, sched, start, end, walk, probes)
	}
}

// sameAsRobfig checks that rule and sched give the same instants from
// start to end: walked from the start (walk occurrences at most) and the
// next one after probes instants scattered in between.
func sameAsRobfig(t *testing.T, rng *rand.Rand, spec, zone string, rule *recurrence.Rule, sched cron.Schedule, start, end time.Time, walk, probes int) {
	t.Helper()
	a := start.Add(-time.Nanosecond)
	b := a
	for range walk {
		a, b = rule.Next(a), sched.Next(b)
		if !a.Equal(b) {
			t.Fatalf("%q in %q from %v: jobclock %v, robfig/cron %v", spec, zone, start, a, b)
		}
		if a.IsZero() || a.After(end) {
			break
		}
	}
	for range probes {
		p := start.Add(time.Duration(rng.Int64N(int64(end.Sub(start)))))
		if a, b := rule.Next(p), sched.Next(p); !a.Equal(b) {
			t.Fatalf("%q in %q from %v: Next(%v): jobclock %v, robfig/cron %v", spec, zone, start, p, a, b)
		}
	}
}

// TestCronSecondsMatchesRobfig is TestCronMatchesRobfig for robfig/cron's
// six-field dialect, with a seconds field first, over a few days.
func TestCronSecondsMatchesRobfig(t *testing.T) {
	specs, walk, probes := 400, 300, 20
	if testing.Short() {
		specs = 60
	}
	zones := []string{"", "Asia/Kolkata", "America/Phoenix"}
	rng := rand.New(rand.NewPCG(14, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range specs {
		spec := randomCronField(rng, 0, 59, nil, 3) + " " + runnableCronSpec(t, rng)
		if strings.Contains(spec, "@") {
			continue
		}
		zone := zones[i%len(zones)]
		start := base.Add(time.Duration(rng.Int64N(int64(60 * 24 * time.Hour))))
		end := start.AddDate(0, 0, 5)
		rule, sched := pair(t, spec, zone, start)
		sameAsRobfig(t, rng, spec, zone, rule, sched, start, end, walk, probes)
	}
}

// TestCronEveryMatchesRobfig checks @every: both step in elapsed time, also
// across a daylight saving change. jobclock's first run is at the start,
// robfig/cron's one interval after it (it has no start of its own: it
// counts from when the entry is added).
func TestCronEveryMatchesRobfig(t *testing.T) {
	for _, d := range []string{"1s", "10s", "1m30s", "1000s", "1m", "7m", "15m", "1h30m", "2h", "36h", "1000h"} {
		for _, zone := range []string{"", "Europe/Berlin"} {
			spec := "@every " + d
			start := time.Date(2026, 3, 28, 22, 13, 5, 0, time.UTC)
			rule, sched := pair(t, spec, zone, start)
			if got := rule.Next(start.Add(-time.Nanosecond)); !got.Equal(start) {
				t.Errorf("%s: first run %v, want the start %v", spec, got, start)
			}
			a, b := start, start
			for range 200 {
				a, b = rule.Next(a), sched.Next(b)
				if !a.Equal(b) {
					t.Fatalf("%s in %q: jobclock %v, robfig/cron %v", spec, zone, a, b)
				}
			}
		}
	}
}

// dstZones are zones whose clocks change: by an hour in either
// hemisphere, by half an hour (Lord Howe), and at midnight (Santiago).
var dstZones = []string{"Europe/Berlin", "America/New_York", "Australia/Sydney", "Australia/Lord_Howe", "America/Santiago"}

// transitions returns the instants in year y at which loc's offset
// changes.
func transitions(loc *time.Location, y int) []time.Time {
	var out []time.Time
	t := time.Date(y, 1, 1, 0, 0, 0, 0, loc)
	end := time.Date(y+1, 1, 1, 0, 0, 0, 0, loc)
	for t.Before(end) {
		_, e := t.ZoneBounds()
		if e.IsZero() || !e.Before(end) {
			break
		}
		_, o1 := t.Zone()
		_, o2 := e.Zone()
		if o1 != o2 {
			out = append(out, e)
		}
		t = e
	}
	return out
}

// wallInstant is the instant at which loc's clocks read the given wall
// time, by the documented rule: a reading in a spring-forward gap is moved
// forward by the gap (shifted is then true); a reading that occurs twice is
// the first of the two (repeated is then the second).
func wallInstant(loc *time.Location, y int, mo time.Month, d, h, mi int) (at time.Time, shifted bool, repeated time.Time) {
	w := time.Date(y, mo, d, h, mi, 0, 0, time.UTC)
	var found []time.Time
	for _, probe := range []time.Time{w.Add(-36 * time.Hour), w.Add(36 * time.Hour)} {
		_, off := probe.In(loc).Zone()
		c := w.Add(-time.Duration(off) * time.Second)
		if cw := c.In(loc); cw.Hour() == h && cw.Minute() == mi && cw.Day() == d && !slices.ContainsFunc(found, c.Equal) {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		_, before := w.Add(-36 * time.Hour).In(loc).Zone()
		return w.Add(-time.Duration(before) * time.Second), true, time.Time{}
	case 1:
		return found[0], false, time.Time{}
	}
	slices.SortFunc(found, time.Time.Compare)
	return found[0], false, found[1]
}

// cronDays returns robfig/cron's own reading of the spec's days: whether
// the spec runs on the given date.
func cronDays(t *testing.T, sched cron.Schedule) (*cron.SpecSchedule, func(y int, mo time.Month, d int) bool) {
	t.Helper()
	s, ok := sched.(*cron.SpecSchedule)
	if !ok {
		t.Fatalf("robfig/cron schedule %T is not a *SpecSchedule", sched)
	}
	const star = 1 << 63
	return s, func(y int, mo time.Month, d int) bool {
		if s.Month&(1<<uint(mo)) == 0 {
			return false
		}
		wd := time.Date(y, mo, d, 12, 0, 0, 0, time.UTC).Weekday()
		domMatch, dowMatch := s.Dom&(1<<uint(d)) != 0, s.Dow&(1<<uint(wd)) != 0
		if s.Dom&star != 0 || s.Dow&star != 0 {
			return domMatch && dowMatch
		}
		return domMatch || dowMatch
	}
}

// cronHourFree reports whether a spec leaves the hour free, read from its
// text: "*", "?" or a step in the hour field, or a field that names every
// hour.
func cronHourFree(spec string, s *cron.SpecSchedule) bool {
	f := strings.Fields(spec)
	if len(f) == 5 && strings.ContainsAny(f[1], "*?/") {
		return true
	}
	return s.Hour&(1<<24-1) == 1<<24-1
}

// expected lists the instants in [from, to] at which the spec runs by the
// documented rules, from robfig/cron's own reading of the fields (so it
// checks jobclock's expansion, not its parser). A spec whose hour is fixed
// runs a reading in a gap shifted by the gap and one that occurs twice at
// the first instant; a spec whose hour is free (cronHourFree) skips a
// reading in a gap and runs one that occurs twice at both instants.
// shifted holds the instants that come only from readings in a gap;
// repeats the second instants of readings that occur twice and run once.
func expected(t *testing.T, spec string, sched cron.Schedule, loc *time.Location, from, to time.Time) (list []time.Time, shifted, repeats map[int64]bool) {
	t.Helper()
	s, runs := cronDays(t, sched)
	free := cronHourFree(spec, s)
	real := map[int64]bool{}
	shifted, repeats = map[int64]bool{}, map[int64]bool{}
	for day := from.In(loc).AddDate(0, 0, -1); !day.After(to.In(loc).AddDate(0, 0, 1)); day = day.AddDate(0, 0, 1) {
		y, mo, d := day.Date()
		if !runs(y, mo, d) {
			continue
		}
		for h := range 24 {
			for mi := range 60 {
				if s.Hour&(1<<uint(h)) == 0 || s.Minute&(1<<uint(mi)) == 0 {
					continue
				}
				at, gap, rep := wallInstant(loc, y, mo, d, h, mi)
				switch {
				case free && gap:
					continue
				case free && !rep.IsZero():
					if !rep.Before(from) && !rep.After(to) {
						real[rep.Unix()] = true
					}
				case !rep.IsZero():
					repeats[rep.Unix()] = true
				}
				if at.Before(from) || at.After(to) {
					continue
				}
				if gap {
					shifted[at.Unix()] = true
				} else {
					real[at.Unix()] = true
				}
			}
		}
	}
	for u := range real {
		delete(shifted, u)
		list = append(list, time.Unix(u, 0).UTC())
	}
	for u := range shifted {
		list = append(list, time.Unix(u, 0).UTC())
	}
	slices.SortFunc(list, time.Time.Compare)
	return list, shifted, repeats
}

// between lists next's instants in [from, to].
func between(next func(time.Time) time.Time, from, to time.Time) []time.Time {
	var out []time.Time
	for at := next(from.Add(-time.Nanosecond)); !at.IsZero() && !at.After(to); at = next(at) {
		out = append(out, at.UTC())
	}
	return out
}

func unixSet(list []time.Time) map[int64]bool {
	m := make(map[int64]bool, len(list))
	for _, t := range list {
		m[t.Unix()] = true
	}
	return m
}

// TestCronDaylightSaving runs random specs, and the documented ones,
// across every clock change of 2026 and 2027 in zones with daylight saving
// time. It checks that jobclock runs exactly as the documented rules say (a
// wall time whose hour the spec fixes runs once, shifted by the gap when
// it does not exist and at the first instant when it occurs twice; one
// whose hour is free is skipped in a gap and runs at both instants of a
// repeated hour), and that each instant where robfig/cron differs is of a
// kind the documentation lists: robfig/cron skips a fixed time in a gap,
// runs a fixed time that occurs twice twice, misses runs in the day after
// a change by half an hour, or, shortly after a change, runs at a time the
// spec does not name.
func TestCronDaylightSaving(t *testing.T) {
	specs := 120
	if testing.Short() {
		specs = 40
	}
	rng := rand.New(rand.NewPCG(14, 2))
	list := []string{"30 2 * * *", "*/20 2 * * *", "0 1-3 * * *", "15 2 * * *", "45 1 * * *", "0 0 * * *", "0 12 * * 6", "0 11 * * *", "0 23 * * *", "@hourly", "*/15 * * * *",
		"*/30 * * * *", "*/20 * * * 0", "10,40 */2 * * *", "0-59/7 0-23 * * *"}
	for range specs {
		list = append(list, runnableCronSpec(t, rng))
	}
	kinds := map[string]int{}
	for _, zone := range dstZones {
		loc, trs := clockChanges(t, zone)
		for _, spec := range list {
			for _, tr := range trs {
				from, to := tr.Add(-30*time.Hour), tr.Add(30*time.Hour)
				_, before := tr.Add(-time.Second).In(loc).Zone()
				_, after := tr.In(loc).Zone()
				halfHour := before-after == 1800 || after-before == 1800
				rule, sched := pair(t, spec, zone, from)
				s, runs := cronDays(t, sched)
				named := func(l time.Time) bool {
					return runs(l.Date()) && s.Hour&(1<<uint(l.Hour())) != 0 && s.Minute&(1<<uint(l.Minute())) != 0
				}
				want, shifted, repeats := expected(t, spec, sched, loc, from, to)
				got := between(rule.Next, from, to)
				if !slices.EqualFunc(want, got, time.Time.Equal) {
					t.Fatalf("%q in %s around %v:\n jobclock %v\n     want %v", spec, zone, tr, got, want)
				}
				theirs := between(sched.Next, from, to)
				ours, their := unixSet(got), unixSet(theirs)
				soon := func(at time.Time) bool { return !at.Before(tr) && at.Before(tr.Add(48*time.Hour)) }
				for _, at := range got {
					switch u := at.Unix(); {
					case their[u]:
					case shifted[u]:
						kinds["skips a time in a gap"]++
					case halfHour && soon(at):
						kinds["misses runs after a change by half an hour"]++
					default:
						t.Errorf("%q in %s: jobclock runs at %v and robfig/cron does not, for no documented reason", spec, zone, at)
					}
				}
				for _, at := range theirs {
					switch u := at.Unix(); {
					case ours[u]:
					case repeats[u]:
						kinds["runs a repeated time twice"]++
					case soon(at) && !named(at.In(loc)):
						kinds["runs at a time the spec does not name, after a change"]++
					default:
						t.Errorf("%q in %s: robfig/cron runs at %v and jobclock does not, for no documented reason", spec, zone, at)
					}
				}
			}
		}
	}
	if len(kinds) != 4 {
		t.Errorf("differences found: %v; the specs should show all four kinds", kinds)
	}
	t.Logf("%d specs in %d zones, differences where robfig/cron: %v", len(list), len(dstZones), kinds)
}

// TestCronDaylightSavingTable checks the table of the package
// documentation row by row: on the given local date, the instants
// robfig/cron v3 gives and the ones jobclock gives.
func TestCronDaylightSavingTable(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^//\t(\S.*?)  +(\S+/\S+)  +(\d{4}-\d\d-\d\d)  +(.*?)  +(\S.*)$`)
	rows := row.FindAllStringSubmatch(string(doc), -1)
	if len(rows) < 6 {
		t.Fatalf("found %d rows of the daylight saving table in doc.go, want at least 6", len(rows))
	}
	for _, m := range rows {
		spec, zone, date, wantTheirs, wantOurs := m[1], m[2], m[3], m[4], m[5]
		t.Run(spec+" "+zone+" "+date, func(t *testing.T) {
			loc, err := time.LoadLocation(zone)
			if err != nil {
				t.Fatal(err)
			}
			day, err := time.ParseInLocation("2006-01-02", date, loc)
			if err != nil {
				t.Fatal(err)
			}
			from, to := day.Add(-12*time.Hour), day.Add(36*time.Hour)
			rule, sched := pair(t, spec, zone, from)
			show := func(next func(time.Time) time.Time) string {
				var out []string
				for _, at := range between(next, from, to) {
					if l := at.In(loc); l.Format("2006-01-02") == date {
						out = append(out, l.Format("15:04 MST"))
					}
				}
				if len(out) == 0 {
					return "none"
				}
				return strings.Join(out, ", ")
			}
			if got := show(sched.Next); got != wantTheirs {
				t.Errorf("robfig/cron: %s, the table says %s", got, wantTheirs)
			}
			if got := show(rule.Next); got != wantOurs {
				t.Errorf("jobclock: %s, the table says %s", got, wantOurs)
			}
		})
	}
}
