// Package retry holds the retry policy of a job's action: whether a failed
// attempt is tried again, how often, and how long to wait in between.
//
// A nil *Policy, and a job that omits "retryPolicy", mean the default:
// Fixed, 4 retries, 30 seconds apart. Type None disables retries.
package retry

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Type is the kind of retry policy: None or Fixed.
type Type string

// The retry types in their canonical spelling.
const (
	None  Type = "None"
	Fixed Type = "Fixed"
)

// Valid reports whether t is a known type in canonical spelling.
func (t Type) Valid() bool { return t == None || t == Fixed }

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given for validation to report.
func (t *Type) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	switch {
	case strings.EqualFold(s, string(None)):
		*t = None
	case strings.EqualFold(s, string(Fixed)):
		*t = Fixed
	default:
		*t = Type(s)
	}
	return nil
}

// Defaults and bounds of a Fixed policy.
const (
	// DefaultCount is the number of retries when retryCount is omitted.
	DefaultCount = 4
	// DefaultInterval is the wait between attempts when retryInterval is
	// omitted.
	DefaultInterval = 30 * time.Second
	// MinInterval is the smallest retryInterval a job may ask for. Hosts
	// may lower the floor for local experiments (see ValidateOptions).
	MinInterval = 15 * time.Second
	// MaxInterval is the largest retryInterval: 18 months of 30 days plus
	// the 8 days that make it the 548 days the service documented.
	MaxInterval = 548 * 24 * time.Hour
	// MaxCount is the largest retryCount.
	MaxCount = 20
)

// Policy is the "retryPolicy" object of an action.
type Policy struct {
	// Type is None or Fixed. Required in JSON.
	Type Type `json:"retryType"`
	// Interval is the wait between attempts. Zero means DefaultInterval.
	Interval Duration `json:"retryInterval,omitempty"`
	// Count is the number of retries after the first attempt. Nil means
	// DefaultCount.
	Count *int `json:"retryCount,omitempty"`
}

// Retries returns the number of retries after the first attempt: 0 for
// None, Count or DefaultCount for Fixed. A nil policy is the default policy.
func (p *Policy) Retries() int {
	if p == nil {
		return DefaultCount
	}
	if p.Type == None {
		return 0
	}
	if p.Count == nil {
		return DefaultCount
	}
	return *p.Count
}

// Delay returns the wait before the next attempt. A nil policy, or a zero
// Interval, waits DefaultInterval.
func (p *Policy) Delay() time.Duration {
	if p == nil || p.Interval == 0 {
		return DefaultInterval
	}
	return time.Duration(p.Interval)
}

// ValidateOptions adjusts the bounds that Validate checks.
type ValidateOptions struct {
	// MinInterval is the smallest retryInterval accepted. Zero means
	// MinInterval.
	MinInterval time.Duration
}

// FieldError is a problem with one field of a retry policy. Path is the
// JSON path within the policy ("retryCount"), Value the offending value as
// JSON text (empty when the field is missing), Reason what is wrong.
type FieldError struct {
	Path   string
	Value  string
	Reason string
}

func (e *FieldError) Error() string {
	if e.Value == "" {
		return e.Path + ": " + e.Reason
	}
	return e.Path + ": " + e.Value + " " + e.Reason
}

// Validate reports every problem with p as joined *FieldError values. A nil
// policy is valid. opts may be nil.
func (p *Policy) Validate(opts *ValidateOptions) error {
	if p == nil {
		return nil
	}
	minInterval := MinInterval
	if opts != nil && opts.MinInterval > 0 {
		minInterval = opts.MinInterval
	}
	var errs []error
	switch {
	case p.Type == "":
		errs = append(errs, &FieldError{"retryType", "", "is required (None or Fixed)"})
	case !p.Type.Valid():
		errs = append(errs, &FieldError{"retryType", strconv.Quote(string(p.Type)), "is not a retry type (None or Fixed)"})
	}
	if p.Count != nil && (*p.Count < 0 || *p.Count > MaxCount) {
		errs = append(errs, &FieldError{"retryCount", strconv.Itoa(*p.Count), fmt.Sprintf("is out of range (0-%d)", MaxCount)})
	}
	if d := time.Duration(p.Interval); p.Interval != 0 {
		switch {
		case d < minInterval:
			errs = append(errs, &FieldError{"retryInterval", strconv.Quote(p.Interval.String()), fmt.Sprintf("is shorter than the minimum of %s", Duration(minInterval))})
		case d > MaxInterval:
			errs = append(errs, &FieldError{"retryInterval", strconv.Quote(p.Interval.String()), fmt.Sprintf("is longer than the maximum of %s", Duration(MaxInterval))})
		}
	}
	return errors.Join(errs...)
}

