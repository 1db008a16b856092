// Package retry holds the retry policy of a job's action: whether a failed
// attempt is tried again, how often, and how long to wait in between.
//
// A nil *Policy, and a job that omits "retryPolicy", mean the default:
// Fixed, 4 retries, 30 seconds apart. Type None disables retries.
//
// # Exponential retries
//
// Besides Azure Scheduler's None and Fixed, a policy may be Exponential, an
// extension in the shape of the exponential interval policy of Azure Logic
// Apps: retry number n (from 1) waits a time drawn from a range that
// doubles with each retry,
//
//	retry 1: from minimumInterval            to min(interval, maximumInterval)
//	retry 2: from max(interval, minimum)     to min(2*interval, maximum)
//	retry 3: from max(2*interval, minimum)   to min(4*interval, maximum)
//	retry n: from max(2^(n-2)*interval, minimum) to min(2^(n-1)*interval, maximum)
//
// where interval is retryInterval (default 30 s), minimumInterval defaults
// to 15 s ([MinInterval]: no retry comes sooner than the smallest
// retryInterval, unless the job asks for a smaller minimumInterval where the
// host lowered that floor) and maximumInterval to 548 days ([MaxInterval]).
// When minimumInterval is above the computed upper end, the wait is
// minimumInterval. The JSON members are retryType "Exponential",
// retryCount, retryInterval, minimumInterval and maximumInterval; the
// Logic Apps spellings type, count and interval are accepted for the first
// three by the job parser. Counts are bounded as for Fixed (0 to 20).
//
// The point within the range is not drawn at random but derived from a seed
// (the scheduler passes the occurrence's execution tag) and the retry
// number: it is spread evenly over the range across occurrences, so that
// the retries of many jobs failing together do not come back together,
// while every scheduler instance computes the same instant for the same
// retry and a test can predict it with [Policy.Delay].
package retry

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobclock/scheduler/internal/enum"
)

// Type is the kind of retry policy: None, Fixed or Exponential.
type Type string

// The retry types in their canonical spelling.
const (
	None  Type = "None"
	Fixed Type = "Fixed"
	// Exponential waits a time from a range that doubles with each
	// retry: an extension beyond Azure Scheduler, in the shape of Azure
	// Logic Apps' exponential interval policy (see the package
	// documentation).
	Exponential Type = "Exponential"
)

var types = []Type{None, Fixed, Exponential}

// Valid reports whether t is a known type in canonical spelling.
func (t Type) Valid() bool { return t == None || t == Fixed || t == Exponential }

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given for validation to report.
func (t *Type) UnmarshalJSON(b []byte) error { return enum.Unmarshal(b, t, types) }

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
	// DefaultMinimumInterval is an Exponential policy's minimumInterval
	// when it is omitted: the shortest wait before any retry.
	DefaultMinimumInterval = MinInterval
	// DefaultMaximumInterval is an Exponential policy's maximumInterval
	// when it is omitted: the longest wait before any retry.
	DefaultMaximumInterval = MaxInterval
)

// Policy is the "retryPolicy" object of an action.
type Policy struct {
	// Type is None, Fixed or Exponential. Required in JSON.
	Type Type `json:"retryType"`
	// Interval is the wait between attempts of a Fixed policy, and the
	// unit that an Exponential policy's ranges double from. Zero means
	// DefaultInterval.
	Interval Duration `json:"retryInterval,omitempty"`
	// Count is the number of retries after the first attempt. Nil means
	// DefaultCount.
	Count *int `json:"retryCount,omitempty"`
	// MinimumInterval is the shortest wait of an Exponential policy. Zero
	// means DefaultMinimumInterval (15s). Only for Exponential.
	MinimumInterval Duration `json:"minimumInterval,omitempty"`
	// MaximumInterval is the longest wait of an Exponential policy. Zero
	// means DefaultMaximumInterval (548 days). Only for Exponential.
	MaximumInterval Duration `json:"maximumInterval,omitempty"`
	// MaxRetryDuration, an extension, bounds when retries may start: no
	// retry starts later than the occurrence's expected time plus this;
	// the occurrence faults instead. Zero means no bound.
	MaxRetryDuration Duration `json:"maxRetryDuration,omitempty"`
	// PermanentStatusCodes, an extension for Http and Https actions, are
	// the response status codes that no retry can mend: an attempt
	// answered with one is not retried and the occurrence faults at once.
	PermanentStatusCodes []int `json:"permanentStatusCodes,omitempty"`
}

