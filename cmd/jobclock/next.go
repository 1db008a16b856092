package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

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
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: jobclock next [-n N] [-from TIME] [-local] [-q] FILE|-")
		fmt.Fprintln(stderr, "       jobclock next [-n N] [-from TIME] [-local] [-q] [-tz ZONE] [-json] [-cron] SPEC")
		fs.PrintDefaults()
	}
	operands, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	cronSet := false
	fs.Visit(func(f *flag.Flag) { cronSet = cronSet || f.Name == "cron" })
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
		job, code = cronJob(*spec, *tz, *asJSON, stdout, stderr)
	} else {
		job, code = loadJob(operands[0], stdin, stderr, "next", &scheduler.ParseOptions{Created: created})
	}
	if job == nil {
		return code
	}
	timing, err := job.Timing(created)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock next: %v\n", err)
		return 1
	}
	if !*quiet {
		fmt.Fprintln(stderr, "schedule:", job.Describe(created))
	}
	loc := time.UTC
	if *local {
		loc = job.Location()
	}
	i := 0
	for at := range timing.Occurrences() {
		fmt.Fprintln(stdout, at.In(loc).Format(time.RFC3339))
		if i++; i == *n {
			break
		}
	}
	return 0
}