// Duration is a time.Duration written in JSON as an ISO 8601 duration
// ("PT30S", "P1D"). On input it also accepts the "[d.]hh:mm:ss" form.
// A month counts as 30 days and a year as 365 days.
type Duration time.Duration

// String returns d in ISO 8601 form using days, hours, minutes and seconds
// ("P1DT2H", "PT30S", "PT0S").
func (d Duration) String() string {
	v := time.Duration(d)
	if v == 0 {
		return "PT0S"
	}
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
		v = -v
	}
	b.WriteByte('P')
	if days := v / (24 * time.Hour); days > 0 {
		fmt.Fprintf(&b, "%dD", days)
		v -= days * 24 * time.Hour
	}
	if v > 0 {
		b.WriteByte('T')
		if h := v / time.Hour; h > 0 {
			fmt.Fprintf(&b, "%dH", h)
			v -= h * time.Hour
		}
		if m := v / time.Minute; m > 0 {
			fmt.Fprintf(&b, "%dM", m)
			v -= m * time.Minute
		}
		if v > 0 {
			s := strconv.FormatFloat(v.Seconds(), 'f', -1, 64)
			b.WriteString(s)
			b.WriteByte('S')
		}
	}
	return b.String()
}

// MarshalJSON writes d as an ISO 8601 string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads an ISO 8601 or "[d.]hh:mm:ss" string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"PT30S\"")
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// ParseDuration parses an ISO 8601 duration ("PT30S", "P1DT12H", "P18M",
// "PT1.5S") or the "[d.]hh:mm:ss[.fff]" form. Months count as 30 days,
// years as 365 days and weeks as 7 days. Negative durations are rejected.
func ParseDuration(s string) (Duration, error) {
	orig := s
	bad := func(why string) (Duration, error) {
		return 0, fmt.Errorf("%q is not a duration (%s); use ISO 8601 such as \"PT30S\" or \"P1D\"", orig, why)
	}
	if s == "" {
		return bad("empty")
	}
	if s[0] != 'P' && s[0] != 'p' {
		if strings.Contains(s, ":") {
			return parseClock(orig)
		}
		return bad("missing P")
	}
	s = s[1:]
	if s == "" {
		return bad("no components")
	}
	var total time.Duration
	inTime := false
	seen := false
	for len(s) > 0 {
		if s[0] == 'T' || s[0] == 't' {
			if inTime {
				return bad("second T")
			}
			inTime = true
			s = s[1:]
			if s == "" {
				return bad("nothing after T")
			}
			continue
		}
		i := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == ',') {
			i++
		}
		if i == 0 || i == len(s) {
			return bad("expected a number followed by a unit")
		}
		num, err := strconv.ParseFloat(strings.ReplaceAll(s[:i], ",", "."), 64)
		if err != nil {
			return bad("bad number")
		}
		var unit time.Duration
		switch u := s[i] | 0x20; {
		case !inTime && u == 'y':
			unit = 365 * 24 * time.Hour
		case !inTime && u == 'm':
			unit = 30 * 24 * time.Hour
		case !inTime && u == 'w':
			unit = 7 * 24 * time.Hour
		case !inTime && u == 'd':
			unit = 24 * time.Hour
		case inTime && u == 'h':
			unit = time.Hour
		case inTime && u == 'm':
			unit = time.Minute
		case inTime && u == 's':
			unit = time.Second
		default:
			return bad(fmt.Sprintf("unit %q not allowed here", s[i]))
		}
		if num*float64(unit) > float64(1<<62) {
			return bad("too large")
		}
		total += time.Duration(num * float64(unit))
		seen = true
		s = s[i+1:]
	}
	if !seen {
		return bad("no components")
	}
	return Duration(total), nil
}

// parseClock parses "[d.]hh:mm:ss[.fff]".
func parseClock(s string) (Duration, error) {
	bad := func() (Duration, error) {
		return 0, fmt.Errorf("%q is not a duration; use ISO 8601 such as \"PT30S\" or hh:mm:ss", s)
	}
	var days int64
	rest := s
	parts := strings.Split(rest, ":")
	if len(parts) != 3 {
		return bad()
	}
	if d, h, ok := strings.Cut(parts[0], "."); ok {
		n, err := strconv.ParseInt(d, 10, 32)
		if err != nil || n < 0 {
			return bad()
		}
		days = n
		parts[0] = h
	}
	h, err1 := strconv.ParseInt(parts[0], 10, 32)
	m, err2 := strconv.ParseInt(parts[1], 10, 32)
	sec, err3 := strconv.ParseFloat(parts[2], 64)
	if err1 != nil || err2 != nil || err3 != nil || h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec >= 60 {
		return bad()
	}
	total := time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute +
		time.Duration(sec*float64(time.Second))
	return Duration(total), nil
}