// Clone returns a deep copy of p; nil for a nil p.
func (p *Policy) Clone() *Policy {
	if p == nil {
		return nil
	}
	c := *p
	if p.Count != nil {
		c.Count = new(*p.Count)
	}
	c.PermanentStatusCodes = slices.Clone(p.PermanentStatusCodes)
	return &c
}

// Retries returns the number of retries after the first attempt: 0 for
// None, Count or DefaultCount otherwise. A nil policy is the default
// policy.
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

// interval returns Interval, or DefaultInterval when it is zero.
func (p *Policy) interval() time.Duration {
	if p == nil || p.Interval == 0 {
		return DefaultInterval
	}
	return time.Duration(p.Interval)
}

// Range returns the bounds of the wait before retry number retry (from
// 1): for Fixed (and a nil policy) both are the interval; for Exponential
// they are the range of the package documentation, lo <= hi.
func (p *Policy) Range(retry int) (lo, hi time.Duration) {
	d := p.interval()
	if p == nil || p.Type != Exponential {
		return d, d
	}
	minimum, maximum := DefaultMinimumInterval, DefaultMaximumInterval
	if p.MinimumInterval != 0 {
		minimum = time.Duration(p.MinimumInterval)
	}
	if p.MaximumInterval != 0 {
		maximum = time.Duration(p.MaximumInterval)
	}
	if retry > 1 {
		lo = scaled(d, retry-2)
	}
	hi = scaled(d, retry-1)
	clamp := func(v time.Duration) time.Duration { return max(minimum, min(v, maximum)) }
	lo, hi = clamp(lo), clamp(hi)
	if hi < lo { // minimum above maximum: validation refuses it
		hi = lo
	}
	return lo, hi
}

// scaled returns d*2^k, saturating at the largest Duration.
func scaled(d time.Duration, k int) time.Duration {
	if k < 0 {
		return d
	}
	if k >= 62 || d > math.MaxInt64>>k {
		return math.MaxInt64
	}
	return d << k
}

