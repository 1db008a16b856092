package jobdef

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/jobclock/scheduler/internal/codec"
	"github.com/jobclock/scheduler/internal/enum"
	"github.com/jobclock/scheduler/internal/jsonc"
	"github.com/jobclock/scheduler/internal/jsonpath"
	"github.com/jobclock/scheduler/recurrence"
)

// CollectionState is the state of a job collection.
type CollectionState string

// The collection states in their canonical spelling. Only Enabled
// collections run jobs; Disabled and Suspended ones run none, and their
// jobs keep their own states.
const (
	CollectionEnabled   CollectionState = "Enabled"
	CollectionDisabled  CollectionState = "Disabled"
	CollectionSuspended CollectionState = "Suspended"
)

var collectionStates = []CollectionState{CollectionEnabled, CollectionDisabled, CollectionSuspended}

// Valid reports whether s is a known state in canonical spelling.
func (s CollectionState) Valid() bool { return slices.Contains(collectionStates, s) }

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given for validation to report.
func (s *CollectionState) UnmarshalJSON(b []byte) error {
	return enum.Unmarshal(b, s, collectionStates)
}

// SKUName is the plan of a job collection.
type SKUName string

// The plans in their canonical spelling.
const (
	SKUFree       SKUName = "Free"
	SKUStandard   SKUName = "Standard"
	SKUP10Premium SKUName = "P10Premium"
	SKUP20Premium SKUName = "P20Premium"
)

var skuNames = []SKUName{SKUFree, SKUStandard, SKUP10Premium, SKUP20Premium}

// Valid reports whether n is a known plan in canonical spelling.
func (n SKUName) Valid() bool { return slices.Contains(skuNames, n) }

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given for validation to report.
func (n *SKUName) UnmarshalJSON(b []byte) error { return enum.Unmarshal(b, n, skuNames) }

// Plan quotas: the maximum job count of each plan.
const (
	FreeMaxJobCount       = 5
	StandardMaxJobCount   = 50
	P10PremiumMaxJobCount = 50
	P20PremiumMaxJobCount = 1000
)

// planQuota returns the plan's default quota.
func planQuota(n SKUName) (int, MaxRecurrence) {
	switch n {
	case SKUFree:
		return FreeMaxJobCount, MaxRecurrence{Frequency: recurrence.Hour, Interval: 1}
	case SKUP10Premium:
		return P10PremiumMaxJobCount, MaxRecurrence{Frequency: recurrence.Minute, Interval: 1}
	case SKUP20Premium:
		return P20PremiumMaxJobCount, MaxRecurrence{Frequency: recurrence.Minute, Interval: 1}
	default:
		return StandardMaxJobCount, MaxRecurrence{Frequency: recurrence.Minute, Interval: 1}
	}
}

// SKU is the "sku" object of a job collection.
type SKU struct {
	// Name is the plan. Empty means Standard.
	Name SKUName `json:"name"`
}

// Quota is the "quota" object of a job collection. Zero fields take the
// plan's value.
type Quota struct {
	// MaxJobCount is the most jobs the collection may hold. Zero means
	// the plan's value.
	MaxJobCount int `json:"maxJobCount,omitempty"`
	// MaxJobOccurrence is accepted and stored for compatibility; the
	// service never enforced it and neither does this package.
	MaxJobOccurrence int `json:"maxJobOccurrence,omitempty"`
	// MaxRecurrence is the most frequent recurrence a job may have. Nil
	// means the plan's value.
	MaxRecurrence *MaxRecurrence `json:"maxRecurrence,omitempty"`
}

// MaxRecurrence is the "maxRecurrence" object of a quota: jobs may run at
// most once per Interval Frequency units.
type MaxRecurrence struct {
	// Frequency is Second, Minute, Hour, Day, Week or Month. Second is an
	// extension beyond Azure Scheduler, whose plans allow at most one
	// occurrence a minute: {Second, 10} lets jobs run every 10 seconds.
	Frequency recurrence.Frequency `json:"frequency"`
	// Interval is the number of Frequency units. Zero means 1.
	Interval int `json:"interval,omitempty"`
}

