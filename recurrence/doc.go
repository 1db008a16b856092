// Package recurrence holds the recurrence object of a job definition and turns
// it, together with the job's start, into the exact instants the job runs.
//
// [Recurrence.Validate] reports every problem of a recurrence at once, each a
// [*FieldError] naming its JSON path. [Compile] (or [CompileJob], for a
// recurrence whose instants depend on its job: see "Spreading") turns a
// valid recurrence and
// the instant its periods count from (the job's startTime, or its creation
// time when it has none) into a [Rule], whose [Rule.Next] and
// [Rule.Occurrences] give the instants the job runs. A Rule reads no clock:
// the caller passes "now" in.
//
// # Expansion
//
// A recurrence expands as an RFC 5545 RRULE does (the expansion is built on
// github.com/teambition/rrule-go): frequency is FREQ (Year is YEARLY),
// interval INTERVAL, seconds BYSECOND, minutes BYMINUTE, hours BYHOUR, weekDays BYDAY,
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
//   - with a schedule, occurrences fall on whole minutes (seconds zero)
//     unless it lists seconds or has frequency Second, and none is earlier
//     than the start; without one, the start's seconds are kept;
//   - seconds given and minutes not, with frequency Hour or coarser: every
//     minute (and, without hours, at Day or coarser, every hour), as
//     minutes without hours are every hour; at frequency Second, fields not
//     given take every value ({"frequency":"Second","interval":10,
//     "schedule":{"hours":[9]}} runs every 10 seconds from 09:00:00 to
//     09:59:50);
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
// months (Azure Scheduler's limits), 1000 for Second and 10 years (see
// [MaxInterval]).
//
// # Seconds
//
// Frequency Second, a schedule's seconds and six-field cron specs are
// extensions beyond Azure Scheduler, whose plans run a job at most once a
// minute (Free: once an hour). A job collection's quota decides:
// maxRecurrence {"frequency": "Second", "interval": 1} allows a job every
// second, and the plans' defaults refuse a job that runs seconds apart.
// The collection of the scheduler's Schedule method, "default", is created
// with that quota, so Schedule takes Every(10, Second) or
// Cron("*/10 * * * * *") as it is.
//
// # Time zones and daylight saving time
//
// The schedule is evaluated in the recurrence's timeZone: an IANA name such
// as "Europe/Paris", or a Windows name (CLDR's table) such as
// "W. Europe Standard Time" (see [LoadTimeZone]); without one, UTC. A
// name it does not know is an [UnknownTimeZoneError], which suggests the
// name likely meant ("europe/berlin": did you mean "Europe/Berlin"?)
// wherever a zone is read: a recurrence's timeZone, a calendar's, a cron
// spec's CRON_TZ, an iCalendar TZID and `jobclock next -tz`. The
// start's UTC offset only says which instant it is. Rules with a schedule,
// and Day, Week, Month and Year rules, name wall clock times, and what a
// daylight saving change does to a time depends on whether the schedule
// fixes its hour:
//
//   - A time whose hour is fixed (hours listing fewer than 24, or the
//     start's hour for Day and coarser rules without minutes) keeps its
//     wall clock time. When it does not exist (in a spring-forward gap) it
//     runs shifted by the gap, so 02:30 runs at 03:30, also on the start's
//     day when the recurrence starts between 03:00 and 03:30 (the shifted
//     run is the first schedule match at or after the start); when it
//     exists twice (fall-back) it runs once, at the first of the two
//     instants. A recurrence without a schedule whose start is the second
//     of the two runs first at its start, as every such recurrence does,
//     and at the first instant on the days after.
//   - A time whose hour the schedule does not fix (frequency Second, Minute
//     or Hour without hours; seconds or minutes without hours; hours
//     listing all 24; a cron spec with "*" or a step in its hour field)
//     keeps its cadence: in a
//     spring-forward gap the times that do not exist are skipped and the
//     cadence continues after the gap, and in a repeated hour it runs in
//     both passes. "Every 30 minutes" ({"frequency":"Hour","schedule":
//     {"minutes":[0,30]}} or "*/30 * * * *") runs every 30 minutes of
//     elapsed time through both changes in New York, where clocks move by
//     an hour at a whole hour. The interval of such a rule counts the
//     hours the clocks show, as "0 */2 * * *" does, not elapsed hours:
//     {"frequency":"Hour","interval":2,"schedule":{"minutes":[0]}} runs at
//     every second hour of the wall clock from the start's, so two runs
//     lie one or three real hours apart across a change in New York; an
//     Hour rule without a schedule steps in elapsed time.
//
// Second, Minute and Hour frequencies without a schedule step in elapsed
// time: every 15 minutes means every 15 real minutes, whatever the clocks
// do.
// [Rule.Shifted] reports whether an occurrence runs later than its
// schedule says because its wall time fell into such a gap, and
// [Rule.Repeated] whether it is the second pass of a repeated time.
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
// # Spreading
//
// Thousands of jobs at "0 * * * *" reach their targets in the same
// second. A recurrence's window, an extension beyond Azure Scheduler,
// spreads them deterministically:
//
//	"recurrence": {"frequency": "Hour", "schedule": {"minutes": [0]}, "window": "PT15M"}
//
// Each occurrence runs at its scheduled instant plus an offset in
// [0, window) that depends only on the job's collection, its name and the
// scheduled instant, so every scheduler instance, every preview
// ("jobclock next", the dashboard) and every test computes the same
// planned instant; unlike a random jitter, it can be shown ahead. The
// offset, in whole seconds, is a hash modulo the seconds of the span: the
// hash is MurmurHash3's fmix64 finalizer of FNV-1a (64 bits) of the
// collection's name, a zero byte, the job's name and a zero byte, XOR the
// scheduled instant as whole seconds since 1970 UTC (so that consecutive
// instants of one job get unrelated offsets); the span is the window, or the time to the next scheduled instant when
// that is shorter. Each planned instant therefore lies before the next
// scheduled one, and occurrences keep their order. Offsets are elapsed
// time: a window across a daylight saving change covers as many real
// seconds as any other, so a planned instant may read as a time of the
// repeated hour or one after a gap (a daily 01:30 in New York spread over
// two hours runs between 01:30 EDT and 02:30 EST on the day clocks go
// back).
//
// The window is a whole number of seconds, longer than zero and shorter
// than the recurrence's interval (interval times the frequency, a day
// counting as 24 hours, a month as 28 days and a year as 365); a schedule
// whose occurrences lie closer than the window (minutes 0 and 5 of every
// hour, spread over 10 minutes) spreads each over the time to the next.
// [CompileJob] compiles a job's recurrence with its names; [Compile] uses
// empty ones. [Rule.Next] returns planned instants, endTime applies to
// them, and a scheduler counts, starts, postpones and skips occurrences by
// them (count, catch-up windows, missed and overlapping occurrences);
// [Rule.Scheduled] returns the scheduled instant behind one.
//
// # Exclusion calendars
//
// [CompileExclusions] builds the compiled form of an exclusion calendar
// (holidays, change freezes): local dates, spans of local wall time (end
// excluded) and rules whose occurrences' local dates are excluded, all in
// one zone. [Exclusions.Excludes] tells whether an instant is excluded;
// [Exclusions.Place] says where an occurrence runs under an [OnExcluded]
// choice: not at all (Skip), or at the same wall time on the next
// (NextIncluded) or previous (PreviousIncluded) day the calendar does not
// exclude, looking at most [MaxMoveDays] days away; on a day the clocks
// change, that wall time runs as a time the schedule fixes does (shifted
// by a gap, at the first instant of a repeated hour). So "the last business
// day of the month" is monthDays [-1] placed with PreviousIncluded under a
// calendar of weekends and holidays. [Exclusions.Apply] gives a
// rule's occurrences under a calendar, a [Placement] (moved ones keep
// their order; two moved onto one instant run once), and
// [Placement.Skipped] counts the ones it drops; a job names its calendar with [Extensions] (Calendar,
// OnExcluded), the members of a recurrence that few use, behind one
// pointer so that a Recurrence stays 80 bytes. The days of the dates and rules are
// expanded 512 days at a time, when first asked about, and kept: asking
// costs a zone lookup and a bit test after that.
//
// # Descriptions
//
// [Recurrence.Describe] says a recurrence in plain English, taking from the
// start what the schedule leaves out: "every week on Monday, Wednesday and
// Friday at 10:00 and 22:00 (UTC), 10 times, until 4 Nov 2012", "every 15
// minutes from 09:00 to 16:45 on Monday to Friday (UTC)", "on the last
// Friday of every month at 05:15 (Europe/Berlin)", "every hour on the
// hour, spread over 15 minutes" (a window), "every hour at minute 18, by
// H for this job: minute 18" (H in a cron spec). Times are wall clock
// times in the zone named in parentheses, which also says what the zone's
// daylight saving changes do to them.
//
// # Cron specs
//
// [ParseCron] compiles a cron spec onto this model, and a recurrence's Cron
// field carries one in a job definition (an extension beyond Azure
// Scheduler; see [Recurrence.ExpandCron] for how it combines with the
// other fields). The dialect is robfig/cron v3's: five fields (minute, hour,
// day of month, month, day of week), or six with a seconds field first that
// must be 0; "*" and "?"; numbers and the names JAN-DEC and SUN-SAT in any
// case; ranges, steps ("*/15", "9-17/2", "5/10" for 5-59/10) and lists; the
// descriptors @yearly, @annually, @monthly, @weekly, @daily, @midnight,
// @hourly and @every; and a "CRON_TZ=Zone " or "TZ=Zone " prefix, which
// sets timeZone. Beyond robfig/cron it accepts 7 for Sunday, L and L-n in
// the day of month (the last day, n days before it) and 5L and 5#2 in the
// day of week (the last Friday, the second Friday), which monthDays and
// monthlyOccurrences express exactly.
//
// The recurrence runs at exactly the spec's instants whatever the start it
// is compiled with: its interval is 1, so every period runs, and every
// schedule field is given, so nothing defaults from the start. Its
// frequency is the shortest period the spec repeats in, so that it reads
// like the spec:
//
//	*/15 * * * *         Hour: minutes [0,15,30,45]
//	* * * * *            Minute: minutes 0 to 59
//	30 2 * * *           Day: hours [2], minutes [30]
//	0 9 * * 1-5          Week: weekDays Monday to Friday, hours [9], minutes [0]
//	*/15 9-16 * * 1-5    Week: the same days, hours 9 to 16, minutes [0,15,30,45]
//	0 0 1 */2 *          Month: monthDays [1], months [1,3,5,7,9,11], hours [0], minutes [0]
//	0 0 * 6 *            Month: monthDays 1 to 31, months [6]
//	0 0 13 * 5           Month: monthDays [13] and monthlyOccurrences [{Friday}]
//	0 18 * * 5L          Month: monthlyOccurrences [{Friday, -1}]
//	@yearly              Month: monthDays [1], months [1], hours [0], minutes [0]
//
// Hours are left out when the spec runs in every hour (minutes without
// hours mean every hour). "*/15" is not Minute with interval 15: without a
// schedule a Minute rule steps from the start, which would put the runs at
// :07, :22, ... for a job created at :07. @yearly is not Year, whose day
// of the month comes from the start. "0 0 1 */2 *" is not Month with
// interval 2, which would count months from the start's.
//
// H in any field is Jenkins' hash syntax: "H" is one value of the field
// (in the day of month one of 1 to 28, which every month has),
// "H(0-29)" one value of that range, "H/15" every 15th value from an
// offset below 15 ("H(0-29)/10" the same within the range). Each job
// gets its own values, so that jobs given the same spec ("H * * * *")
// run at different times: the value (or the offset) is a hash modulo the
// number of values (or the step), the hash being FNV-1a (64 bits) of the
// collection's name (as the scheduler names it; through the REST API,
// "subscription/resourceGroup/collection"), a zero byte, the job's name,
// a zero byte and the field's name ("seconds", "minutes", "hours", "day
// of month", "month", "day of week"), passed through MurmurHash3's fmix64
// finalizer. The spec thus compiles per job: [CompileJob] and
// [Recurrence.ExpandCronJob] take the job's names, and a scheduler stores
// the job's own values ("cron": "H * * * *" with "minutes": [18]); what
// knows no job ([ParseCron], [Recurrence.ExpandCron], a definition parsed
// alone) leaves the members that H decides out, and a value given for
// them is replaced by the job's. [Recurrence.DependsOnJob] tells such a
// recurrence (or one with a window) apart. H keeps the rest of the
// dialect's meaning: "H" in the hour field fixes the hour (daylight saving
// treats it as a number), "H/2" is a step. Words say the job's values:
// "every hour at minute 18, by H for this job: minute 18".
//
// Day of month and day of week follow robfig/cron: when either field is
// "*" or "?" (without a step, or with step 1), a day must match both; when
// both are restricted, a day matching either runs, which is the union of
// monthDays and monthlyOccurrences. A restricted field that covers every
// day ("1-31", "0-6") selects every day.
//
// "@every D" is Second, Minute or Hour (the largest that divides D) with
// interval D and no schedule: it steps in elapsed time from the job's
// start, as robfig/cron steps from when the entry is added. The first run
// is at the start, as for every recurrence without a schedule;
// robfig/cron's is one interval later. D must be a whole number of
// seconds, at most 1000 seconds, or whole minutes up to 1000 minutes, or
// whole hours up to 1000 hours.
//
// A six-field spec has a seconds field first, as robfig/cron's parser
// WithSeconds takes: "*/10 * * * * *" is Minute with seconds [0, 10, 20,
// 30, 40, 50] and every minute; a seconds field of 0 alone is the
// five-field spec.
//
// Refused, each with a [*CronError] naming the field: W (the weekday
// nearest a day), which no set of days expresses; L alone in the day of
// week; @every below a second or not in whole seconds; @reboot; a day of the month that occurs in none of the spec's
// months ("0 0 30 2 *"); values out of range, backward ranges ("22-2"),
// empty list elements and unknown names. A count or endTime given with a
// spec keeps its meaning: count counts the spec's runs from the first.
//
// # Cron and daylight saving time
//
// robfig/cron v3 finds the next time by stepping the fields of a wall
// clock reading, adding whole hours of elapsed time as it goes; around
// clock changes that skips and repeats runs. jobclock runs a spec by the
// rules above: a time whose hour the spec fixes runs once, shifted by the
// gap when it does not exist and at the first instant when it occurs
// twice; a time whose hour field is "*" or has a step is skipped in a gap
// and runs in both passes of a repeated hour.
// In UTC and in zones without daylight saving time the two give the same
// instants (a test compares them on thousands of random specs over a
// year). A test checks each row of this table (local times in the zone;
// "none" means no run that day) and that every difference on random specs
// around every clock change of 2026 and 2027 is of one of these kinds:
//
//	spec            zone                 local date  robfig/cron v3                              jobclock
//	30 2 * * *      Europe/Berlin        2026-03-29  none                                        03:30 CEST
//	*/20 2 * * *    Europe/Berlin        2026-03-29  none                                        03:00 CEST, 03:20 CEST, 03:40 CEST
//	30 2 * * *      Europe/Berlin        2026-10-25  02:30 CEST, 02:30 CET                       02:30 CEST
//	0 1-3 * * *     America/New_York     2026-11-01  01:00 EDT, 01:00 EST, 02:00 EST, 03:00 EST  01:00 EDT, 02:00 EST, 03:00 EST
//	0 1-3 * * *     America/New_York     2026-03-08  01:00 EST, 03:00 EDT                        01:00 EST, 03:00 EDT
//	0 0 * * *       America/Santiago     2026-09-06  none                                        01:00 -03
//	0 12 * * 6      America/Santiago     2026-09-06  12:00 -03                                   none
//	0 23 * * *      America/Santiago     2026-04-04  23:00 -03, 23:00 -04                        23:00 -03
//	15 2 * * *      Australia/Lord_Howe  2026-10-04  none                                        02:45 +11
//	45 1 * * *      Australia/Lord_Howe  2026-10-04  01:45 +1030, 02:45 +11                      01:45 +1030
//	45 1 * * *      Australia/Lord_Howe  2026-04-05  01:45 +11, 01:45 +1030                      01:45 +11
//	0 11 * * *      Australia/Lord_Howe  2026-04-05  none                                        11:00 +1030
//	30 1-3/2 * * *  America/New_York     2026-11-01  01:30 EDT, 01:30 EST, 03:30 EST             01:30 EDT, 01:30 EST, 03:30 EST
//	30 2-4/2 * * *  America/New_York     2026-03-08  04:30 EDT                                   04:30 EDT
//	20 0-4/2 * * *  Australia/Lord_Howe  2026-10-04  00:20 +1030, 04:20 +11                      00:20 +1030, 04:20 +11
//	40 1-3/2 * * *  Australia/Lord_Howe  2026-04-05  01:40 +11, 01:40 +1030, 03:40 +1030         01:40 +11, 01:40 +1030, 03:40 +1030
//
// The kinds: robfig/cron skips a fixed time in a gap (02:30 in Berlin on
// the spring change; jobclock runs it at 03:30), and runs a fixed time that
// occurs twice twice (02:30 on the autumn change). For a time whose hour is
// free the two agree: both skip it in a gap and run it in both passes of
// a repeated hour (an hourly spec runs 25 times that day). When the gap ends a run that exists anyway, both run
// once (New York's 02:00 in March becomes 03:00). After a change at
// midnight (Santiago), robfig/cron runs on a day the spec does not name: a
// Saturday spec runs on the Sunday. In a zone whose clocks change by half
// an hour (Lord Howe), its hour steps land on half hours, so it misses runs
// for up to a day after the change and runs at times the spec does not
// name (01:45 also at 02:45).
//
// # Cost
//
// [Rule.Next] costs the same however long ago the start was: it expands the
// rule from a point on the start's period grid close to the instant asked
// about, and keeps the occurrences it computed for the calls that follow.
// Once a rule is used beyond those, it expands its wall clock pattern once:
// one period for Second, Minute and Hour rules with a schedule and for Day
// and Week rules (an hour of them when the schedule leaves the hour free, a
// minute when it leaves the minute free too), and each kind of month (by month of the year, length and first
// weekday) for Month and Year rules. Every later call, for any instant, is
// then a search in that pattern and a conversion to the zone's time, well
// under a microsecond. The pattern is at most a few thousand readings; a
// rule scheduled every minute takes a few hundred microseconds to expand it.
package recurrence
