package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/recurrence"
)

// cronJob returns a job that runs at spec's instants in zone, for
// "jobclock next -cron". With asJSON it prints the recurrence the spec
// stands for instead and returns a nil job. On an invalid spec or zone it
// writes the problem to stderr, naming the flag, and returns a nil job
// and 1. A spec with H forms takes their values from the job named
// jobName in collection; without a jobName it is an error (exit 2).
func cronJob(spec, zone string, asJSON bool, collection, jobName string, stdout, stderr io.Writer) (*scheduler.Job, int) {
	parsed, err := recurrence.ParseCron(spec)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock next: -cron: %s\n", strings.TrimPrefix(err.Error(), "cron: "))
		return nil, 1
	}
	if parsed.DependsOnJob() && jobName == "" {
		fmt.Fprintln(stderr, jobNameNeeded)
		return nil, 2
	}
	if _, err := recurrence.LoadTimeZone(zone); err != nil {
		hint := ""
		if u, ok := errors.AsType[*recurrence.UnknownTimeZoneError](err); ok {
			hint = u.DidYouMean()
		}
		fmt.Fprintf(stderr, "jobclock next: -tz: %q is not a known time zone (an IANA name such as \"Europe/Paris\" or a Windows name such as \"W. Europe Standard Time\")%s\n", zone, hint)
		return nil, 1
	}
	r, err := (&recurrence.Recurrence{Cron: spec, TimeZone: zone}).ExpandCronJob(collection, jobName)
	if err != nil {
		// The spec parsed, so only -tz can disagree with it (CRON_TZ=).
		var fe *recurrence.FieldError
		if errors.As(err, &fe) {
			err = fmt.Errorf("-tz: %s %s", fe.Value, fe.Reason)
		}
		fmt.Fprintf(stderr, "jobclock next: %v\n", err)
		return nil, 1
	}
	if asJSON {
		plain := *r
		plain.Cron = "" // the recurrence in Azure Scheduler's terms, for any job definition
		out, err := json.MarshalIndent(&plain, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "jobclock next: %v\n", err)
			return nil, 1
		}
		fmt.Fprintf(stdout, "%s\n", flatArrays(out))
		return nil, 0
	}
	return &scheduler.Job{Recurrence: r}, 0
}

// cronOperand reports whether the operand of "jobclock next", which is
// not a file, is a cron spec given without -cron: it has spaces or starts
// with '@' ("0 9 * * *", "@daily"), and it parses. It returns an error
// that says to add -cron when it looks like a spec but does not parse.
func cronOperand(operand string) (bool, error) {
	if operand == "-" || !strings.ContainsAny(operand, " \t") && !strings.HasPrefix(operand, "@") {
		return false, nil
	}
	if _, err := os.Stat(operand); !errors.Is(err, fs.ErrNotExist) {
		return false, nil // a file, or a problem with one that reading it reports
	}
	if _, err := recurrence.ParseCron(operand); err != nil {
		return false, fmt.Errorf("%q is not a file, nor a cron spec (%s); preview a spec with -cron %q",
			operand, strings.TrimPrefix(err.Error(), "cron: "), operand)
	}
	return true, nil
}

// flatArray matches an array that holds no array or object.
var flatArray = regexp.MustCompile(`\[[^\[\]{}]*\]`)

// flatArrays puts each array of numbers or names in indented JSON on one
// line, [0, 15, 30, 45], rather than a line per value.
func flatArrays(b []byte) []byte {
	return flatArray.ReplaceAllFunc(b, func(a []byte) []byte {
		var out bytes.Buffer
		if json.Compact(&out, a) != nil {
			return a
		}
		return bytes.ReplaceAll(out.Bytes(), []byte(","), []byte(", "))
	})
}
