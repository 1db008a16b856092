package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/codec"
	"github.com/jobclock/scheduler/internal/jsonc"
	"github.com/jobclock/scheduler/internal/jsonpath"
	"github.com/jobclock/scheduler/internal/names"
	"github.com/jobclock/scheduler/jobdef"
	"github.com/jobclock/scheduler/recurrence"
)

// jobFile is what a FILE of run or validate holds: one job definition,
// put as job BASENAME in the collection "default", or a collection file
// (see runUsage).
type jobFile struct {
	collection string
	// def is the collection's definition; nil for the defaults;
	// scheduler.DefaultCollectionDefinition() for the collection "default"
	// of a file of one job, as the library makes it; anyPlan() when the
	// file's could not be read.
	def  *scheduler.JobCollection
	jobs []fileJob // by name
	// calendars are the collection's exclusion calendars, by name.
	calendars map[string]*scheduler.Calendar
	// unread are the names of the calendars of the file that could not
	// be read: jobs that name them cannot be checked against them.
	unread map[string]bool
	// holdsCollection is set for a collection file, clear for a file of
	// one job.
	holdsCollection bool
	// createOnly is set when the file gives no collection properties (a
	// file of one job, or a collection file without "collection"): the
	// collection is created with def when missing, and a stored one is
	// left as it is, as the library leaves DefaultCollection.
	createOnly bool
}

// fileJob is a job of a jobFile, with the tags of its ARM envelope.
type fileJob struct {
	name string
	job  *scheduler.Job
	tags map[string]string
	// at is the JSON path of the job's definition in the file ("" for the
	// whole file, "jobs.a", "jobs.a.properties").
	at string
}

// checkCalendars returns the problems of f's jobs that name a calendar f
// does not hold, at the path of their recurrence.calendar (a calendar of
// the file that could not be read is held); nil for a file of one job,
// whose collection is not in the file.
func (f *jobFile) checkCalendars() error {
	if !f.holdsCollection {
		return nil
	}
	var errs []error
	for _, j := range f.jobs {
		name := j.job.Recurrence.Ext().Calendar
		if name == "" || f.calendars[name] != nil || f.unread[name] {
			continue
		}
		reason := "is not a calendar of the file (add it under \"calendars\")"
		if held := slices.Concat(slices.Collect(maps.Keys(f.calendars)), slices.Collect(maps.Keys(f.unread))); len(held) > 0 {
			slices.Sort(held)
			reason = "is not a calendar of the file (it holds " + strings.Join(quoted(held), ", ") + ")"
		}
		errs = append(errs, &jobProblems{j.name, []error{&scheduler.ValidationError{Path: joinPath(j.at, "recurrence.calendar"), Value: strconv.Quote(name), Reason: reason}}})
	}
	return errors.Join(errs...)
}

// checkable returns f with only the jobs that can be put into the
// collection made of f: those that name no calendar, or one f holds. For
// a file of one job, f.
func (f *jobFile) checkable() *jobFile {
	if !f.holdsCollection {
		return f
	}
	cp := *f
	cp.jobs = slices.DeleteFunc(slices.Clone(f.jobs), func(j fileJob) bool {
		name := j.job.Recurrence.Ext().Calendar
		return name != "" && f.calendars[name] == nil
	})
	return &cp
}

// quotaPath returns the JSON path in the file at which j exceeds qe: its
// recurrence for maxRecurrence, else the job ("job" for a file of one
// job, as the parser names the file as a whole).
func (j fileJob) quotaPath(qe *scheduler.QuotaError) string {
	if qe.Quota == "maxRecurrence" {
		return joinPath(j.at, "recurrence")
	}
	if j.at == "" {
		return "job"
	}
	return j.at
}

// quotaProblem is a quota of the file's collection that a job exceeds:
// it prints as "PATH: " and the quota's message, and matches
// scheduler.ErrQuotaExceeded.
type quotaProblem struct {
	path string
	err  *scheduler.QuotaError
}

func (e *quotaProblem) Error() string {
	return e.path + ": " + strings.TrimPrefix(e.err.Error(), "scheduler: ")
}

func (e *quotaProblem) Unwrap() error { return e.err }

// jobProblems are problems of the job of a file called name: it
// prints as the problems, one a line, and unwraps to them.
type jobProblems struct {
	name string
	errs []error
}

func (e *jobProblems) Error() string { return errors.Join(e.errs...).Error() }

func (e *jobProblems) Unwrap() []error { return e.errs }

// joinPath returns path b under path a.
func joinPath(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "." + b
}

