// Command jobclock checks job definitions, lists when they would run, runs
// them, and serves the management REST API.
//
// Usage:
//
//	jobclock validate [-min-retry-interval D] FILE|-...
//	jobclock next [-n N] [-from TIME] [-local] [-q] [-min-retry-interval D] [-calendar FILE] [-job NAME [-collection NAME]] FILE|-
//	jobclock next [-n N] [-from TIME] [-local] [-q] [-tz ZONE] [-json] [-job NAME [-collection NAME]] [-cron] SPEC
//	jobclock run [flags] FILE...
//	jobclock serve [flags]
//	jobclock reseal (-db FILE | -postgres DSN) [-key-file NEW] [-old-key-file OLD]...
//	jobclock keygen FILE
//	jobclock version
//	jobclock help
//
// validate checks each FILE as run would load it: a job definition or a
// collection file (see "jobclock run -h"), with the same options (retries
// as often as -min-retry-interval, 15s by default). It prints "ok" for a
// valid file; for an invalid one it prints one line per problem to
// standard error, "PATH: message" (or "line L, column C: message" for
// input that is not JSON), where PATH is the JSON path in the file
// ("jobs.hello.action.type"). Given several files, it puts "FILE: " before
// each line. It exits 1 when a file is invalid. A name close to the one
// expected gets a "did you mean" (action.request.urii: unknown field, did
// you mean "uri"?). Each file is then put, as run puts it, into a
// scheduler of validate's own in memory (never started; the files one
// after the other, as run loads them), so that what run refuses at load
// validate refuses too: a job more frequent than its collection's
// maxRecurrence (at the job's recurrence), more jobs than its maxJobCount
// (at the job; both with "quota ... exceeded"), an action that its
// executor refuses (a Storage Queue name).
// In a collection file, a job that names a calendar the file does not
// hold under "calendars" is a problem at its recurrence.calendar; a file
// of one job goes into the collection "default", made as the library
// makes it (scheduler.DefaultCollectionDefinition: the Standard plan's 50
// jobs, and a job as often as every second), which holds no calendar, so
// it may name none. (run into a database leaves a stored "default", and
// the stored collection of a collection file without "collection"
// properties, as it is, and checks the jobs against it at the commit.) A collection file is put even when some
// of its jobs do not parse, so that one run reports every problem: those
// of the file as a whole, then each job's by the job's name, what does
// not parse and what putting the jobs that do refuses (a job naming a
// calendar that does not parse is not put).
//
// next prints the first N (default 10) occurrences the job would run if it
// were created at TIME (default now); FILE is a job definition or a
// collection file of run, whose job -job NAME chooses (without it, or with
// a name the file does not hold, next exits 2 naming the file's jobs) and
// whose collection is the default of -collection. It prints them one per
// line in RFC 3339 with seconds, in UTC (with -local, in the job's time
// zone, with its offset).
// It prints fewer lines when the job ends sooner (count, endTime), and none
// when it never runs. TIME is ISO 8601 as in job definitions
// ("2026-01-05T09:00Z", "2026-01-05"); a job without startTime counts its
// periods from it, and so does the check that its schedule can run at all.
// Unless -q is given, the schedule in words goes to standard error first
// ("schedule: every week on Monday at 10:00 (UTC)"). An invalid job exits
// 1 with the same lines as validate, which checks a job as if created now;
// of a collection file, only the problems of the file as a whole and of
// the job chosen count, not those of its other jobs.
// A job whose recurrence has a window runs each occurrence at a planned
// instant, its scheduled one plus an offset that the job's name and
// collection decide, and H in a cron spec stands for values they decide:
// next needs -job NAME (and -collection NAME, "default" by default; through
// the REST API a collection is named SUBSCRIPTION/RESOURCEGROUP/COLLECTION)
// for either, exits 2 without, and with a window prints the planned
// instant followed by "  scheduled " and the scheduled one.
//
// next -cron SPEC previews a cron spec ("*/15 9-16 * * 1-5", with an
// optional CRON_TZ= prefix) instead of a job: the occurrences of a job
// whose recurrence is that spec, run in ZONE (-tz, an IANA or Windows
// name; UTC by default). With -json it prints the recurrence the spec
// stands for, as Azure Scheduler JSON (frequency, timeZone, schedule), so a
// crontab line can become a job definition; a job definition may also
// carry the spec itself as recurrence.cron. An invalid spec exits 1 with
// the field at fault ("-cron: field 2 (hours): 24 is out of range 0-23").
// An operand that is no file but has spaces or starts with '@' ("0 9 * *
// *", "@daily") is taken as a spec, as if given with -cron.
//
// run loads job definitions into an embedded scheduler, runs them and
// prints each history entry as a JSON line; serve runs the scheduler with
// the Azure Scheduler management REST API and the web dashboard at /ui/
// (see "jobclock run -h" and "jobclock serve -h"). Both store the secrets
// of job definitions sealed with a key from -key-file, the
// JOBCLOCK_SECRETS_KEY environment variable, or (with SQLite) the file
// DB.key next to the database, created when missing.
//
// reseal seals every secret stored in a database with a new key, for key
// rotation (see "jobclock reseal -h"); keygen writes a new key file.
//
// version prints the module version, the commit jobclock was built from
// (when the build stamped one) and the version of the library it embeds.
//
// FILE "-" reads standard input. Exit status 2 means a usage error; 1 an
// invalid job or an unreadable file.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `Usage:
  jobclock validate [-min-retry-interval D] FILE|-...
                                               check job definitions or collection files as run loads them
                                               (retries as often as D, 15s by default); prints ok or one line per problem
  jobclock next [-n N] [-from TIME] [-local] [-q] [-min-retry-interval D] [-calendar FILE] [-job NAME [-collection NAME]] FILE|-
                                               list the next N (default 10) occurrences of a job created at TIME (default now)
                                               (FILE: a job, or a collection file of run whose job -job NAME chooses),
                                               after its schedule in words (on stderr; -q: not); -local: in the job's zone;
                                               -calendar: the exclusion calendar the job names, read from FILE;
                                               -job: the job's name, which a recurrence.window's offsets and cron H depend on
  jobclock next [-tz ZONE] [-json] [-job NAME] [-cron] SPEC
                                               the same for a cron spec ("0 9 * * *"); -json prints the recurrence it stands for
  jobclock run [flags] FILE...                 run jobs in an embedded scheduler (see jobclock run -h)
  jobclock serve [flags]                       run the scheduler with its REST API and dashboard (see jobclock serve -h)
  jobclock reseal (-db FILE | -postgres DSN) [-key-file NEW] [-old-key-file OLD]...
                                               seal every stored secret with the key NEW (see jobclock reseal -h)
  jobclock keygen FILE                         write a new secrets key to FILE (mode 0600)
  jobclock version                             print the version, and the commit jobclock was built from when
                                               the build stamped one
  jobclock help                                show this text

FILE - reads standard input. Times are ISO 8601 ("2026-01-05T09:00Z"); occurrences print in UTC.
`

// run is the whole command: it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "validate":
		return validateCmd(rest, stdin, stdout, stderr)
	case "next":
		return nextCmd(rest, stdin, stdout, stderr)
	case "run":
		// The run subcommand lives in run.go.
		return runCmd(rest)
	case "serve":
		return serveCmd(rest, stdout, stderr)
	case "reseal":
		return resealCmd(rest, stdout, stderr)
	case "keygen":
		return keygenCmd(rest, stdout, stderr)
	case "version", "-version", "--version":
		return versionCmd(rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "jobclock: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
}

// readInput reads FILE, or standard input for "-".
func readInput(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(name)
}

// parseArgs parses flags that may come before or after the operands and
// returns the operands.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return operands, nil
		}
		operands = append(operands, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