// Delay returns the wait before retry number retry (from 1), counted from
// the end of the attempt that failed. A Fixed policy (and a nil one, and
// None, which never retries) waits its interval. An Exponential policy
// waits a time within [Policy.Range] that depends only on seed and retry:
// the same arguments give the same wait, and different seeds spread
// evenly over the range. The scheduler passes the occurrence's execution
// tag as seed.
func (p *Policy) Delay(retry int, seed string) time.Duration {
	lo, hi := p.Range(retry)
	if hi == lo {
		return lo
	}
	// FNV-1a over the seed and the retry number, then the SplitMix64
	// finaliser so that nearby seeds land far apart.
	h := uint64(14695981039346656037)
	for i := 0; i < len(seed); i++ {
		h = (h ^ uint64(seed[i])) * 1099511628211
	}
	for r := uint64(retry); ; r >>= 8 {
		h = (h ^ (r & 0xff)) * 1099511628211
		if r < 0x100 {
			break
		}
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	// An offset in [0, hi-lo], in integer arithmetic so that every
	// platform computes the same instant.
	off, _ := bits.Mul64(h, uint64(hi-lo)+1)
	return lo + time.Duration(off)
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
		errs = append(errs, &FieldError{"retryType", "", "is required (None, Fixed or Exponential)"})
	case !p.Type.Valid():
		errs = append(errs, &FieldError{"retryType", strconv.Quote(string(p.Type)), "is not a retry type (None, Fixed or Exponential)"})
	}
	if p.Count != nil && (*p.Count < 0 || *p.Count > MaxCount) {
		errs = append(errs, &FieldError{"retryCount", strconv.Itoa(*p.Count), fmt.Sprintf("is out of range (0-%d)", MaxCount)})
	}
	inRange := func(path string, v Duration) bool {
		switch d := time.Duration(v); {
		case d < minInterval:
			errs = append(errs, &FieldError{path, strconv.Quote(v.String()), fmt.Sprintf("is shorter than the minimum of %s", Duration(minInterval))})
		case d > MaxInterval:
			errs = append(errs, &FieldError{path, strconv.Quote(v.String()), fmt.Sprintf("is longer than the maximum of %s", Duration(MaxInterval))})
		default:
			return true
		}
		return false
	}
	if p.Interval != 0 {
		inRange("retryInterval", p.Interval)
	}
	if d := time.Duration(p.MaxRetryDuration); d < 0 || d > MaxInterval {
		errs = append(errs, &FieldError{"maxRetryDuration", strconv.Quote(p.MaxRetryDuration.String()), fmt.Sprintf("is out of range (PT1S to %s)", Duration(MaxInterval))})
	} else if d != 0 && d < time.Second {
		errs = append(errs, &FieldError{"maxRetryDuration", strconv.Quote(p.MaxRetryDuration.String()), "is shorter than PT1S"})
	}
	for i, code := range p.PermanentStatusCodes {
		if code < 100 || code > 599 {
			errs = append(errs, &FieldError{fmt.Sprintf("permanentStatusCodes[%d]", i), strconv.Itoa(code), "is not an HTTP status code (100-599)"})
		}
	}
	bounds := []struct {
		path string
		v    Duration
	}{{"minimumInterval", p.MinimumInterval}, {"maximumInterval", p.MaximumInterval}}
	if p.Type != Exponential && p.Type.Valid() {
		for _, b := range bounds {
			if b.v != 0 {
				errs = append(errs, &FieldError{b.path, strconv.Quote(b.v.String()), fmt.Sprintf("does not apply to retryType %s (only to Exponential)", p.Type)})
			}
		}
		return errors.Join(errs...)
	}
	minOK := p.MinimumInterval == 0 || inRange("minimumInterval", p.MinimumInterval)
	maxOK := p.MaximumInterval == 0 || inRange("maximumInterval", p.MaximumInterval)
	if minOK && maxOK && p.MaximumInterval != 0 {
		switch {
		case p.MinimumInterval != 0 && p.MinimumInterval > p.MaximumInterval:
			errs = append(errs, &FieldError{"minimumInterval", strconv.Quote(p.MinimumInterval.String()),
				fmt.Sprintf("is longer than maximumInterval (%s)", p.MaximumInterval)})
		case p.MinimumInterval == 0 && time.Duration(p.MaximumInterval) < DefaultMinimumInterval:
			errs = append(errs, &FieldError{"maximumInterval", strconv.Quote(p.MaximumInterval.String()),
				fmt.Sprintf("is shorter than minimumInterval, which defaults to %s", Duration(DefaultMinimumInterval))})
		}
	}
	return errors.Join(errs...)
}

// Duration is a time.Duration written in JSON as an ISO 8601 duration
// ("PT30S", "P1D"). On input it also accepts the "[d.]hh:mm:ss" form.
// A month counts as 30 days and a year as 365 days.
type Duration time.Duration

