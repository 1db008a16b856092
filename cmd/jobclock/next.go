package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"slices"
	"strings"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/recurrence"
)

// droppedRead is how many occurrences a calendar drops next reads
// between two it lists: a calendar that excludes months of a job that
// runs every second costs no more than that to preview.
const droppedRead = 10_000

func nextCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("next", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 10, "how many occurrences to list (at least 1)")
	from := fs.String("from", "", "the job's creation time, ISO 8601 (default now)")
	spec := fs.String("cron", "", "preview a cron `SPEC` (\"*/15 9-16 * * 1-5\") instead of a job definition")
	tz := fs.String("tz", "", "with -cron: the time `ZONE` the spec runs in, IANA or Windows name (default UTC, or the spec's CRON_TZ=)")
	asJSON := fs.Bool("json", false, "with -cron: print the recurrence the spec stands for, as JSON, instead of occurrences")
	local := fs.Bool("local", false, "print the times in the job's time zone (recurrence.timeZone) instead of UTC")
	quiet := fs.Bool("q", false, "do not print the schedule in words on standard error")
	minRetry := addMinRetryFlag(fs)
	collection := fs.String("collection", scheduler.DefaultCollection, "the job collection's `NAME`, as the scheduler names it (through the REST API: SUBSCRIPTION/RESOURCEGROUP/COLLECTION): with -job, it decides a recurrence.window's offsets and what H in a cron spec stands for; default: the collection of a collection file")
	calFile := fs.String("calendar", "", "apply the exclusion calendar the job names (recurrence.calendar), read from `FILE`: a calendar's JSON ({\"properties\": {\"dates\": [...]}}) or a collection file of jobclock run with \"calendars\"; skipped, merged and moved occurrences are marked with its name")
	jobName := fs.String("job", "", "the job's `NAME`, which (with -collection) decides a recurrence.window's offsets and what H in a cron spec stands for; required with either, and with a collection file of jobclock run, whose job it chooses")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: jobclock next [-n N] [-from TIME] [-local] [-q] [-min-retry-interval D] [-calendar FILE] [-job NAME [-collection NAME]] FILE|-")
		fmt.Fprintln(stderr, "       jobclock next [-n N] [-from TIME] [-local] [-q] [-tz ZONE] [-json] [-job NAME [-collection NAME]] [-cron] SPEC")
		fs.PrintDefaults()
	}
	operands, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	cronSet := flagGiven(fs, "cron")
	if !cronSet && len(operands) == 1 {
		switch asCron, err := cronOperand(operands[0]); {
		case err != nil:
			fmt.Fprintf(stderr, "jobclock next: %v\n", err)
			return 1
		case asCron:
			*spec, cronSet, operands = operands[0], true, nil
		}
	}
	if cronSet != (len(operands) == 0) || len(operands) > 1 || !cronSet && (*tz != "" || *asJSON) {
		fs.Usage()
		return 2
	}
	if *n < 1 {
		fmt.Fprintf(stderr, "jobclock next: -n %d: must be at least 1\n", *n)
		return 2
	}
	created := time.Now().UTC()
	if *from != "" {
		t, err := scheduler.ParseTime(*from)
		if err != nil {
			fmt.Fprintf(stderr, "jobclock next: -from: %v\n", err)
			return 2
		}
		created = t
	}
	var job *scheduler.Job
	var code int
	if cronSet {
		job, code = cronJob(*spec, *tz, *asJSON, *collection, *jobName, stdout, stderr)
	} else {
		var coll string
		job, coll, code = loadJob(operands[0], *jobName, stdin, stderr, &scheduler.ParseOptions{Created: created, MinRetryInterval: *minRetry})
		if !flagGiven(fs, "collection") {
			*collection = coll
		}
	}
	if job == nil {
		return code
	}
	if job.Recurrence.DependsOnJob() {
		if *jobName == "" {
			fmt.Fprintln(stderr, jobNameNeeded)
			return 2
		}
		// H forms of a cron spec: the job's own values.
		r, err := job.Recurrence.ExpandCronJob(*collection, *jobName)
		if err != nil {
			fmt.Fprintf(stderr, "jobclock next: %v\n", err)
			return 1
		}
		job.Recurrence = r
	}
	calName := job.Recurrence.Ext().Calendar
	var excl *recurrence.Exclusions
	if *calFile != "" {
		if calName == "" {
			fmt.Fprintln(stderr, "jobclock next: -calendar: the job names no calendar (recurrence.calendar)")
			return 2
		}
		if excl, code = loadCalendar(*calFile, calName, stdin, stderr); excl == nil {
			return code
		}
	}
	timing, err := job.TimingUnder(*collection, *jobName, created, excl)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock next: %v\n", err)
		return 1
	}
	if !*quiet {
		fmt.Fprintln(stderr, "schedule:", job.Describe(created))
		for _, note := range policyNotes(job) {
			fmt.Fprintln(stderr, note)
		}
		if calName != "" && excl == nil {
			fmt.Fprintf(stderr, "calendar %q: not applied to the occurrences listed, as the scheduler applies it; give -calendar FILE to skip or move the ones it excludes\n", calName)
		}
	}
	loc := time.UTC
	if *local {
		loc = job.Location()
	}
	i := 0
	rule := timing.Rule()
	stamp := func(t time.Time) string { return t.In(loc).Format(time.RFC3339) }
	cal := fmt.Sprintf("(calendar %q)", calName)
	prev := created.Add(-time.Nanosecond)
	for at := range timing.Occurrences() {
		// The occurrences the calendar drops before this one, on lines
		// of their own, which -n does not count: a run of skipped ones
		// on one line, each merged one on its own; at most droppedRead
		// of them, and when there are more, the last line says so (as
		// the dashboard does). Each line is held until the next one, or
		// the end, shows whether it is the last.
		var held string
		drop := func(line string) {
			if held != "" {
				fmt.Fprintln(stdout, held)
			}
			held = line
		}
		var first, last time.Time
		k := 0
		skipped := func() {
			if k == 1 {
				drop(stamp(first) + "  skipped " + cal)
			} else if k > 1 {
				drop(fmt.Sprintf("%s  skipped, and %d more to %s %s", stamp(first), k-1, stamp(last), cal))
			}
			k = 0
		}
		read := 0
		for s, merged := range timing.Dropped(prev, at) {
			if read++; read > droppedRead {
				// s is one more, not listed.
				break
			}
			if !merged {
				if k == 0 {
					first = s
				}
				k, last = k+1, s
				continue
			}
			skipped()
			into := at
			if timing.OnExcluded() == recurrence.OnExcludedPreviousIncluded {
				into = prev
			}
			if into.Before(created) {
				drop(stamp(s) + "  skipped: moved before the first occurrence " + cal)
			} else {
				drop(stamp(s) + "  merged into " + stamp(into) + " " + cal)
			}
		}
		skipped()
		if read > droppedRead {
			held += "; more before the next occurrence are not listed"
		}
		if held != "" {
			fmt.Fprintln(stdout, held)
		}
		prev = at
		line := stamp(at)
		planned := at
		if from, moved := timing.Moved(at); moved {
			line += "  moved from " + stamp(from) + " " + cal
			planned = from
		}
		if rule != nil && rule.Window() > 0 {
			// The planned instant first, as without a window; the
			// scheduled one it was spread from next to it.
			line += "  scheduled " + stamp(rule.Scheduled(planned))
		}
		fmt.Fprintln(stdout, line)
		if i++; i == *n {
			break
		}
	}
	return 0
}

