package jobdef

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/jobclock/scheduler/internal/enum"
)

// LimitKey says what a collection's [Limit] counts by: each value the key
// takes has its own permits.
type LimitKey string

// The limit keys in their canonical spelling.
const (
	// LimitHost counts by the target of the action being attempted: the
	// host of an HTTP action's URI (with its port when the URI gives
	// one), the storage account of a storage queue action, the Service
	// Bus namespace of a Service Bus action. Other action types (a
	// host's own types, Go funcs) have no target the Scheduler knows:
	// their action type stands for it, so one limit covers all of the
	// collection's jobs of that type.
	LimitHost LimitKey = "host"
	// LimitJob counts by job: each job of the collection has its own
	// permits.
	LimitJob LimitKey = "job"
	// LimitCollection counts the collection's jobs together.
	LimitCollection LimitKey = "collection"
)

var limitKeys = []LimitKey{LimitHost, LimitJob, LimitCollection}

// Valid reports whether k is a known key in canonical spelling.
func (k LimitKey) Valid() bool { return slices.Contains(limitKeys, k) }

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given for validation to report.
func (k *LimitKey) UnmarshalJSON(b []byte) error { return enum.Unmarshal(b, k, limitKeys) }

// Bounds of a [Limit].
const (
	// MaxLimitConcurrent is the largest maxConcurrent.
	MaxLimitConcurrent = 1000
	// MaxLimitRate is the largest ratePerMinute: 1,000 a second.
	MaxLimitRate = 60_000
)

// Limit is an element of a job collection's "limits": how many attempts
// of the collection's jobs may run at once, and how often they may start,
// for each value of Key. An attempt whose permits are not free waits for
// them (its occurrence stays in progress), whichever instance sharing the
// store runs it; retries and errorAction attempts take permits too, an
// errorAction toward its own target.
type Limit struct {
	// Key is host, job or collection (any case).
	Key LimitKey `json:"key"`
	// MaxConcurrent is the most attempts that run at once for one value
	// of the key, 1 to MaxLimitConcurrent. Zero means no such limit.
	MaxConcurrent int `json:"maxConcurrent,omitempty"`
	// RatePerMinute is the most attempts that start a minute for one
	// value of the key, 1 to MaxLimitRate, spaced evenly: one at most
	// every 60/RatePerMinute seconds. Zero means no such limit.
	RatePerMinute int `json:"ratePerMinute,omitempty"`
}

// String describes l in words, as "at most 5 at once and 120 a minute
// per host".
func (l Limit) String() string {
	var s string
	switch {
	case l.MaxConcurrent > 0 && l.RatePerMinute > 0:
		s = fmt.Sprintf("at most %d at once and %d a minute", l.MaxConcurrent, l.RatePerMinute)
	case l.MaxConcurrent > 0:
		s = fmt.Sprintf("at most %d at once", l.MaxConcurrent)
	default:
		s = fmt.Sprintf("at most %d a minute", l.RatePerMinute)
	}
	switch l.Key {
	case LimitHost:
		return s + " per target host"
	case LimitJob:
		return s + " per job"
	}
	return s + " for the whole collection"
}

// limits checks a collection's limits, at path.
func (c *checker) limits(path string, ls []Limit) {
	for i, l := range ls {
		p := path + "[" + strconv.Itoa(i) + "]"
		switch {
		case l.Key == "":
			c.add(p+".key", "", "is required (host, job or collection)")
		case !l.Key.Valid():
			c.add(p+".key", strconv.Quote(string(l.Key)), "is not a limit key (host, job or collection)")
		default:
			if j := slices.IndexFunc(ls[:i], func(o Limit) bool { return o.Key == l.Key }); j >= 0 {
				first := path + "[" + strconv.Itoa(j) + "]"
				c.errs = append(c.errs, &ValidationError{Path: p + ".key", Value: strconv.Quote(string(l.Key)),
					Reason: "is also the key of " + first + ": give one limit per key", Refs: []string{first}})
			}
		}
		if l.MaxConcurrent == 0 && l.RatePerMinute == 0 {
			c.add(p, "", "sets neither maxConcurrent nor ratePerMinute")
		}
		if n := l.MaxConcurrent; n < 0 || n > MaxLimitConcurrent {
			c.add(p+".maxConcurrent", strconv.Itoa(n), fmt.Sprintf("is not between 1 and %d", MaxLimitConcurrent))
		}
		if n := l.RatePerMinute; n < 0 || n > MaxLimitRate {
			c.add(p+".ratePerMinute", strconv.Itoa(n), fmt.Sprintf("is not between 1 and %d", MaxLimitRate))
		}
	}
}
