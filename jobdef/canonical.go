package jobdef

import (
	"encoding/json"

	"github.com/jobclock/scheduler/internal/codec"
)

// Canonical returns j as a scheduler stores it: a deep copy, sharing
// nothing with j, in the form ParseJob gives. A recurrence's cron spec is expanded into the
// fields it stands for; enumerations, HTTP methods and host action types
// are spelled as ParseJob spells them; and the values are those that the
// definition's JSON form holds: times without monotonic readings and in
// the zone JSON keeps (UTC, or a fixed offset), strings with invalid UTF-8
// bytes replaced by U+FFFD, custom payloads as compact JSON, empty lists
// and maps left out. Status is left out. j itself is not changed.
//
// Canonical does not validate j (see [Job.Validate]); it fails only where
// the JSON form cannot hold j: a time outside the years 0 to 9999, a
// Custom that is not JSON, or a definition whose JSON is longer
// than MaxJobSize. opts may be nil.
func Canonical(j *Job, opts *ParseOptions) (*Job, error) {
	if opts == nil {
		opts = &ParseOptions{}
	}
	c := j.Clone()
	c.Status = nil
	expandCron(c)
	if size, refused := codec.Normalize(c); refused || size > MaxJobSize {
		// The JSON form decides: what encoding/json refuses, and the
		// exact length where the bound is over the limit.
		data, err := json.Marshal(c)
		if err != nil {
			return nil, &ValidationError{Path: rootPath, Reason: "cannot be encoded: " + err.Error()}
		}
		if len(data) > MaxJobSize {
			return nil, &ValidationError{Path: rootPath, Reason: sizeReason(len(data))}
		}
	}
	canonicalize(c, opts)
	return c, nil
}