// overlapWords says what each overlap policy does to an occurrence that
// comes due while the previous one of the job is in progress.
var overlapWords = map[scheduler.OverlapPolicy]string{
	scheduler.OverlapPostpone:      " (one waits for the occurrence in progress, later ones merge into it)",
	scheduler.OverlapSkip:          " (skipped while the previous one is in progress)",
	scheduler.OverlapBufferAll:     fmt.Sprintf(" (each waits, in order, for the one in progress; at most %d wait)", scheduler.MaxBuffered),
	scheduler.OverlapAllowAll:      fmt.Sprintf(" (each starts on time, beside those in progress; at most %d at once)", scheduler.MaxRunning),
	scheduler.OverlapCancelRunning: " (cancels the one in progress)",
}

// loadCalendar reads the calendar name from the file path ("-": stdin):
// a calendar's JSON, or a collection file of run that holds it under
// "calendars", and compiles it. On failure it returns nil and the exit
// status, having said why on stderr.
func loadCalendar(path, name string, stdin io.Reader, stderr io.Writer) (*recurrence.Exclusions, int) {
	data, err := readInput(path, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock next: -calendar: %v\n", err)
		return nil, 1
	}
	var c *scheduler.Calendar
	if isCollectionFile(data) {
		f, err := readJobFile(path, bytes.NewReader(data), loadOptions(time.Second))
		if err != nil {
			printProblems(stderr, path+": ", err)
			return nil, 1
		}
		if c = f.calendars[name]; c == nil {
			fmt.Fprintf(stderr, "jobclock next: -calendar %s: the file holds no calendar %q (under \"calendars\")\n", path, name)
			return nil, 1
		}
	} else if c, err = scheduler.ParseCalendar(data); err != nil {
		printProblems(stderr, path+": ", err)
		return nil, 1
	}
	excl, err := c.Compile()
	if err != nil {
		printProblems(stderr, path+": ", err)
		return nil, 1
	}
	return excl, 0
}

