// The types in this file mirror the JSON of the job definition's
// "recurrence" object. Enum values are accepted in any case on input and
// written back in their canonical spelling ("Week", "Monday").

package recurrence

import (
	"slices"
	"time"

	"github.com/jobclock/scheduler/internal/enum"
	"github.com/jobclock/scheduler/retry"
)

// Frequency is the unit of a recurrence: Second, Minute, Hour, Day, Week,
// Month or Year. Second is an extension beyond Azure Scheduler, whose plans
// run at most once a minute (see the package documentation). Values outside that set survive unmarshalling unchanged so that
// validation can report them; use [Frequency.Valid] to check.
type Frequency string

// The frequencies a recurrence may have, in their canonical spelling.
const (
	Second Frequency = "Second"
	Minute Frequency = "Minute"
	Hour   Frequency = "Hour"
	Day    Frequency = "Day"
	Week   Frequency = "Week"
	Month  Frequency = "Month"
	Year   Frequency = "Year"
)

var frequencies = []Frequency{Second, Minute, Hour, Day, Week, Month, Year}

// Valid reports whether f is one of the known frequencies in canonical
// spelling.
func (f Frequency) Valid() bool {
	for _, k := range frequencies {
		if f == k {
			return true
		}
	}
	return false
}

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given.
func (f *Frequency) UnmarshalJSON(b []byte) error { return enum.Unmarshal(b, f, frequencies) }

// Weekday is a day of the week in its canonical spelling ("Monday").
// Unknown values survive unmarshalling so that validation can report them;
// use [Weekday.Valid] to check.
type Weekday string

// The days of the week, in their canonical spelling.
const (
	Sunday    Weekday = "Sunday"
	Monday    Weekday = "Monday"
	Tuesday   Weekday = "Tuesday"
	Wednesday Weekday = "Wednesday"
	Thursday  Weekday = "Thursday"
	Friday    Weekday = "Friday"
	Saturday  Weekday = "Saturday"
)

var weekdays = []Weekday{Sunday, Monday, Tuesday, Wednesday, Thursday, Friday, Saturday}

// Valid reports whether d is a known day in canonical spelling.
func (d Weekday) Valid() bool {
	for _, k := range weekdays {
		if d == k {
			return true
		}
	}
	return false
}

// Time returns the [time.Weekday] of d; ok is false for an unknown day.
func (d Weekday) Time() (wd time.Weekday, ok bool) {
	for i, k := range weekdays {
		if d == k {
			return time.Weekday(i), true
		}
	}
	return 0, false
}

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given.
func (d *Weekday) UnmarshalJSON(b []byte) error { return enum.Unmarshal(b, d, weekdays) }

// Recurrence says how often a job repeats and when it stops. It is the
// "recurrence" object of a job definition.
type Recurrence struct {
	// Cron is a cron spec ("*/15 9-16 * * 1-5", see [ParseCron]) that
	// says when the job runs: an extension beyond Azure Scheduler.
	// When set, Frequency, Interval and Schedule (and TimeZone, for a
	// spec with a CRON_TZ= prefix) follow from it: left out, they are
	// filled in by [Recurrence.ExpandCron]; given, they must equal the
	// spec's. Count and EndTime apply as to any recurrence. Empty means
	// no spec.
	Cron string `json:"cron,omitempty"`
	// Frequency is the unit between occurrences. Required unless Cron
	// is set.
	Frequency Frequency `json:"frequency"`
	// Interval is the number of Frequency units between occurrences.
	// Zero means 1.
	Interval int32 `json:"interval,omitempty"`
	// Count is the number of occurrences that run, counted from the first
	// one that runs. Zero means no limit.
	Count int32 `json:"count,omitempty"`
	// EndTime is the last instant at which an occurrence may run
	// (inclusive). Nil means no end.
	EndTime *time.Time `json:"endTime,omitempty"`
	// TimeZone is the IANA (or Windows) name of the zone in which the
	// schedule's hours, minutes and days are evaluated. Empty means UTC.
	TimeZone string `json:"timeZone,omitempty"`
	// Schedule narrows or widens the occurrences within each period.
	// Nil means one occurrence per period, at the start's wall time.
	Schedule *Schedule `json:"schedule,omitempty"`
	// Extensions holds the members beyond Azure Scheduler that few
	// recurrences use (window, calendar, onExcluded), behind one pointer
	// so that a recurrence without them stays small; in JSON they are
	// members of the recurrence object itself. Nil means none of them:
	// read them with [Recurrence.Ext], which is nil-safe, since reading a
	// promoted member through a nil pointer panics.
	*Extensions
}

