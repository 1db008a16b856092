package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jobclock/scheduler/internal/names"
)

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

// PutCollectionOptions are the options of [Scheduler.PutCollection].
type PutCollectionOptions struct {
	// IfMatch, when not empty, makes the write fail with
	// ErrPreconditionFailed unless the collection exists with this ETag.
	IfMatch string
	// IfNoneMatch, when "*", makes the put create the collection only: it
	// fails with ErrPreconditionFailed when the collection exists, checked
	// in the same store write that creates it, so that of several such
	// puts at once exactly one creates it. Empty puts whether the
	// collection exists or not; any other value fails with ErrInvalid at
	// "IfNoneMatch".
	IfNoneMatch string
}

// PatchCollectionOptions are the options of [Scheduler.PatchCollection].
type PatchCollectionOptions struct {
	// IfMatch, when not empty, makes the write fail with
	// ErrPreconditionFailed unless the collection's ETag is this.
	IfMatch string
}

// PutCollection creates the collection or replaces its definition; a
// replaced collection keeps its calendars (see [Scheduler.PutCalendar]),
// whatever def.Calendars holds. def may be nil for a Standard, Enabled collection without tags. Replacing it
// with a quota that its jobs exceed (more jobs than maxJobCount, or a job
// more frequent than maxRecurrence) fails with ErrQuotaExceeded. opts may
// be nil. It returns the stored record; Version 1 means it was created.
func (s *Scheduler) PutCollection(ctx context.Context, name string, def *JobCollection, opts *PutCollectionOptions) (*CollectionRecord, error) {
	return s.putCollection(ctx, s.inStore(), name, def, opts)
}

// putCollection is PutCollection through to.
func (s *Scheduler) putCollection(ctx context.Context, to collectionTarget, name string, def *JobCollection, opts *PutCollectionOptions) (*CollectionRecord, error) {
	if opts == nil {
		opts = &PutCollectionOptions{}
	}
	if def == nil {
		def = &JobCollection{}
	}
	if err := errors.Join(checkName("collection", name), checkIfNoneMatch(opts.IfNoneMatch), def.Validate()); err != nil {
		return nil, err
	}
	return s.writeCollectionTo(ctx, to, name, opts.IfMatch, true, func(old *CollectionRecord) (*JobCollection, error) {
		if opts.IfNoneMatch == "*" && old != nil {
			// A create is written over Version 0, which the store
			// refuses when the collection exists: this check and that
			// write are one step.
			return nil, fmt.Errorf("job collection %q exists: %w", name, ErrPreconditionFailed)
		}
		return keepCalendars(def, old), nil
	})
}

// PatchCollection merges patch, a JSON merge patch (RFC 7386) of the
// collection definition, into the collection and stores the result, with
// the checks of PutCollection; a member given twice in one object of the
// patch, in any case, is refused at its path. opts may be nil.
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
		def, err := ParseCollection(merged)
		if err != nil {
			return nil, err
		}
		return keepCalendars(def, old), nil
	})
}

