package recurrence

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jobclock/scheduler/internal/names"
	"github.com/jobclock/scheduler/retry"
)

// MaxInterval returns the largest interval frequency f accepts, or 0 for an
// unknown frequency. Minute, Hour, Day, Week and Month follow Azure
// Scheduler (1000, 1000, 548 days, 78 weeks, 18 months); Second, an
// extension, takes 1000 as Minute and Hour do; Year, which Azure Scheduler
// lists but never bounded, is capped at 10.
func MaxInterval(f Frequency) int {
	switch f {
	case Second, Minute, Hour:
		return 1000
	case Day:
		return 548
	case Week:
		return 78
	case Month:
		return 18
	case Year:
		return 10
	}
	return 0
}

// Validate checks r and returns every problem at once, joined with
// [errors.Join]; each is a [*FieldError] whose Path is relative to the
// recurrence object ("schedule.hours[1]"). It returns nil when r is valid.
// A nil r is valid (it has nothing to check). Zero Interval and Count mean
// absent, and an empty schedule array is the same as an absent one.
//
// Beyond the ranges of each field, Validate enforces which schedule fields
// go with which frequency: weekDays needs Week; monthDays and
// monthlyOccurrences need Month; months needs Month or Year. A value listed
// twice in one array is rejected.
//
// A recurrence with a Cron spec needs no Frequency: Validate checks the
// spec and the fields given with it as [Recurrence.ExpandCron] does, then
// the recurrence the spec stands for.
func (r *Recurrence) Validate() error {
	_, err := r.resolve(noJob)
	return err
}

// resolve validates r and returns the recurrence it stands for: r itself,
// or r with its Cron spec expanded for the job whose identity is seed.
func (r *Recurrence) resolve(seed uint64) (*Recurrence, error) {
	if r == nil {
		return nil, nil
	}
	if r.Cron == "" {
		return r, errors.Join(r.check(false)...)
	}
	errs := r.check(true)
	x, err := r.expandCron(seed, true)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if errs := x.check(false); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return x, nil
}