// policyNotes says what the job's state and run policy do to the
// occurrences listed: a pause, and the policy in words.
func policyNotes(job *scheduler.Job) []string {
	var notes []string
	p := job.RunPolicy
	if p == nil {
		p = &scheduler.RunPolicy{}
	}
	if job.State == scheduler.JobDisabled {
		why := ""
		if job.StateReason != "" {
			why = " (" + job.StateReason + ")"
		}
		if t := job.ResumeTime; t != nil {
			notes = append(notes, fmt.Sprintf("paused until %s%s: the occurrences before it do not run on time; %s",
				t.UTC().Format(time.RFC3339), why, missedWords(p)))
		} else {
			notes = append(notes, "disabled"+why+": none of these runs until the job is enabled, which starts it from then")
		}
	}
	if job.RunPolicy != nil {
		var parts []string
		if p.Missed != "" {
			parts = append(parts, "missed "+string(p.Missed))
		}
		if p.CatchUpWindow != 0 {
			parts = append(parts, "catch-up window "+p.CatchUpWindow.String())
		}
		if p.Overlap != "" {
			parts = append(parts, "overlap "+string(p.Overlap)+overlapWords[p.Overlap])
		}
		if p.PauseAfterFaults != 0 {
			parts = append(parts, fmt.Sprintf("paused after %d consecutive faulted occurrences", p.PauseAfterFaults))
		}
		if len(parts) > 0 {
			notes = append(notes, "run policy: "+strings.Join(parts, ", ")+" (its collection's and the scheduler's settings fill in the rest)")
		}
	}
	return notes
}

// missedWords says what the missed policy p does when a job resumes.
func missedWords(p *scheduler.RunPolicy) string {
	window := ""
	if p.CatchUpWindow != 0 {
		window = ", except those later than " + p.CatchUpWindow.String() + ", which are skipped"
	}
	switch p.Missed {
	case scheduler.MissedSkip:
		w := "the scheduler's misfire threshold (1 minute by default)"
		if p.CatchUpWindow != 0 {
			w = p.CatchUpWindow.String()
		}
		return "when it resumes, they are skipped if the first is later than " + w + " (missed Skip)"
	case scheduler.MissedRunAll:
		return "when it resumes, each of them runs, one after the other" + window + " (missed RunAll)"
	}
	return "when it resumes, it runs once for them" + window + ", and the others are on record as Skipped (missed RunOnce, unless its collection or the scheduler says otherwise)"
}

// jobNameNeeded says why next needs -job.
var jobNameNeeded = fmt.Sprintf("jobclock next: the instants depend on the job's name and collection (its recurrence has a window, or H in its cron spec): give -job NAME (and -collection NAME, default %q)", scheduler.DefaultCollection)

// loadJob reads the file name ("-": standard input), a job definition or
// a collection file of jobclock run, and parses it with opts. It returns
// the job, the one of the collection file named jobName (which must then
// be given), and the name of its collection ("default" for a file of one
// job). On failure it writes the problems, or the names of the file's
// jobs to choose from, to stderr and returns a nil job and the exit
// status. Of a collection file it reports the problems of the file as a
// whole and of the job chosen, not those of its other jobs.
func loadJob(name, jobName string, stdin io.Reader, stderr io.Writer, opts *scheduler.ParseOptions) (*scheduler.Job, string, int) {
	f, err := readJobFile(name, stdin, opts)
	var unparsed []string // the file's jobs that do not parse
	if joined, ok := err.(interface{ Unwrap() []error }); ok && f != nil {
		var keep []error
		for _, e := range joined.Unwrap() {
			if j, ok := e.(*jobProblems); ok && j.name != jobName {
				unparsed = append(unparsed, j.name)
				continue
			}
			keep = append(keep, e)
		}
		err = errors.Join(keep...)
	}
	if err != nil {
		if _, unread := errors.AsType[*iofs.PathError](err); unread {
			fmt.Fprintf(stderr, "jobclock next: %v\n", err)
		} else {
			printProblems(stderr, "", err)
		}
		return nil, "", 1
	}
	if !f.holdsCollection {
		return f.jobs[0].job, f.collection, 0
	}
	names := unparsed
	for _, j := range f.jobs {
		if j.name == jobName {
			return j.job, f.collection, 0
		}
		names = append(names, j.name)
	}
	slices.Sort(names)
	what := "give -job NAME"
	if jobName != "" {
		what = fmt.Sprintf("-job %q is not one of them", jobName)
	}
	fmt.Fprintf(stderr, "jobclock next: %s holds the jobs %s of collection %q: %s\n", name, strings.Join(names, ", "), f.collection, what)
	return nil, "", 2
}