// keepCalendars returns def with the calendars of old, the stored
// collection (nil when there is none): a collection's definition does not
// carry its calendars, which are written through their own methods. It
// clears the maxRecurrence being checked (JobCollection.Checking): the
// write that marked it then fails with ErrConflict, and a mark left by an
// instance that stopped during its check goes with the next write.
func keepCalendars(def *JobCollection, old *CollectionRecord) *JobCollection {
	c := *def
	c.Calendars, c.Checking = nil, nil
	if old != nil {
		c.Calendars = old.Definition.Calendars
	}
	return &c
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

// collectionTarget is where a write of a collection goes: the
// Scheduler's store (inStore), or the view of a host's transaction (tx
// set; see PutCollectionTx).
type collectionTarget struct {
	st CollectionTxStore
	tx bool
}

// inStore returns the target of a write of a collection into the
// Scheduler's store.
func (s *Scheduler) inStore() collectionTarget { return collectionTarget{st: s.store} }

// writeCollection is writeCollectionTo the Scheduler's store.
func (s *Scheduler) writeCollection(ctx context.Context, name, ifMatch string, create bool, build func(old *CollectionRecord) (*JobCollection, error)) (*CollectionRecord, error) {
	return s.writeCollectionTo(ctx, s.inStore(), name, ifMatch, create, build)
}

// writeCollectionTo reads the collection from to, builds its new
// definition, checks the quota against its jobs and writes it back,
// retrying lost races. Inside a host's transaction, a stricter
// maxRecurrence than the stored one is refused (see PutCollectionTx).
func (s *Scheduler) writeCollectionTo(ctx context.Context, to collectionTarget, name, ifMatch string, create bool, build func(old *CollectionRecord) (*JobCollection, error)) (*CollectionRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	for range maxWriteAttempts {
		old, err := to.st.GetCollection(ctx, name)
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
		def = dropStaleMarks(def, now)
		r := &CollectionRecord{Name: name, Definition: *def.Clone(), ETag: newETag(), Created: now, Updated: now}
		if exists {
			r.Version, r.Created = old.Version, old.Created
			if stricter(old, r) && to.tx {
				return nil, fmt.Errorf("put job collection %q: maxRecurrence %s, stricter than the stored %s, is not written inside a transaction "+
					"(its jobs are checked against it in steps that other writers must see): write it with PutCollection: %w",
					name, r.Definition.MaxRecurrence(), old.Definition.MaxRecurrence(), errors.ErrUnsupported)
			}
			if stricter(old, r) {
				r, err = s.tighten(ctx, old, r, ifMatch, build)
				if errors.Is(err, errWriteAgain) {
					continue
				}
				return r, err
			}
		}
		err = to.st.PutCollection(ctx, r)
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if to.tx {
			// The record is the transaction's until the host commits:
			// the policies are read again from the store.
			r.Version++
			s.afterTx(name, "")
			return r, nil
		}
		return s.wroteCollection(r, now), nil
	}
	return nil, fmt.Errorf("put job collection %q: too many concurrent writes: %w", name, ErrConflict)
}

// wroteCollection is what follows a write of r at now: r's version is the
// stored one, and this instance's jobs follow r at once.
func (s *Scheduler) wroteCollection(r *CollectionRecord, now time.Time) *CollectionRecord {
	r.Version++
	// A copy: r is the caller's.
	s.policies.set(&CollectionRecord{Name: r.Name, Version: r.Version, Definition: *r.Definition.Clone()}, now)
	s.wrote(r.Name, "")
	return r
}

// againAfterOutage runs write, the write that ends a check of a
// collection's jobs (and clears its mark), again when it reports that the
// store failed (outage), up to maxWriteAttempts times with pauses growing
// from 10 ms to 1 s, until ctx is done; it returns write's last error.
// Left behind, the mark would hold up puts of jobs for MarkLifetime.
func againAfterOutage(ctx context.Context, write func() (outage bool, err error)) error {
	pause := 10 * time.Millisecond
	for try := 1; ; try++ {
		outage, err := write()
		if !outage || try == maxWriteAttempts {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// dropStaleMarks returns def without the marks older than MarkLifetime at
// now (JobCollection.Checking, CalendarEntry.Next, CalendarEntry.Deleting):
// a copy when it drops one, def otherwise.
func dropStaleMarks(def *JobCollection, now time.Time) *JobCollection {
	c := def
	if def.Checking != nil && !def.Checking.Live(now) {
		c = def.Clone()
		c.Checking = nil
	}
	for name, e := range def.Calendars {
		staleNext, staleDeleting := e.Next != nil && e.Pending(now) == nil, e.Deleting && !e.BeingDeleted(now)
		if !staleNext && !staleDeleting {
			continue
		}
		if c == def {
			c = def.Clone()
		}
		if staleNext {
			c.Calendars[name].Next = nil
		}
		if staleDeleting {
			c.Calendars[name].Deleting, c.Calendars[name].DeletingAt = false, time.Time{}
		}
	}
	return c
}

// errWriteAgain asks writeCollection to start over from a fresh read.
var errWriteAgain = errors.New("write again")

// stricter reports whether r, a write of the collection old, allows its
// jobs to recur less often than old does.
func stricter(old, r *CollectionRecord) bool {
	return r.Definition.MaxRecurrence().Period() > old.Definition.MaxRecurrence().Period()
}

// tighten writes r, the collection old with a stricter maxRecurrence,
// in three steps, as PutCalendar writes a calendar: it marks old with the
// maxRecurrence to check (JobCollection.Checking), which puts of jobs
// honour from then on, checks the collection's jobs against it, then
// writes the definition build makes of the collection as it is then, or
// clears the mark and fails. A put of a job that the check does not see
// sees the mark, or the stricter maxRecurrence, when it reads the
// collection again after its write (see recheckPut). errWriteAgain when
// another write came before the mark.
func (s *Scheduler) tighten(ctx context.Context, old, r *CollectionRecord, ifMatch string, build func(old *CollectionRecord) (*JobCollection, error)) (*CollectionRecord, error) {
	check := &QuotaCheck{ID: newETag(), MaxRecurrence: r.Definition.MaxRecurrence(), At: time.Now()}
	marked := *old
	marked.Definition = *old.Definition.Clone()
	marked.Definition.Checking = check
	marked.Updated = time.Now()
	if err := s.store.PutCollection(ctx, &marked); errors.Is(err, ErrConflict) {
		return nil, errWriteAgain
	} else if err != nil {
		return nil, err
	}
	checked := s.checkJobsFit(ctx, old, r)
	if checked == nil && time.Since(check.At) > MarkLifetime/2 {
		checked = fmt.Errorf("put job collection %q: its jobs took longer than %v to check against maxRecurrence %s: %w", old.Name, MarkLifetime/2, check.MaxRecurrence, ErrConflict)
	}
	var done *CollectionRecord
	err := againAfterOutage(ctx, func() (outage bool, err error) {
		done, outage, err = s.settleTighten(ctx, old, check, ifMatch, checked, build)
		return outage, err
	})
	return done, err
}

// settleTighten is the last step of tighten: it writes the definition
// build makes of the collection as it is now, or only clears the mark
// check when checked (the outcome of the check) is not nil, or another
// write came meanwhile. outage reports that err is a failure of the store.
func (s *Scheduler) settleTighten(ctx context.Context, old *CollectionRecord, check *QuotaCheck, ifMatch string, checked error, build func(old *CollectionRecord) (*JobCollection, error)) (_ *CollectionRecord, outage bool, _ error) {
	for range maxWriteAttempts {
		cur, err := s.store.GetCollection(ctx, old.Name)
		if err != nil {
			return nil, transient(err), err
		}
		if c := cur.Definition.Checking; c == nil || c.ID != check.ID {
			return nil, false, fmt.Errorf("put job collection %q: another write of it came while its jobs were checked against maxRecurrence %s: %w", old.Name, check.MaxRecurrence, ErrConflict)
		}
		next := *cur
		next.Definition = *cur.Definition.Clone()
		next.Definition.Checking = nil
		now := time.Now()
		next.Updated = now
		if checked == nil {
			if err := preconditions("job collection", old.Name, ifMatch, cur.ETag, true); err != nil {
				checked = err
			} else if def, err := build(cur); err != nil {
				checked = err
			} else if def.MaxRecurrence().Period() > check.MaxRecurrence.Period() {
				checked = fmt.Errorf("put job collection %q: another write of it came while its jobs were checked against maxRecurrence %s: %w", old.Name, check.MaxRecurrence, ErrConflict)
			} else {
				next.Definition = *def.Clone()
				next.Definition.Checking = nil
				next.ETag = newETag()
			}
		}
		err = s.store.PutCollection(ctx, &next)
		if errors.Is(err, ErrConflict) {
			continue
		}
		if errors.Is(err, ErrQuotaExceeded) && checked == nil {
			// The collection holds more jobs than the new definition
			// allows: clear the mark, and fail with that.
			checked = err
			continue
		}
		if err != nil {
			return nil, transient(err), err
		}
		if checked != nil {
			return nil, false, checked
		}
		return s.wroteCollection(&next, now), false, nil
	}
	return nil, false, fmt.Errorf("put job collection %q: too many concurrent writes: %w", old.Name, ErrConflict)
}

func etagOfCollection(r *CollectionRecord) string {
	if r == nil {
		return ""
	}
	return r.ETag
}

// checkJobsFit checks the jobs of old against the stricter recurrence
// quota of r (see tighten). (The job count is checked by the store,
// atomically.)
func (s *Scheduler) checkJobsFit(ctx context.Context, old, r *CollectionRecord) error {
	for skip := 0; ; skip += 1000 {
		jobs, err := s.store.ListJobs(ctx, old.Name, JobFilter{Skip: skip, Top: 1000})
		if err != nil {
			return err
		}
		for _, j := range jobs {
			if j.State.Final() {
				continue
			}
			t, err := s.timing(j, time.Now())
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
	if err := s.readable(); err != nil {
		return nil, err
	}
	if err := checkName("collection", name); err != nil {
		return nil, err
	}
	return s.store.GetCollection(ctx, name)
}

// ListCollections returns every collection, ordered by name.
func (s *Scheduler) ListCollections(ctx context.Context) ([]*CollectionRecord, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	return s.store.ListCollections(ctx)
}

// DeleteCollectionOptions are the options of [Scheduler.DeleteCollection].
type DeleteCollectionOptions struct {
	// IfMatch, when not empty, makes the deletion fail with
	// ErrPreconditionFailed, deleting nothing, unless the collection
	// exists with this ETag ("*": exists at all), checked by the store in
	// the write that deletes it ([Store.DeleteCollection]).
	IfMatch string
}

// DeleteCollection deletes the collection with its jobs and their history.
// A collection that does not exist is an error matching ErrNotFound, or
// ErrPreconditionFailed when opts.IfMatch is set. opts may be nil.
func (s *Scheduler) DeleteCollection(ctx context.Context, name string, opts *DeleteCollectionOptions) error {
	if err := s.live(); err != nil {
		return err
	}
	if err := checkName("collection", name); err != nil {
		return err
	}
	var ifMatch string
	if opts != nil {
		ifMatch = opts.IfMatch
	}
	if err := deleteIfMatch(ifMatch, func(etag string) error { return s.store.DeleteCollection(ctx, name, etag) }); err != nil {
		return err
	}
	s.wrote(name, "")
	s.policies.m.Delete(name)
	s.putCols.Delete(name)
	return nil
}
