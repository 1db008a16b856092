package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

func validateCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, "Usage: jobclock validate FILE|-") }
	operands, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	if len(operands) != 1 {
		fs.Usage()
		return 2
	}
	// A job without startTime counts from its creation: now, as when it
	// is put.
	job, code := loadJob(operands[0], stdin, stderr, "validate", &scheduler.ParseOptions{Created: time.Now()})
	if job == nil {
		return code
	}
	fmt.Fprintln(stdout, "ok")
	return 0
}

// loadJob reads and parses the job in name with opts. On failure it writes
// the problems to stderr and returns a nil job and the exit status.
func loadJob(name string, stdin io.Reader, stderr io.Writer, cmd string, opts *scheduler.ParseOptions) (*scheduler.Job, int) {
	data, err := readInput(name, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "jobclock %s: %v\n", cmd, err)
		return nil, 1
	}
	job, err := scheduler.ParseJob(data, opts)
	if err != nil {
		printProblems(stderr, err)
		return nil, 1
	}
	return job, 0
}

// printProblems writes one line per problem in err.
func printProblems(w io.Writer, err error) {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			printProblems(w, e)
		}
		return
	}
	var ve *scheduler.ValidationError
	var se *scheduler.SyntaxError
	switch {
	case errors.As(err, &ve):
		fmt.Fprintln(w, ve.Error())
	case errors.As(err, &se):
		fmt.Fprintln(w, se.Error())
	default:
		fmt.Fprintln(w, err)
	}
}