// String returns d in ISO 8601 form using days, hours, minutes and seconds
// ("P1DT2H", "PT30S", "PT1.5S", "PT0S"); a negative d gets a leading "-".
// Seconds are written exactly, down to the nanosecond, so that
// ParseDuration(d.String()) == d for every d >= 0.
func (d Duration) String() string {
	v := time.Duration(d)
	if v == 0 {
		return "PT0S"
	}
	var b strings.Builder
	u := uint64(v)
	if v < 0 {
		b.WriteByte('-')
		u = -u
	}
	b.WriteByte('P')
	const day = uint64(24 * time.Hour)
	if days := u / day; days > 0 {
		fmt.Fprintf(&b, "%dD", days)
		u %= day
	}
	if u > 0 {
		b.WriteByte('T')
		if h := u / uint64(time.Hour); h > 0 {
			fmt.Fprintf(&b, "%dH", h)
			u %= uint64(time.Hour)
		}
		if m := u / uint64(time.Minute); m > 0 {
			fmt.Fprintf(&b, "%dM", m)
			u %= uint64(time.Minute)
		}
		if u > 0 {
			fmt.Fprintf(&b, "%d", u/uint64(time.Second))
			if ns := u % uint64(time.Second); ns > 0 {
				b.WriteString(strings.TrimRight(fmt.Sprintf(".%09d", ns), "0"))
			}
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
// "PT1.5S", "P2W") or the "[d.]hh:mm:ss[.fffffff]" form. Months count as 30
// days, years as 365 days and weeks as 7 days. Units must appear in the
// order Y, M, W, D, T, H, M, S, each at most once; only the last may have a
// fraction (with "." or ","). Negative durations are rejected, and so are
// durations beyond about 292 years (time.Duration's range).
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
	const (
		dateUnits = "ymwd"
		timeUnits = "hms"
	)
	var total time.Duration
	inTime := false
	seen := false
	fraction := false
	last := -1 // index of the last unit seen within dateUnits or timeUnits
	for len(s) > 0 {
		if s[0] == 'T' || s[0] == 't' {
			if inTime {
				return bad("second T")
			}
			inTime, last = true, -1
			s = s[1:]
			if s == "" {
				return bad("nothing after T")
			}
			continue
		}
		if fraction {
			return bad("only the last component may have a fraction")
		}
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		intPart := s[:i]
		fracPart := ""
		if i < len(s) && (s[i] == '.' || s[i] == ',') {
			j := i + 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			fracPart = s[i+1 : j]
			if fracPart == "" {
				return bad("no digits after the decimal mark")
			}
			fraction = true
			i = j
		}
		if intPart == "" && fracPart == "" || i == len(s) {
			return bad("expected a number followed by a unit")
		}
		units := dateUnits
		if inTime {
			units = timeUnits
		}
		k := strings.IndexByte(units, s[i]|0x20)
		if k < 0 {
			return bad(fmt.Sprintf("unit %q not allowed here", s[i]))
		}
		if k <= last {
			return bad(fmt.Sprintf("unit %q out of order or repeated", s[i]))
		}
		last = k
		unit := map[byte]time.Duration{
			'y': 365 * 24 * time.Hour, 'w': 7 * 24 * time.Hour, 'd': 24 * time.Hour,
			'h': time.Hour, 's': time.Second,
		}[s[i]|0x20]
		if s[i]|0x20 == 'm' {
			unit = 30 * 24 * time.Hour
			if inTime {
				unit = time.Minute
			}
		}
		v, ok := component(intPart, fracPart, unit)
		if !ok || total > math.MaxInt64-v {
			return bad("too large")
		}
		total += v
		seen = true
		s = s[i+1:]
	}
	if !seen {
		return bad("no components")
	}
	return Duration(total), nil
}

// component returns intPart.fracPart units, exactly to the nanosecond
// (digits beyond are dropped); ok is false on overflow.
func component(intPart, fracPart string, unit time.Duration) (time.Duration, bool) {
	var n int64
	if intPart != "" {
		var err error
		n, err = strconv.ParseInt(intPart, 10, 64)
		if err != nil || n > math.MaxInt64/int64(unit) {
			return 0, false
		}
	}
	v := time.Duration(n) * unit
	if fracPart != "" {
		if len(fracPart) > 9 {
			fracPart = fracPart[:9]
		}
		f, _ := strconv.ParseInt(fracPart, 10, 64)
		scale := int64(1)
		for range len(fracPart) {
			scale *= 10
		}
		// Every unit is a whole number of seconds, so unit/scale is exact.
		fv := time.Duration(f) * (unit / time.Duration(scale))
		if v > math.MaxInt64-fv {
			return 0, false
		}
		v += fv
	}
	return v, true
}

// parseClock parses "[d.]hh:mm:ss[.fffffff]", the form of .NET's TimeSpan.
func parseClock(s string) (Duration, error) {
	bad := func() (Duration, error) {
		return 0, fmt.Errorf("%q is not a duration; use ISO 8601 such as \"PT30S\" or hh:mm:ss", s)
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return bad()
	}
	var days int64
	if d, h, ok := strings.Cut(parts[0], "."); ok {
		n, ok := digits(d, 8)
		if !ok {
			return bad()
		}
		days = n
		parts[0] = h
	}
	sec, frac, _ := strings.Cut(parts[2], ".")
	h, ok1 := digits(parts[0], 2)
	m, ok2 := digits(parts[1], 2)
	sc, ok3 := digits(sec, 2)
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sc > 59 {
		return bad()
	}
	total := time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute +
		time.Duration(sc)*time.Second
	if strings.Contains(parts[2], ".") {
		if _, ok := digits(frac, 100); !ok {
			return bad()
		}
		fv, _ := component("", frac, time.Second)
		total += fv
	}
	return Duration(total), nil
}

// digits parses s as an unsigned decimal of 1 to max digits.
func digits(s string, max int) (int64, bool) {
	if s == "" || len(s) > max {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}