// String returns "INTERVAL FREQUENCY", such as "1 Hour".
func (m MaxRecurrence) String() string {
	return fmt.Sprintf("%d %s", max(m.Interval, 1), m.Frequency)
}

// Period returns the shortest span that Interval Frequency units can
// cover: a day counts as 23 hours, a week as 7 days less an hour, a month
// as 28 days and a year as 365 days.
func (m MaxRecurrence) Period() time.Duration {
	var unit time.Duration
	switch m.Frequency {
	case recurrence.Second:
		unit = time.Second
	case recurrence.Minute:
		unit = time.Minute
	case recurrence.Hour:
		unit = time.Hour
	case recurrence.Day:
		unit = 23 * time.Hour
	case recurrence.Week:
		unit = 7*24*time.Hour - time.Hour
	case recurrence.Month:
		unit = 28 * 24 * time.Hour
	case recurrence.Year:
		unit = 365 * 24 * time.Hour
	}
	return unit * time.Duration(max(m.Interval, 1))
}

// CollectionProperties is the "properties" object of a job collection.
type CollectionProperties struct {
	// SKU is the plan. Nil means Standard.
	SKU *SKU `json:"sku,omitempty"`
	// State is Enabled, Disabled or Suspended. Empty means Enabled.
	State CollectionState `json:"state,omitempty"`
	// Quota overrides the plan's quotas. Nil means the plan's values.
	Quota *Quota `json:"quota,omitempty"`
	// RunPolicy is the default run policy of the collection's jobs: a
	// job's own runPolicy wins member by member. Nil means the
	// Scheduler's defaults.
	RunPolicy *RunPolicy `json:"runPolicy,omitempty"`
	// Limits bound the attempts of the collection's jobs, each by its
	// key, across every instance that shares the store: see [Limit]. At
	// most one limit per key. Nil means none.
	Limits []Limit `json:"limits,omitempty"`
}

// JobCollection is the definition of a job collection.
type JobCollection struct {
	// Location is free text kept for compatibility with the ARM API.
	Location string `json:"location,omitempty"`
	// Tags are free key/value pairs kept with the collection.
	Tags map[string]string `json:"tags,omitempty"`
	// Properties holds the plan, state and quota.
	Properties CollectionProperties `json:"properties"`
	// Calendars are the collection's exclusion calendars by name. They
	// are written one by one (Scheduler.PutCalendar and the calendars
	// resource of the management API) and kept in the collection's
	// record, so that a calendar is written atomically with the
	// collection and no store needs a table for them; [ParseCollection]
	// ignores the member, and a replaced collection keeps its calendars.
	Calendars map[string]*CalendarEntry `json:"calendars,omitempty"`
	// Checking is the stricter maxRecurrence that a write of the
	// collection (Scheduler.PutCollection, PatchCollection) checks the
	// collection's jobs against before it makes it the collection's: puts
	// of jobs must honour it too. Nil when no such write is under way.
	// [ParseCollection] ignores the member; another write of the
	// collection's definition clears it, and the write that set it then
	// fails. A mark older than [MarkLifetime] (one left by a writer that
	// stopped or lost the store) is ignored.
	Checking *QuotaCheck `json:"checking,omitempty"`
}

// MarkLifetime is how long a mark of a write under way on a collection
// (JobCollection.Checking, CalendarEntry.Next, CalendarEntry.Deleting)
// holds, from its At (DeletingAt for Deleting): puts of jobs ignore an
// older one, and the next write of the collection drops it. The write
// that set it gives up (ErrConflict) when its check took more than half
// of it, so that a mark is never ignored while it can still take effect
// (the other half is the margin for the clocks of the instances to
// differ).
const MarkLifetime = time.Minute