// quoted returns each of names quoted.
func quoted(names []string) []string {
	for i, n := range names {
		names[i] = strconv.Quote(n)
	}
	return names
}

// collectionFile is the format of a file holding a collection and its
// jobs.
type collectionFile struct {
	Name       string                     `json:"name"`
	Collection json.RawMessage            `json:"collection"`
	Jobs       map[string]json.RawMessage `json:"jobs"`
	Calendars  map[string]json.RawMessage `json:"calendars"`
}

// fileRules read a collection file: the collection and the jobs are kept
// as given, for the job parser.
var fileRules = &codec.Rules{RawAsGiven: true}

// loadOptions are the options with which run and validate parse jobs:
// retries as often as minRetry, and authentication over http for local
// tests. A job without startTime counts from now, as when it is put.
func loadOptions(minRetry time.Duration) *scheduler.ParseOptions {
	now := time.Now()
	return &scheduler.ParseOptions{MinRetryInterval: minRetry, AllowInsecureAuthentication: true, Now: now, Created: now}
}

// readJobFile reads the file at path ("-": standard input) and parses
// what it holds with popts. Its error is every problem found, joined:
// each a *scheduler.ValidationError at its JSON path in the file, or a
// *scheduler.SyntaxError; or the error of reading the file.
func readJobFile(path string, stdin io.Reader, popts *scheduler.ParseOptions) (*jobFile, error) {
	data, err := readInput(path, stdin)
	if err != nil {
		return nil, err
	}
	if !isCollectionFile(data) {
		res, err := jobdef.ParseJobResource(data, popts)
		if err != nil {
			return nil, rootMembers(data, err)
		}
		return &jobFile{collection: scheduler.DefaultCollection, def: scheduler.DefaultCollectionDefinition(), createOnly: true,
			jobs: []fileJob{{baseName(path), res.Job, res.Tags, res.At}}}, nil
	}
	var cf collectionFile
	d := codec.Decoder{Rules: fileRules}
	d.Reset(data)
	d.Value(reflect.ValueOf(&cf).Elem())
	if err := d.Scanner.Finish(); err != nil {
		se := err.(*jsonc.SyntaxError)
		return nil, &scheduler.SyntaxError{Line: se.Line, Column: se.Column, Msg: se.Msg}
	}
	var errs []error
	for _, p := range d.Problems {
		if !p.Dropped {
			errs = append(errs, &scheduler.ValidationError{Path: p.Path, Value: p.Value, Reason: p.Reason})
		}
	}
	f := &jobFile{collection: cf.Name, holdsCollection: true, createOnly: len(cf.Collection) == 0}
	if f.collection == "" {
		f.collection = baseName(path)
	} else if !names.Valid(cf.Name) {
		errs = append(errs, &scheduler.ValidationError{Path: "name", Value: strconv.Quote(cf.Name), Reason: nameRule})
	}
	if len(cf.Collection) > 0 {
		f.def, err = scheduler.ParseCollection(cf.Collection)
		errs = append(errs, under("collection", wholeAt(cf.Collection, "collection"), err)...)
		if err != nil {
			f.def = anyPlan()
		}
	}
	for _, n := range slices.Sorted(maps.Keys(cf.Calendars)) {
		at := jsonpath.Key("calendars", n)
		if !names.Valid(n) {
			errs = append(errs, &scheduler.ValidationError{Path: at, Reason: nameRule})
			continue
		}
		c, err := scheduler.ParseCalendar(cf.Calendars[n])
		if err != nil {
			errs = append(errs, under(at, wholeAt(cf.Calendars[n], "calendar"), err)...)
			if f.unread == nil {
				f.unread = map[string]bool{}
			}
			f.unread[n] = true
			continue
		}
		if f.calendars == nil {
			f.calendars = map[string]*scheduler.Calendar{}
		}
		f.calendars[n] = c
	}
	if len(cf.Jobs) == 0 && len(errs) == 0 {
		errs = append(errs, &scheduler.ValidationError{Path: "jobs", Reason: "holds no jobs"})
	}
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for n := range cf.Jobs {
			if !yield(n) {
				return
			}
		}
	}) {
		at := jsonpath.Key("jobs", n)
		if !names.Valid(n) {
			errs = append(errs, &jobProblems{n, []error{&scheduler.ValidationError{Path: at, Reason: nameRule}}})
			continue
		}
		res, err := jobdef.ParseJobResource(cf.Jobs[n], popts)
		if err != nil {
			errs = append(errs, &jobProblems{n, under(at, wholeAt(cf.Jobs[n], "job"), err)})
			continue
		}
		f.jobs = append(f.jobs, fileJob{n, res.Job, res.Tags, joinPath(at, res.At)})
	}
	return f, errors.Join(errs...)
}

