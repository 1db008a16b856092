// Package jobdef is the job definition language of jobclock: the [Job]
// and [JobCollection] types, the parsing of their JSON form ([ParseJob],
// [ParseCollection]), the rules a definition must follow ([Job.Validate]),
// its canonical form ([Canonical]) and the times at which a job runs
// ([Job.Timing]). Package scheduler re-exports these names for the programs
// that embed it (scheduler.Job is jobdef.Job); its documentation describes
// the language as users meet it, in its sections Jobs, Validation,
// Recurrence, Cron specs, Actions, Retries and Job collections.
//
// # Reading a definition
//
// ParseJob reads a definition in one pass, with the module's one JSON
// codec (package internal/codec, over the reader of internal/jsonc, which
// takes comments and trailing commas): each value is read into the Go
// field it belongs to, by the fields' json tags, as encoding/json would
// read it, and checked on the way; the rules of this package add the
// members' other spellings, the read-only status, the secrets and the
// integers that must be at least 1. Every problem is kept with its
// JSON path and reading goes on, so that one call reports all of them:
// a value of the wrong kind, an unknown member, a member given twice, a
// time or duration that does not parse. Then the rules
// of validation run on the Go values, and report at the paths the
// decoding did not already report. Problems are ordered by path; at one
// path, a problem with a member's name comes before one with its value,
// and both before a rule's.
//
// A member given twice is a problem at its path, whether with the same
// name ("is given more than once": the first value counts), or in another
// case or by an alias ("is a duplicate of": the spelling first in byte
// order counts). So is a key given twice in a map such as the headers or
// the envelope's tags, or in an object of a custom payload. The problems
// of a value that does not count are not reported.
//
// # Adding a member to a definition
//
// A new member of Job, or of a type it holds (in this package or in
// action, recurrence and retry), takes a field with its json tag, a line in
// that type's Clone method, and its rules in validate.go: reading it,
// writing it (the REST API, the SQL stores), its canonical form follow
// from the tag. Clone's tests fill every field and fail when a field is not
// copied; those of Canonical compare it with a JSON round trip of such a
// filled value.
package jobdef