// markLive reports whether a mark made at at still holds at now (see
// MarkLifetime); a mark without an instant (zero) does not.
func markLive(at, now time.Time) bool {
	return !at.IsZero() && now.Sub(at) <= MarkLifetime
}

// Live reports whether the mark c still holds at now (see MarkLifetime).
func (c *QuotaCheck) Live(now time.Time) bool {
	return c != nil && markLive(c.At, now)
}

// QuotaCheck is a stricter maxRecurrence being checked against a
// collection's jobs (see [JobCollection.Checking]).
type QuotaCheck struct {
	// ID tells the write that checks it from another.
	ID string `json:"id"`
	// MaxRecurrence is the maxRecurrence checked.
	MaxRecurrence MaxRecurrence `json:"maxRecurrence"`
	// At is when the mark was made (see MarkLifetime).
	At time.Time `json:"at,omitzero"`
}

// RecurrenceLimit returns the maxRecurrence that puts of jobs at now must
// honour: the longer of MaxRecurrence and the one being checked
// (Checking), unless that mark is older than [MarkLifetime].
func (c *JobCollection) RecurrenceLimit(now time.Time) MaxRecurrence {
	limit := c.MaxRecurrence()
	if c != nil && c.Checking.Live(now) && c.Checking.MaxRecurrence.Period() > limit.Period() {
		limit = c.Checking.MaxRecurrence
	}
	return limit
}

// Clone returns a deep copy of c; nil for a nil c.
func (c *JobCollection) Clone() *JobCollection {
	if c == nil {
		return nil
	}
	cp := *c
	cp.Tags = maps.Clone(c.Tags)
	if p := c.Properties.SKU; p != nil {
		cp.Properties.SKU = new(*p)
	}
	if p := c.Properties.Quota; p != nil {
		q := *p
		if q.MaxRecurrence != nil {
			q.MaxRecurrence = new(*q.MaxRecurrence)
		}
		cp.Properties.Quota = &q
	}
	cp.Properties.RunPolicy = c.Properties.RunPolicy.Clone()
	cp.Properties.Limits = slices.Clone(c.Properties.Limits)
	if c.Calendars != nil {
		cp.Calendars = make(map[string]*CalendarEntry, len(c.Calendars))
		for k, e := range c.Calendars {
			cp.Calendars[k] = e.Clone()
		}
	}
	if c.Checking != nil {
		cp.Checking = new(*c.Checking)
	}
	return &cp
}

// Plan returns the collection's plan; Standard when none is set.
func (c *JobCollection) Plan() SKUName {
	if c == nil || c.Properties.SKU == nil || c.Properties.SKU.Name == "" {
		return SKUStandard
	}
	return c.Properties.SKU.Name
}

// State returns the collection's state; Enabled when none is set.
func (c *JobCollection) State() CollectionState {
	if c == nil || c.Properties.State == "" {
		return CollectionEnabled
	}
	return c.Properties.State
}

// MaxJobCount returns the effective job limit: the quota's maxJobCount, or
// the plan's.
func (c *JobCollection) MaxJobCount() int {
	n, _ := planQuota(c.Plan())
	if c != nil && c.Properties.Quota != nil && c.Properties.Quota.MaxJobCount > 0 {
		return c.Properties.Quota.MaxJobCount
	}
	return n
}

// MaxRecurrence returns the effective maximum recurrence: the quota's, or
// the plan's.
func (c *JobCollection) MaxRecurrence() MaxRecurrence {
	_, r := planQuota(c.Plan())
	if c != nil && c.Properties.Quota != nil && c.Properties.Quota.MaxRecurrence != nil {
		r = *c.Properties.Quota.MaxRecurrence
		r.Interval = max(r.Interval, 1)
	}
	return r
}