// check returns the problems of r's fields. With cron set, the fields are
// those given next to a spec: a missing Frequency is no problem, and which
// schedule members go with which frequency is left to the comparison with
// the spec's.
func (r *Recurrence) check(cron bool) []error {
	var errs []error
	add := func(path, value, reason string) {
		errs = append(errs, &FieldError{Path: path, Value: value, Reason: reason})
	}
	// repeats adds the problem of the entry at path that repeats the one
	// at first.
	repeats := func(path, value, first string) {
		errs = append(errs, &FieldError{Path: path, Value: value, Reason: "repeats " + first, Refs: []string{first}})
	}
	switch {
	case r.Frequency == "" && cron:
	case r.Frequency == "":
		add("frequency", "", "is required (Second, Minute, Hour, Day, Week, Month or Year)")
	case !r.Frequency.Valid():
		add("frequency", jsonText(string(r.Frequency)), "is not a frequency (Second, Minute, Hour, Day, Week, Month or Year)")
	}
	if r.Interval < 0 {
		add("interval", strconv.Itoa(int(r.Interval)), "must be at least 1")
	} else if max := MaxInterval(r.Frequency); max > 0 && int(r.Interval) > max {
		add("interval", strconv.Itoa(int(r.Interval)), fmt.Sprintf("is more than %d, the most frequency %s allows", max, r.Frequency))
	}
	if r.Count < 0 {
		add("count", strconv.Itoa(int(r.Count)), "must be at least 1")
	}
	if w := r.Ext().Window; w != 0 && !cron {
		if reason := r.checkWindow(); reason != "" {
			add("window", strconv.Quote(w.String()), reason)
		}
	}
	if x := r.Ext(); !cron {
		if x.Calendar != "" && !names.Valid(x.Calendar) {
			add("calendar", jsonText(x.Calendar), "is not a calendar's name: 1 to 100 characters, starting with a letter, of letters, digits, '-' and '_'")
		}
		switch {
		case x.OnExcluded == "":
		case !x.OnExcluded.Valid():
			add("onExcluded", jsonText(string(x.OnExcluded)), "is not Skip, NextIncluded or PreviousIncluded")
		case x.Calendar == "":
			add("onExcluded", jsonText(string(x.OnExcluded)), "is given without calendar")
		}
	}
	if r.TimeZone != "" {
		if _, err := LoadTimeZone(r.TimeZone); err != nil {
			add("timeZone", jsonText(r.TimeZone), "is not a known time zone (an IANA name such as \"Europe/Paris\" or a Windows name such as \"W. Europe Standard Time\")"+zoneHint(err))
		}
	}
	if s := r.Schedule; s != nil {
		ints := func(name string, vals []int, ok func(int) bool, reason string) {
			// Values lie in -31..59 when valid: a bit set finds repeats
			// without a map.
			var seen [2]uint64
			for i, v := range vals {
				if !ok(v) {
					add(fmt.Sprintf("schedule.%s[%d]", name, i), strconv.Itoa(v), reason)
					continue
				}
				bit := uint(v + 64)
				if seen[bit/64]&(1<<(bit%64)) != 0 {
					j := slices.Index(vals, v)
					repeats(fmt.Sprintf("schedule.%s[%d]", name, i), strconv.Itoa(v), fmt.Sprintf("schedule.%s[%d]", name, j))
					continue
				}
				seen[bit/64] |= 1 << (bit % 64)
			}
		}
		ints("seconds", s.Seconds, func(v int) bool { return v >= 0 && v <= 59 }, "is not a second (0-59)")
		ints("minutes", s.Minutes, func(v int) bool { return v >= 0 && v <= 59 }, "is not a minute (0-59)")
		ints("hours", s.Hours, func(v int) bool { return v >= 0 && v <= 23 }, "is not an hour (0-23)")
		ints("monthDays", s.MonthDays, func(v int) bool { return v >= 1 && v <= 31 || v >= -31 && v <= -1 },
			"is not a day of the month (1 to 31, or -31 to -1 counting back from the last day)")
		ints("months", s.Months, func(v int) bool { return v >= 1 && v <= 12 }, "is not a month (1-12)")

		if len(s.WeekDays) > 7 {
			add("schedule.weekDays", "", fmt.Sprintf("has %d entries, more than the 7 days of a week", len(s.WeekDays)))
		}
		for i, d := range s.WeekDays {
			if !d.Valid() {
				add(fmt.Sprintf("schedule.weekDays[%d]", i), jsonText(string(d)), "is not a day of the week (Monday to Sunday)")
				continue
			}
			if j := slices.Index(s.WeekDays, d); j < i {
				repeats(fmt.Sprintf("schedule.weekDays[%d]", i), jsonText(string(d)), fmt.Sprintf("schedule.weekDays[%d]", j))
				continue
			}
		}
		type occKey struct {
			d Weekday
			n int
		}
		var seenOcc map[occKey]int
		for i, o := range s.MonthlyOccurrences {
			if seenOcc == nil {
				seenOcc = map[occKey]int{}
			}
			path := fmt.Sprintf("schedule.monthlyOccurrences[%d]", i)
			ok := true
			switch {
			case o.Day == "":
				add(path+".day", "", "is required (Monday to Sunday)")
				ok = false
			case !o.Day.Valid():
				add(path+".day", jsonText(string(o.Day)), "is not a day of the week (Monday to Sunday)")
				ok = false
			}
			if o.Occurrence < -5 || o.Occurrence > 5 {
				add(path+".Occurrence", strconv.Itoa(o.Occurrence), "is not an occurrence in a month (-5 to 5; 0 or absent means every such day)")
				ok = false
			}
			if !ok {
				continue
			}
			k := occKey{o.Day, o.Occurrence}
			if j, dup := seenOcc[k]; dup {
				repeats(path, "", fmt.Sprintf("schedule.monthlyOccurrences[%d]", j))
				continue
			}
			seenOcc[k] = i
		}

		if r.Frequency.Valid() && !cron {
			needs := func(name string, n int, allowed ...Frequency) {
				if n == 0 {
					return
				}
				for _, f := range allowed {
					if r.Frequency == f {
						return
					}
				}
				want := string(allowed[0])
				if len(allowed) == 2 {
					want += " or " + string(allowed[1])
				}
				add("schedule."+name, "", fmt.Sprintf("needs frequency %s, not %s", want, r.Frequency))
			}
			needs("weekDays", len(s.WeekDays), Week)
			needs("monthDays", len(s.MonthDays), Month)
			needs("monthlyOccurrences", len(s.MonthlyOccurrences), Month)
			needs("months", len(s.Months), Month, Year)
		}
	}
	return errs
}

// jsonText returns s as a JSON string literal.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// checkWindow returns what is wrong with r's Window, which is not zero;
// empty when nothing is.
func (r *Recurrence) checkWindow() string {
	w := time.Duration(r.Ext().Window)
	switch {
	case w < 0:
		return "is not longer than zero"
	case w%time.Second != 0:
		return "is not a whole number of seconds"
	}
	if !r.Frequency.Valid() {
		return ""
	}
	if p := shortestPeriod(r.Frequency, max(int64(r.Interval), 1)); w >= p {
		return fmt.Sprintf("is not shorter than the recurrence's interval (%s)", retry.Duration(p))
	}
	return ""
}

// shortestPeriod returns the shortest span that interval periods of f
// cover: a day counts as 24 hours, a month as 28 days and a year as 365.
func shortestPeriod(f Frequency, interval int64) time.Duration {
	unit := map[Frequency]time.Duration{
		Second: time.Second, Minute: time.Minute, Hour: time.Hour, Day: 24 * time.Hour,
		Week: 7 * 24 * time.Hour, Month: 28 * 24 * time.Hour, Year: 365 * 24 * time.Hour,
	}[f]
	return time.Duration(interval) * unit
}
