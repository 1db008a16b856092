package recurrence

import (
	"fmt"
	"math"
)

// The constructors below build the recurrences Go programs ask for most,
// for Scheduler.Schedule and job definitions written in Go. Each returns a
// new Recurrence that can be changed further (Count, EndTime, Schedule)
// before it is used; its hours and days are in UTC unless [Recurrence.In]
// names a zone. Values out of range are reported, with their paths, when
// the job is put.

// Every returns a recurrence that repeats every n units of f (Second,
// Minute, Hour, Day, Week, Month or Year), counted from the job's start:
// its startTime, or when it was put. Every(15, Minute) runs four times an
// hour, Every(10, Second) six times a minute (a collection's quota must
// allow seconds: see the package documentation). It panics if n is less
// than 1.
func Every(n int, f Frequency) *Recurrence {
	if n < 1 {
		panic(fmt.Sprintf("recurrence: Every(%d, %s): n must be at least 1", n, f))
	}
	return &Recurrence{Frequency: f, Interval: int32(min(n, math.MaxInt32))}
}

// Hourly returns a recurrence that runs every hour at the given minute.
func Hourly(minute int) *Recurrence {
	return &Recurrence{Frequency: Hour, Schedule: &Schedule{Minutes: []int{minute}}}
}

// Daily returns a recurrence that runs every day at hour:minute.
func Daily(hour, minute int) *Recurrence {
	return &Recurrence{Frequency: Day, Schedule: &Schedule{Hours: []int{hour}, Minutes: []int{minute}}}
}

// Weekly returns a recurrence that runs at hour:minute on each of days,
// such as Weekly(9, 30, Monday, Thursday). With no days it runs on the
// weekday of the start (the job's startTime, or its creation time), as a
// Week recurrence without weekDays does: Weekly(9, 0) put on a Wednesday
// runs on Wednesdays.
func Weekly(hour, minute int, days ...Weekday) *Recurrence {
	return &Recurrence{Frequency: Week, Schedule: &Schedule{Hours: []int{hour}, Minutes: []int{minute}, WeekDays: days}}
}

// Monthly returns a recurrence that runs at hour:minute on the given day
// of each month: 1 to 31, or -1 for the last day (a month without the day,
// such as the 31st of April, is skipped).
func Monthly(day, hour, minute int) *Recurrence {
	return &Recurrence{Frequency: Month, Schedule: &Schedule{Hours: []int{hour}, Minutes: []int{minute}, MonthDays: []int{day}}}
}

// In sets the time zone, an IANA name such as "Europe/Berlin" (or a
// Windows one), in which r's hours, minutes and days are read, and returns
// r: Daily(2, 30).In("Europe/Berlin") runs at 02:30 Berlin time, with the
// package's rules for daylight saving time.
func (r *Recurrence) In(zone string) *Recurrence {
	r.TimeZone = zone
	return r
}

// Cron returns a recurrence given by a cron spec, such as
// Cron("*/15 9-16 * * 1-5") or Cron("CRON_TZ=Europe/Berlin 30 2 * * *"):
// the spec is kept in [Recurrence.Cron] and expanded when the job is put,
// where a bad spec is reported with its field (see [ParseCron] for the
// dialect and the rules). Use ParseCron to check a spec at once.
func Cron(spec string) *Recurrence {
	return &Recurrence{Cron: spec}
}
