package scheduler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tailscale/hujson"

	"github.com/jobclock/scheduler/internal/names"
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
func (s CollectionState) Valid() bool { return oneOf(s, collectionStates) }

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given for validation to report.
func (s *CollectionState) UnmarshalJSON(b []byte) error { return unmarshalEnum(b, s, collectionStates) }

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
func (n SKUName) Valid() bool { return oneOf(n, skuNames) }

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given for validation to report.
func (n *SKUName) UnmarshalJSON(b []byte) error { return unmarshalEnum(b, n, skuNames) }

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
	// Frequency is Minute, Hour, Day, Week or Month.
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
}

// JobCollection is the definition of a job collection.
type JobCollection struct {
	// Location is free text kept for compatibility with the ARM API.
	Location string `json:"location,omitempty"`
	// Tags are free key/value pairs kept with the collection.
	Tags map[string]string `json:"tags,omitempty"`
	// Properties holds the plan, state and quota.
	Properties CollectionProperties `json:"properties"`
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
			case recurrence.Minute, recurrence.Hour, recurrence.Day, recurrence.Week, recurrence.Month:
			case "":
				add("properties.quota.maxRecurrence.frequency", "", "is required (Minute, Hour, Day, Week or Month)")
			default:
				add("properties.quota.maxRecurrence.frequency", strconv.Quote(string(m.Frequency)), "is not a frequency (Minute, Hour, Day, Week or Month)")
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
	return errors.Join(errs...)
}

// ParseCollection parses and validates a job collection definition: the
// object shown in the package documentation, or the ARM envelope with "id",
// "name" and "type" (ignored). Comments and trailing commas are accepted;
// unknown fields are an error naming the field.
func ParseCollection(data []byte) (*JobCollection, error) {
	std, err := hujson.Standardize(bytes.Clone(data))
	if err != nil {
		return nil, &ValidationError{Path: "collection", Reason: "is not JSON: " + err.Error()}
	}
	var env struct {
		JobCollection
		ID   any `json:"id"`
		Name any `json:"name"`
		Type any `json:"type"`
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return nil, &ValidationError{Path: "collection", Reason: decodeReason(err)}
	}
	c := &env.JobCollection
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeReason turns an encoding/json error into a reason that names the
// field where it can.
func decodeReason(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q: expected %s, got JSON %s", te.Field, te.Type, te.Value)
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown field " + f
	}
	return strings.TrimPrefix(msg, "json: ")
}

// validScope reports whether scope, the part of a collection name before
// its last '/', is at most MaxScopeSegments valid segments.
func validScope(scope string) bool {
	for n := 1; ; n++ {
		seg, rest, more := strings.Cut(scope, "/")
		if n > MaxScopeSegments || !names.ValidScope(seg) {
			return false
		}
		if !more {
			return true
		}
		scope = rest
	}
}

// MaxScopeSegments is the number of scope segments a collection name may
// carry before the name itself: "team/reports" has one,
// "subscription/resourceGroup/reports" two. The management API uses them
// to keep tenants apart.
const MaxScopeSegments = 2

// checkName validates a collection or job name; field names the argument
// ("collection" or "job"). A collection name may be preceded by up to
// MaxScopeSegments scope segments separated by '/'.
func checkName(field, name string) error {
	if field == "collection" {
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			if !validScope(name[:i]) {
				return &ValidationError{Path: field, Value: strconv.Quote(name), Reason: fmt.Sprintf(
					"has a bad scope: at most %d segments before the name, each 1 to 90 characters of letters, digits, '-', '_', '.', '(' and ')'", MaxScopeSegments)}
			}
			return checkName(field, name[i+1:])
		}
	}
	if names.Valid(name) {
		return nil
	}
	reason := "is not a valid name: 1 to 100 characters, starting with a letter, of letters, digits, '-' and '_'"
	if name == "" {
		reason = "is required"
	} else if len(name) > 100 {
		reason = fmt.Sprintf("is %d characters long, more than 100", len(name))
	}
	return &ValidationError{Path: field, Value: strconv.Quote(name), Reason: reason}
}

func oneOf[T comparable](v T, set []T) bool {
	for _, k := range set {
		if v == k {
			return true
		}
	}
	return false
}

func unmarshalEnum[T ~string](b []byte, dst *T, set []T) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*dst = T(s)
	for _, k := range set {
		if strings.EqualFold(s, string(k)) {
			*dst = k
		}
	}
	return nil
}

// PutCollectionOptions are the options of [Scheduler.PutCollection].
type PutCollectionOptions struct {
	// IfMatch, when not empty, makes the write fail with
	// ErrPreconditionFailed unless the collection exists with this ETag.
	IfMatch string
}

// PatchCollectionOptions are the options of [Scheduler.PatchCollection].
type PatchCollectionOptions struct {
	// IfMatch, when not empty, makes the write fail with
	// ErrPreconditionFailed unless the collection's ETag is this.
	IfMatch string
}

