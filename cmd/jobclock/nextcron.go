package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/recurrence"
)

// cronJob returns a job that runs at spec's instants in zone, for
// "jobclock next -cron". With asJSON it prints the recurrence the spec
// stands for instead and returns a nil job. On an invalid spec or zone it
// writes one line per problem to stderr and returns a nil job and 1.
func cronJob(spec, zone string, asJSON bool, stdout, stderr io.Writer) (*scheduler.Job, int) {
	if _, err := recurrence.ParseCron(spec); err != nil {
		fmt.Fprintf(stderr, "jobclock next: -cron: %s\n", strings.TrimPrefix(err.Error(), "cron: "))
		return nil, 1
	}
	r := &recurrence.Recurrence{Cron: spec, TimeZone: zone}
	if err := r.Validate(); err != nil {
		for _, e := range flatten(err) {
			var fe *recurrence.FieldError
			switch {
			case !errors.As(e, &fe):
				fmt.Fprintf(stderr, "jobclock next: %v\n", e)
			case fe.Path == "timeZone":
				fmt.Fprintf(stderr, "jobclock next: -tz: %s %s\n", fe.Value, fe.Reason)
			default:
				fmt.Fprintf(stderr, "jobclock next: %v\n", fe)
			}
		}
		return nil, 1
	}
	r, _ = r.ExpandCron()
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

// flatten lists the leaves of an error joined with errors.Join.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
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