// Extensions are the members of a recurrence beyond Azure Scheduler that
// few recurrences use. The zero Extensions is no window and no calendar.
type Extensions struct {
	// Window spreads the job's occurrences over a span of time after
	// each scheduled instant: each occurrence runs at its scheduled
	// instant plus an offset in [0, Window) that the job's collection,
	// its name and the scheduled instant decide, the same on every
	// instance (see the package documentation, "Spreading"). It is a
	// whole number of seconds, shorter than the recurrence's interval.
	// Zero means no spreading.
	Window retry.Duration `json:"window,omitempty"`
	// Calendar names an exclusion calendar of the job's collection: the
	// occurrences whose scheduled instant it excludes are skipped or
	// moved as OnExcluded says (see the package documentation,
	// "Exclusion calendars"). Empty means none.
	Calendar string `json:"calendar,omitempty"`
	// OnExcluded says what becomes of an occurrence the calendar
	// excludes. Empty means OnExcludedSkip. It needs Calendar.
	OnExcluded OnExcluded `json:"onExcluded,omitempty"`
}

// Ext returns r's extensions: the zero Extensions when r (or its
// Extensions) is nil.
func (r *Recurrence) Ext() Extensions {
	if r == nil || r.Extensions == nil {
		return Extensions{}
	}
	return *r.Extensions
}

// Clone returns a deep copy of r; nil for a nil r.
func (r *Recurrence) Clone() *Recurrence {
	if r == nil {
		return nil
	}
	c := *r
	if r.EndTime != nil {
		c.EndTime = new(*r.EndTime)
	}
	c.Schedule = r.Schedule.Clone()
	if r.Extensions != nil {
		c.Extensions = new(*r.Extensions)
	}
	return &c
}

// Schedule is the "schedule" object of a recurrence: the seconds, minutes,
// hours, days and months at which a job runs within each period. Seconds
// is an extension beyond Azure Scheduler: without it a schedule runs on
// whole minutes (second 0), except at frequency Second, where it runs in
// every second its other fields allow.
type Schedule struct {
	Seconds            []int               `json:"seconds,omitempty"`
	Minutes            []int               `json:"minutes,omitempty"`
	Hours              []int               `json:"hours,omitempty"`
	WeekDays           []Weekday           `json:"weekDays,omitempty"`
	MonthDays          []int               `json:"monthDays,omitempty"`
	MonthlyOccurrences []MonthlyOccurrence `json:"monthlyOccurrences,omitempty"`
	Months             []int               `json:"months,omitempty"`
}

// Clone returns a deep copy of s; nil for a nil s. Empty lists stay
// empty (nil or not, as in s).
func (s *Schedule) Clone() *Schedule {
	if s == nil {
		return nil
	}
	return &Schedule{
		Seconds:            slices.Clone(s.Seconds),
		Minutes:            slices.Clone(s.Minutes),
		Hours:              slices.Clone(s.Hours),
		WeekDays:           slices.Clone(s.WeekDays),
		MonthDays:          slices.Clone(s.MonthDays),
		MonthlyOccurrences: slices.Clone(s.MonthlyOccurrences),
		Months:             slices.Clone(s.Months),
	}
}

// MonthlyOccurrence selects a weekday within a month: Occurrence 1 is the
// first such day, -1 the last; 0 (absent) means every such day of the month.
// It is written {"day": "Friday", "Occurrence": -1}, as the published
// OpenAPI definition of Microsoft.Scheduler 2016-03-01 and the Azure SDKs
// spell it; on input "occurrence", as the Azure documentation writes it,
// is the same key.
type MonthlyOccurrence struct {
	Day        Weekday `json:"day"`
	Occurrence int     `json:"Occurrence,omitempty"`
}

// FieldError is a problem with one field of a recurrence. Path is the JSON
// path within the recurrence object ("schedule.hours[1]"), Value the
// offending value as JSON text (empty when the field is missing), Reason
// what is wrong ("is not an hour (0-23)"). Paths spell members as the
// canonical form writes them, whatever the case of the input: in lower
// camel case, but for "Occurrence" ("schedule.monthlyOccurrences[0].Occurrence"),
// and a Reason that names another field names it by its path within the
// recurrence too ("repeats schedule.weekDays[1]"), which Refs holds.
type FieldError struct {
	Path   string
	Value  string
	Reason string
	// Refs are the paths of the other fields that Reason names, within
	// the recurrence as Path is, each written in Reason as here; nil
	// when it names none.
	Refs []string
}

func (e *FieldError) Error() string {
	if e.Value == "" {
		return e.Path + ": " + e.Reason
	}
	return e.Path + ": " + e.Value + " " + e.Reason
}
