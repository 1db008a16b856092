package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"log/slog"
	"maps"
	"slices"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/names"
	"github.com/jobclock/scheduler/store/memory"
)

func validateCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	minRetry := addMinRetryFlag(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: jobclock validate [-min-retry-interval D] FILE|-...")
		fs.PrintDefaults()
	}
	operands, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	if len(operands) == 0 {
		fs.Usage()
		return 2
	}
	if stdins := len(operands) - len(slices.DeleteFunc(slices.Clone(operands), func(o string) bool { return o == "-" })); stdins > 1 {
		fmt.Fprintln(stderr, "jobclock validate: - (standard input) may be given once")
		return 2
	}
	// The files are put, as run puts them, into a scheduler of their
	// own, in memory and never started: what run refuses at load
	// (quotas, an action's rules that only its executor knows), validate
	// refuses.
	reg := executors(scheduler.DefaultActionTimeout)
	defer reg.Close(context.Background())
	s, err := scheduler.New(memory.New(), &scheduler.Config{
		Logger: slog.New(slog.DiscardHandler), MinRetryInterval: *minRetry, Executors: reg})
	if err != nil {
		fmt.Fprintf(stderr, "jobclock validate: %v\n", err)
		return 2
	}
	popts := loadOptions(*minRetry)
	code := 0
	for _, name := range operands {
		f, err := readJobFile(name, stdin, popts)
		if f != nil {
			err = fileProblems(context.Background(), s, f, err)
		}
		if err != nil {
			prefix := name + ": "
			if len(operands) == 1 {
				prefix = ""
			}
			if _, unread := errors.AsType[*iofs.PathError](err); unread {
				fmt.Fprintf(stderr, "jobclock validate: %v\n", err) // it names the file
			} else {
				printProblems(stderr, prefix, err)
			}
			code = 1
			continue
		}
		if len(operands) > 1 {
			fmt.Fprintf(stdout, "%s: ", name)
		}
		fmt.Fprintln(stdout, "ok")
	}
	return code
}

// fileProblems returns every problem of f, a file that readJobFile read
// with the problems read: those, and the problems of putting what it
// could read through s (the jobs that parsed, but for those naming a
// calendar the file lacks or could not read). The problems of the file
// as a whole come first, in the order found, then those of each job, by
// the job's name. A file whose collection name is not valid is not put.
func fileProblems(ctx context.Context, s *scheduler.Scheduler, f *jobFile, read error) error {
	errs := []error{read, f.checkCalendars()}
	if names.Valid(f.collection) {
		_, err := putFile(ctx, s, f.checkable())
		errs = append(errs, err)
	}
	var whole []error
	jobs := map[string][]error{}
	for _, err := range errs {
		list := []error{err}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			if _, one := err.(*jobProblems); !one {
				list = j.Unwrap()
			}
		}
		for _, e := range list {
			switch e := e.(type) {
			case nil:
			case *jobProblems:
				jobs[e.name] = append(jobs[e.name], e.errs...)
			default:
				whole = append(whole, e)
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(jobs)) {
		whole = append(whole, jobs[n]...)
	}
	return errors.Join(whole...)
}