// anyPlan returns the collection of a file whose collection could not be
// read: no quota (as many jobs as a file holds, each as often as every
// second) and no run policy or limits, so that its jobs are checked for
// what holds under any plan, not against a default plan the file may not
// mean.
func anyPlan() *scheduler.JobCollection {
	return &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{
		MaxJobCount: math.MaxInt32, MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Second, Interval: 1}}}}
}

// nameRule is what a collection or job name must be.
const nameRule = "is not a valid name: 1 to 100 characters, starting with a letter, of letters, digits, '-' and '_'"

// isCollectionFile reports whether data is an object with a member
// "jobs" (in any case): a collection file, not a job definition.
func isCollectionFile(data []byte) bool {
	s := jsonc.NewScanner(data)
	if s.Kind() != jsonc.Object {
		return false
	}
	found := false
	s.Object(func(name []byte) bool {
		found = found || strings.EqualFold(string(name), "jobs")
		return !found && s.Skip()
	})
	return found
}

// under returns the problems of err, a parser's error, with their paths
// under at: the place in the file of what was parsed. A problem at whole
// is one of what was parsed as a whole, which is at at; whole is ""
// when no problem is (see wholeAt).
func under(at, whole string, err error) []error {
	if err == nil {
		return nil
	}
	ves := scheduler.ValidationErrors(err)
	if len(ves) == 0 {
		return []error{&scheduler.ValidationError{Path: at, Reason: err.Error()}}
	}
	out := make([]error, len(ves))
	for i, e := range ves {
		x := *e
		if at != "" && whole != "" && x.Path == whole {
			x.Path = "" // the whole of what was parsed, which is at at
		}
		x.Under(at)
		out[i] = &x
	}
	return out
}

// wholeAt returns root, the path at which a parser reports the problems
// of its input as a whole, when raw may have such a problem: it is not an
// object, or longer than a job is read. Of any other input a problem at
// root is one of a member called so ({"job": 1} in a job), and wholeAt
// returns "".
func wholeAt(raw []byte, root string) string {
	if jsonc.NewScanner(raw).Kind() != jsonc.Object || len(raw) > jobdef.MaxInputSize {
		return root
	}
	return ""
}

// rootMembers returns err, the parser's problems of data, a file of one
// job, with a member of the file called "job" named ["job"] (in Path, and
// in Refs and Reason), so that it reads apart from the file as a whole,
// which the parser names "job" too. When data may have a problem as a
// whole (see wholeAt), a problem at "job" is that one, and err is
// returned as it is.
func rootMembers(data []byte, err error) error {
	const root, member = "job", `["job"]`
	ves := scheduler.ValidationErrors(err)
	if wholeAt(data, root) != "" || len(ves) == 0 {
		return err
	}
	out := make([]error, len(ves))
	for i, e := range ves {
		x := *e
		if x.Path == root {
			x.Path = member
		}
		if slices.Contains(x.Refs, root) {
			x.Refs = slices.Clone(x.Refs)
			for j, ref := range x.Refs {
				if ref == root {
					x.Refs[j] = member
					x.Reason = jsonpath.Replace(x.Reason, root, member)
				}
			}
		}
		out[i] = &x
	}
	return errors.Join(out...)
}

var unsafeName = regexp.MustCompile(`[^-_A-Za-z0-9]`)

// baseName turns a file name into a collection or job name: "stdin" for
// "-", standard input.
func baseName(path string) string {
	if path == "-" {
		return "stdin"
	}
	n := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return unsafeName.ReplaceAllString(n, "-")
}

// fileError is what is wrong with the file at path: the problems of what
// it holds, one line each after the file's name, or the error of reading
// it (an *fs.PathError), which names the file already.
type fileError struct {
	path string
	err  error
}

func (e *fileError) Error() string {
	if _, unread := errors.AsType[*fs.PathError](e.err); unread {
		return e.err.Error()
	}
	var b strings.Builder
	printProblems(&b, e.path+": ", e.err)
	return strings.TrimSuffix(b.String(), "\n")
}

func (e *fileError) Unwrap() error { return e.err }

// printProblems writes one line per problem in err, each after prefix.
func printProblems(w io.Writer, prefix string, err error) {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			printProblems(w, prefix, e)
		}
		return
	}
	fmt.Fprintf(w, "%s%v\n", prefix, err)
}