// PutCollection creates the collection or replaces its definition. def
// may be nil for a Standard, Enabled collection without tags. Replacing it
// with a quota that its jobs exceed (more jobs than maxJobCount, or a job
// more frequent than maxRecurrence) fails with ErrQuotaExceeded. opts may
// be nil. It returns the stored record; Version 1 means it was created.
func (s *Scheduler) PutCollection(ctx context.Context, name string, def *JobCollection, opts *PutCollectionOptions) (*CollectionRecord, error) {
	if opts == nil {
		opts = &PutCollectionOptions{}
	}
	if def == nil {
		def = &JobCollection{}
	}
	if err := errors.Join(checkName("collection", name), def.Validate()); err != nil {
		return nil, err
	}
	return s.writeCollection(ctx, name, opts.IfMatch, true, func(*CollectionRecord) (*JobCollection, error) {
		return def, nil
	})
}

// PatchCollection merges patch, a JSON merge patch (RFC 7386) of the
// collection definition, into the collection and stores the result, with
// the checks of PutCollection. opts may be nil.
func (s *Scheduler) PatchCollection(ctx context.Context, name string, patch []byte, opts *PatchCollectionOptions) (*CollectionRecord, error) {
	if opts == nil {
		opts = &PatchCollectionOptions{}
	}
	if err := checkName("collection", name); err != nil {
		return nil, err
	}
	p, err := parsePatch(patch, "collection")
	if err != nil {
		return nil, err
	}
	return s.writeCollection(ctx, name, opts.IfMatch, false, func(old *CollectionRecord) (*JobCollection, error) {
		base, err := json.Marshal(old.Definition)
		if err != nil {
			return nil, err
		}
		var doc map[string]any
		if err := json.Unmarshal(base, &doc); err != nil {
			return nil, err
		}
		merged, err := json.Marshal(mergePatch(doc, p))
		if err != nil {
			return nil, err
		}
		return ParseCollection(merged)
	})
}

// EnableCollection sets the collection's state to Enabled: its jobs run
// again, occurrences missed meanwhile handled by Config.Misfire.
func (s *Scheduler) EnableCollection(ctx context.Context, name string) (*CollectionRecord, error) {
	return s.PatchCollection(ctx, name, []byte(`{"properties":{"state":"Enabled"}}`), nil)
}

// DisableCollection sets the collection's state to Disabled: none of its
// jobs runs until it is enabled again; the jobs keep their own states.
func (s *Scheduler) DisableCollection(ctx context.Context, name string) (*CollectionRecord, error) {
	return s.PatchCollection(ctx, name, []byte(`{"properties":{"state":"Disabled"}}`), nil)
}

// writeCollection reads the collection, builds its new definition, checks
// the quota against its jobs and writes it back, retrying lost races.
func (s *Scheduler) writeCollection(ctx context.Context, name, ifMatch string, create bool, build func(old *CollectionRecord) (*JobCollection, error)) (*CollectionRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	for range maxWriteAttempts {
		old, err := s.store.GetCollection(ctx, name)
		if err != nil && !(create && errors.Is(err, ErrNotFound)) {
			return nil, err
		}
		exists := err == nil
		if err := preconditions("job collection", name, ifMatch, etagOfCollection(old), exists); err != nil {
			return nil, err
		}
		def, err := build(old)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		r := &CollectionRecord{Name: name, Definition: def.clone(), ETag: newETag(), Created: now, Updated: now}
		if exists {
			r.Version, r.Created = old.Version, old.Created
			if err := s.checkJobsFit(ctx, old, r); err != nil {
				return nil, err
			}
		}
		err = s.store.PutCollection(ctx, r)
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		r.Version++
		s.notify()
		return r, nil
	}
	return nil, fmt.Errorf("put job collection %q: too many concurrent writes: %w", name, ErrConflict)
}

func etagOfCollection(r *CollectionRecord) string {
	if r == nil {
		return ""
	}
	return r.ETag
}

// checkJobsFit checks the jobs of old against the stricter recurrence
// quota of r. (The job count is checked by the store, atomically.)
func (s *Scheduler) checkJobsFit(ctx context.Context, old, r *CollectionRecord) error {
	if r.Definition.MaxRecurrence().Period() <= old.Definition.MaxRecurrence().Period() {
		return nil
	}
	for skip := 0; ; skip += 1000 {
		jobs, err := s.store.ListJobs(ctx, old.Name, JobFilter{Skip: skip, Top: 1000})
		if err != nil {
			return err
		}
		for _, j := range jobs {
			if j.State.Final() {
				continue
			}
			t, err := s.timings.get(j, nil)
			if err != nil {
				continue
			}
			if err := checkRecurrenceQuota(r, j.Name, t); err != nil {
				return err
			}
		}
		if len(jobs) < 1000 {
			return nil
		}
	}
}

// GetCollection returns the collection, or an error matching ErrNotFound.
func (s *Scheduler) GetCollection(ctx context.Context, name string) (*CollectionRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	if err := checkName("collection", name); err != nil {
		return nil, err
	}
	return s.store.GetCollection(ctx, name)
}

// ListCollections returns every collection, ordered by name.
func (s *Scheduler) ListCollections(ctx context.Context) ([]*CollectionRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	return s.store.ListCollections(ctx)
}

// DeleteCollection deletes the collection with its jobs and their history.
func (s *Scheduler) DeleteCollection(ctx context.Context, name string) error {
	if err := s.live(); err != nil {
		return err
	}
	if err := checkName("collection", name); err != nil {
		return err
	}
	return s.store.DeleteCollection(ctx, name)
}
