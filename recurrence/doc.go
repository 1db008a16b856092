// Package recurrence holds the recurrence object of a job definition and turns
// it, together with the job's start, into the exact instants the job runs.
//
// [Recurrence.Validate] reports every problem of a recurrence at once, each a
// [*FieldError] naming its JSON path. [Compile] turns a valid recurrence and
// the instant its periods count from (the job's startTime, or its creation
// time when it has none) into a [Rule], whose [Rule.Next] and
// [Rule.Occurrences] give the instants the job runs. A Rule reads no clock:
// the caller passes "now" in.
//
// # Expansion
//
// A recurrence expands as an RFC 5545 RRULE does (the expansion is built on
// github.com/teambition/rrule-go): frequency is FREQ (Year is YEARLY),
// interval INTERVAL, minutes BYMINUTE, hours BYHOUR, weekDays BYDAY,
// monthDays BYMONTHDAY (negative days count from the month's end),
// monthlyOccurrences BYDAY with an ordinal ({friday, -1} is -1FR, no
// occurrence means every such weekday) and months BYMONTH. Fields the
// schedule leaves out default from the start, as RRULE defaults from
// DTSTART: the start's minute, hour, weekday, day of the month and month.
// On top of RRULE, these rules of Azure Scheduler apply:
//
//   - minutes given and hours not, with frequency Day or coarser: every hour
//     of the day (the schedule {"minutes":[0,15,30,45]} runs every 15
//     minutes);
//   - with a schedule, occurrences fall on whole minutes (seconds zero), and
//     none is earlier than the start; without one, the start's seconds are
//     kept;
//   - monthDays and monthlyOccurrences together select the union of both
//     day sets;
//   - a day that does not exist in a month (31 in April, the 5th Friday of a
//     month that has four) is skipped, not moved; so is the start's day of
//     the month for monthly and yearly rules without days;
//   - interval counts periods from the one that holds the start, and weeks
//     start on Monday (every 2 weeks from a Sunday start runs that Sunday,
//     then in the week that begins 8 days later);
//   - weekDays needs frequency Week; monthDays and monthlyOccurrences need
//     Month; months needs Month or Year. [Compile] also rejects a schedule
//     that can never run (day 30 of February; every 30 minutes from minute
//     10 at minute 15).
//
// Interval is at most 1000 for Minute and Hour, 548 days, 78 weeks, 18
// months (Azure Scheduler's limits) and 10 years (see [MaxInterval]).
//
// # Time zones and daylight saving time
//
// The schedule is evaluated in the recurrence's timeZone: an IANA name such
// as "Europe/Paris", or a common Windows name such as
// "W. Europe Standard Time" (see [LoadTimeZone]); without one, UTC. The
// start's UTC offset only says which instant it is. Day, Week, Month and
// Year rules keep their wall clock time across daylight saving changes. A
// wall time that does not exist (in a spring-forward gap) runs at the same
// time shifted by the gap, so 02:30 runs at 03:30; a wall time that exists
// twice (fall-back) runs once, at the first of the two instants. Minute and
// Hour frequencies without a schedule step in elapsed time: every 15
// minutes means every 15 real minutes, whatever the clocks do. With a
// schedule they count on the wall clock like the coarser frequencies.
//
// # End and count
//
// endTime is inclusive: an occurrence at endTime runs, none after it. An
// endTime already in the past is valid; the recurrence has no occurrences.
// count is the number of occurrences that run, counted from the first one
// that runs: [Rule.Occurrences] applies it from the first occurrence it
// yields, while [Rule.Next] cannot know how many ran and ignores it. When
// both are given, whichever ends the recurrence first wins.
//
// [Rule.Shifted] reports whether an occurrence runs later than its
// schedule says because its wall time fell into such a gap.
//
// # Descriptions
//
// [Recurrence.Describe] says a recurrence in plain English, taking from the
// start what the schedule leaves out: "every week on Monday, Wednesday and
// Friday at 10:00 and 22:00 (UTC), 10 times, until 4 Nov 2012", "every 15
// minutes from 09:00 to 16:45 on Monday to Friday (UTC)", "on the last
// Friday of every month at 05:15 (Europe/Berlin)". Times are wall clock
// times in the zone named in parentheses, which also says what the zone's
// daylight saving changes do to them.
//
// # Cost
//
// [Rule.Next] costs the same however long ago the start was: it expands the
// rule from a point on the start's period grid close to the instant asked
// about, and keeps the occurrences it computed for the calls that follow.
// Once a rule is used beyond those, it expands its wall clock pattern once:
// one period for Minute and Hour rules with a schedule and for Day and Week
// rules, and each kind of month (by month of the year, length and first
// weekday) for Month and Year rules. Every later call, for any instant, is
// then a search in that pattern and a conversion to the zone's time, well
// under a microsecond. The pattern is at most a few thousand readings; a
// rule scheduled every minute takes a few hundred microseconds to expand it.
package recurrence
