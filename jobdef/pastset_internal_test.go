package jobdef

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/teambition/rrule-go"
)

// TestPastSetAgreesWithProbe: a rule that pastSet says selects nothing
// with its BYSETPOS has no occurrence by the probe either, for random
// rules of every frequency whose positions lie around the bound pastSet
// computes (the sub-daily ones on one day a year, so that the probe of an
// empty one takes milliseconds, not seconds); and pastSet finds some of
// them, and passes some that do occur.
func TestPastSetAgreesWithProbe(t *testing.T) {
	rnd := rand.New(rand.NewPCG(13, 27))
	pick := func(n, lo, hi int, signed bool) []string {
		var out []string
		for range rnd.IntN(n + 1) {
			v := lo + rnd.IntN(hi-lo+1)
			if signed && rnd.IntN(3) == 0 {
				v = -v
			}
			out = append(out, fmt.Sprint(v))
		}
		return out
	}
	days := []string{"MO", "TU", "WE", "TH", "FR", "SA", "SU"}
	var flagged, occurs int
	for i := range 400 {
		freq := []string{"YEARLY", "MONTHLY", "WEEKLY", "DAILY", "HOURLY", "MINUTELY"}[i%6]
		parts := []string{"FREQ=" + freq}
		add := func(name string, vs []string) {
			if len(vs) > 0 {
				parts = append(parts, name+"="+strings.Join(vs, ","))
			}
		}
		switch freq {
		case "HOURLY", "MINUTELY":
			parts = append(parts, "BYMONTH=1", "BYMONTHDAY=1")
		default:
			add("BYMONTH", pick(2, 1, 12, false))
			add("BYMONTHDAY", pick(3, 1, 31, true))
			if rnd.IntN(4) == 0 {
				add("BYYEARDAY", pick(2, 1, 366, true))
			}
			var wd []string
			for range rnd.IntN(3) {
				wd = append(wd, days[rnd.IntN(7)])
			}
			add("BYDAY", wd)
			add("BYHOUR", pick(2, 0, 23, false))
		}
		add("BYMINUTE", pick(2, 0, 59, false))
		add("BYSECOND", pick(2, 0, 59, false))
		start := time.Date(2026, time.Month(1+rnd.IntN(12)), 1+rnd.IntN(28), rnd.IntN(24), rnd.IntN(60), 0, 0, time.UTC)
		opt, err := rrule.StrToROptionInLocation(strings.Join(parts, ";"), time.UTC)
		if err != nil {
			t.Fatalf("%s: %v", strings.Join(parts, ";"), err)
		}
		opt.Dtstart, opt.Until = start, icalUntil
		rule, err := rrule.NewRRule(*opt)
		if err != nil {
			continue // a BYxxx out of bounds
		}
		// Positions around the bound: a rule without BYSETPOS passes.
		o := rule.Options
		o.Bysetpos = []int{366}
		most := 366
		if why := pastSet(&o); why != "" {
			if _, err := fmt.Sscanf(why[strings.LastIndex(why, "(")+1:], "%d)", &most); err != nil {
				t.Fatalf("pastSet = %q: %v", why, err)
			}
		}
		for range 1 + rnd.IntN(2) {
			p := max(1, min(366, most-1+rnd.IntN(3)))
			if rnd.IntN(2) == 0 {
				p = -p
			}
			opt.Bysetpos = append(opt.Bysetpos, p)
		}
		if rule, err = rrule.NewRRule(*opt); err != nil {
			t.Fatalf("%v: %v", opt.Bysetpos, err)
		}
		text := rule.OrigOptions.RRuleString()
		why := pastSet(&rule.Options)
		has := probe(opt)
		switch {
		case why != "" && has:
			t.Errorf("pastSet(%s from %v) = %q, but the probe finds an occurrence", text, start, why)
		case why != "":
			flagged++
		case has:
			occurs++
		}
	}
	t.Logf("flagged %d, occurs %d", flagged, occurs)
	if flagged < 40 || occurs < 40 {
		t.Errorf("of 400 rules, pastSet found %d without an occurrence and passed %d that occur; want at least 40 of each", flagged, occurs)
	}
}
