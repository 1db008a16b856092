package recurrence

import (
	"errors"
	"iter"
	"time"
)

// Rule is a recurrence compiled against the instant its periods count from.
// It is safe for concurrent use.
//
// PLACEHOLDER: the expansion is being written; the signatures below are the
// contract the rest of the module codes against.
type Rule struct {
	rec   Recurrence
	start time.Time
}

// Compile checks r and returns the Rule whose first period holds start (the
// job's startTime, or its creation time when it has none).
func Compile(r *Recurrence, start time.Time) (*Rule, error) {
	if r == nil {
		return nil, errors.New("recurrence: nil recurrence")
	}
	return &Rule{rec: *r, start: start}, nil
}

// Next returns the first occurrence strictly after after, or the zero Time
// when the recurrence has ended (endTime). It does not apply Count: Count
// counts occurrences that ran, which only the caller knows; see
// [Rule.Occurrences].
func (r *Rule) Next(after time.Time) time.Time {
	panic("not implemented")
}

// Occurrences yields, in increasing order, the occurrences at or after from,
// applying Count (counted from the first yielded) and EndTime.
func (r *Rule) Occurrences(from time.Time) iter.Seq[time.Time] {
	panic("not implemented")
}