// Validate reports every problem with c as joined [*ValidationError]
// values whose paths start at the collection object ("properties.sku.name").
func (c *JobCollection) Validate() error {
	var errs []error
	add := func(path, value, reason string) {
		errs = append(errs, &ValidationError{Path: path, Value: value, Reason: reason})
	}
	p := c.Properties
	if p.SKU != nil && p.SKU.Name != "" && !p.SKU.Name.Valid() {
		add("properties.sku.name", strconv.Quote(string(p.SKU.Name)), "is not a plan (Free, Standard, P10Premium or P20Premium)")
	}
	if p.State != "" && !p.State.Valid() {
		add("properties.state", strconv.Quote(string(p.State)), "is not a settable state (Enabled, Disabled or Suspended)")
	}
	if q := p.Quota; q != nil {
		if q.MaxJobCount < 0 {
			add("properties.quota.maxJobCount", strconv.Itoa(q.MaxJobCount), "is negative")
		}
		if q.MaxJobOccurrence < 0 {
			add("properties.quota.maxJobOccurrence", strconv.Itoa(q.MaxJobOccurrence), "is negative")
		}
		if m := q.MaxRecurrence; m != nil {
			switch m.Frequency {
			case recurrence.Second, recurrence.Minute, recurrence.Hour, recurrence.Day, recurrence.Week, recurrence.Month:
			case "":
				add("properties.quota.maxRecurrence.frequency", "", "is required (Second, Minute, Hour, Day, Week or Month)")
			default:
				add("properties.quota.maxRecurrence.frequency", strconv.Quote(string(m.Frequency)), "is not a frequency (Second, Minute, Hour, Day, Week or Month)")
			}
			if m.Interval < 0 {
				add("properties.quota.maxRecurrence.interval", strconv.Itoa(m.Interval), "is negative")
			}
		}
	}
	for k := range c.Tags {
		if k == "" {
			add("tags", `""`, "has an empty key")
		}
	}
	var rp checker
	rp.runPolicy("properties.runPolicy", p.RunPolicy)
	rp.limits("properties.limits", p.Limits)
	for _, e := range rp.errs {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// collectionRules are the rules a collection is read by: the members of
// the ARM envelope around it are accepted and dropped, whatever they hold.
var collectionRules = &codec.Rules{
	Ignored: map[reflect.Type]map[string]bool{
		reflect.TypeFor[JobCollection](): {"id": true, "name": true, "type": true, "calendars": true, "checking": true},
	},
}

// collectionPath is the path of problems with a collection definition as a
// whole.
const collectionPath = "collection"

// ParseCollection parses and validates a job collection definition: the
// object shown in the package documentation, or the ARM envelope with "id",
// "name" and "type" (ignored). Comments and trailing commas are accepted.
// It is read as [ParseJob] reads a job: each unknown member, value of the
// wrong type or unknown enumeration value is reported at its path, with
// the valid names close to what was given; the error is joined
// [*ValidationError] values, or a single [*SyntaxError].
func ParseCollection(data []byte) (*JobCollection, error) {
	c := new(JobCollection)
	if err := parseObject(data, collectionRules, collectionPath, c, c.Validate,
		`a job collection is a JSON object such as {"properties": {"sku": {"name": "Standard"}}}`); err != nil {
		return nil, err
	}
	return c, nil
}

// parseObject reads data into v, a pointer to a struct, by rules, then
// reports the problems of reading and those of validate in path order.
// path names the input as a whole; example says what it should look like.
func parseObject(data []byte, rules *codec.Rules, path string, v any, validate func() error, example string) error {
	var d codec.Decoder
	d.Rules = rules
	d.Reset(data)
	s := &d.Scanner
	var top any // the top-level value when it is not an object
	isObject := s.Kind() == jsonc.Object
	if isObject {
		d.Value(reflect.ValueOf(v).Elem())
	} else {
		top, _ = s.Any()
	}
	if s.Finish() != nil {
		return scanError(s, path, example)
	}
	if !isObject {
		return &ValidationError{Path: path, Value: jsonpath.Text(top), Reason: "is not an object"}
	}
	p := problemsOf(d.Problems)
	for _, e := range ValidationErrors(validate()) {
		p.addRule(e)
	}
	return p.inOrder()
}
