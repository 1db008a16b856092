package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobclock/scheduler/internal/jsonc"
	"github.com/jobclock/scheduler/internal/suggest"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/recurrence"
)

// engineError turns an error of the engine into an API error. prefix is
// prepended to validation paths that lack it.
func (h *handler) engineError(ctx context.Context, rq *request, err error, prefix string) error {
	var ae *apiError
	var qe *scheduler.QuotaError
	var rfe *recurrence.FieldError
	var ciu *scheduler.CalendarInUseError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae):
		return ae
	case errors.Is(err, scheduler.ErrPreconditionFailed):
		what := "job collection '" + rq.sc.jc + "'"
		var gerr error
		switch {
		case rq.calendar != "":
			what = "calendar '" + rq.calendar + "'"
			_, gerr = h.s.GetCalendar(ctx, rq.sc.key(), rq.calendar)
		case rq.job != "":
			what = "job '" + rq.job + "'"
			_, gerr = h.s.GetJob(ctx, rq.sc.key(), rq.job)
		default:
			_, gerr = h.s.GetCollection(ctx, rq.sc.key())
		}
		if errors.Is(gerr, scheduler.ErrNotFound) {
			return newError(http.StatusPreconditionFailed, CodePreconditionFailed, "If-Match",
				"The If-Match header requires the %s to exist, and it does not.", what)
		}
		return newError(http.StatusPreconditionFailed, CodePreconditionFailed, "If-Match",
			"The If-Match header does not match the current ETag of the %s.", what)
	case errors.Is(err, scheduler.ErrNotFound):
		return h.notFound(ctx, rq)
	case errors.As(err, &qe):
		return newError(http.StatusConflict, CodeQuotaExceeded, "",
			"The job collection '%s' would exceed its %s quota (%s): %s.", rq.sc.jc, qe.Quota, qe.Limit, h.local(rq, qe.Reason))
	case errors.Is(err, scheduler.ErrQuotaExceeded):
		return newError(http.StatusConflict, CodeQuotaExceeded, "",
			"The job collection '%s' would exceed its quota: %s.", rq.sc.jc, h.local(rq, err.Error()))
	case errors.As(err, &ciu):
		return newError(http.StatusConflict, CodeConflict, "",
			"The calendar '%s' cannot be deleted: %s; change or delete those jobs first.", ciu.Calendar, h.local(rq, ciu.Error()))
	case errors.Is(err, scheduler.ErrFinalState):
		state := "Completed or Faulted"
		if j, gerr := h.s.GetJob(ctx, rq.sc.key(), rq.job); gerr == nil && j.State.Final() {
			state = string(j.State) // read again: the error does not carry it
		}
		return newError(http.StatusConflict, CodeConflict, "",
			"The job '%s' is %s, a final state: it cannot be changed or run; delete it or replace it with PUT.", rq.job, state)
	case errors.Is(err, scheduler.ErrCollectionNotEnabled):
		return newError(http.StatusConflict, CodeConflict, "",
			"The job collection '%s' is not Enabled: enable it before running its jobs.", rq.sc.jc)
	case errors.Is(err, scheduler.ErrInvalid):
		return validationError(err, prefix)
	case errors.As(err, &rfe):
		// A recurrence that validates but cannot be expanded.
		target := "properties.recurrence." + rfe.Path
		return badRequest(target, "%s: %s", target, rfe.Reason)
	case errors.Is(err, scheduler.ErrConflict):
		return newError(http.StatusConflict, CodeConflict, "",
			"The resource was changed by another request at the same time. Please retry the request.")
	}
	return err
}

// local rewrites engine text for the caller: the scoped collection name
// becomes the collection's own name.
func (h *handler) local(rq *request, s string) string {
	return trimPrefix(strings.ReplaceAll(s, rq.sc.key(), rq.sc.jc))
}

// notFound says what is missing: the collection, the job or the
// calendar.
func (h *handler) notFound(ctx context.Context, rq *request) error {
	if rq.calendar != "" {
		if _, err := h.s.GetCollection(ctx, rq.sc.key()); err == nil {
			return newError(http.StatusNotFound, CodeResourceNotFound, "",
				"The calendar '%s' was not found in job collection '%s'.", rq.calendar, rq.sc.jc)
		}
	}
	if rq.job != "" {
		if _, err := h.s.GetCollection(ctx, rq.sc.key()); err == nil {
			return newError(http.StatusNotFound, CodeResourceNotFound, "",
				"The job '%s' was not found in job collection '%s'.", rq.job, rq.sc.jc)
		}
	}
	return newError(http.StatusNotFound, CodeResourceNotFound, "",
		"The job collection '%s' was not found in resource group '%s'.", rq.sc.jc, rq.sc.rg)
}

// Collections.

func (h *handler) listCollectionsBySubscription(w http.ResponseWriter, r *http.Request) error {
	return h.listCollections(w, r, false)
}

func (h *handler) listCollectionsByResourceGroup(w http.ResponseWriter, r *http.Request) error {
	return h.listCollections(w, r, true)
}

func (h *handler) listCollections(w http.ResponseWriter, r *http.Request, byRG bool) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	all, err := h.s.ListCollections(r.Context())
	if err != nil {
		return h.engineError(r.Context(), rq, err, "")
	}
	out := JobCollectionListResult{Value: []JobCollectionDefinition{}}
	for _, c := range all {
		sc, ok := splitKey(c.Name)
		if !ok || sc.sub != rq.sc.sub || byRG && sc.rg != rq.sc.rg {
			continue
		}
		out.Value = append(out.Value, collectionResource(sc, c))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *handler) getCollection(w http.ResponseWriter, r *http.Request) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	c, err := h.s.GetCollection(r.Context(), rq.sc.key())
	if err != nil {
		return h.engineError(r.Context(), rq, err, "")
	}
	setETag(w, c.ETag)
	writeJSON(w, http.StatusOK, collectionResource(rq.sc, c))
	return nil
}

func (h *handler) putCollection(w http.ResponseWriter, r *http.Request) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	data, err := h.body(w, r)
	if err != nil {
		return err
	}
	if err := sameResource(data, "job collection", rq.sc.collectionID(), rq.sc.jc); err != nil {
		return err
	}
	createOnly, err := ifNoneMatch(r)
	if err != nil {
		return err
	}
	def, err := scheduler.ParseCollection(data)
	if err != nil {
		return validationError(err, "")
	}
	c, err := h.replaceCollection(r.Context(), rq, def, givesMember(data, "location"), ifMatch(r), createOnly)
	if err != nil {
		return h.engineError(r.Context(), rq, err, "")
	}
	status := http.StatusOK
	if c.Version == 1 {
		status = http.StatusCreated
	}
	setETag(w, c.ETag)
	writeJSON(w, status, collectionResource(rq.sc, c))
	return nil
}

// replaceCollection puts def as the collection of rq. It reads the
// collection first: with createOnly (If-None-Match: *) one that exists is
// left as it is (412); one whose location the body changes is left as it
// is too (409 InvalidResourceLocation, as ARM answers); without a location
// in the body (withLocation false), or with the one it has in another
// spelling (see sameLocation), the collection keeps the location it has,
// as it spells it. It then writes on condition that the collection is still the one
// it read, answering 409 when another write came between (unless the
// request's own If-Match, ifMatch, decides).
func (h *handler) replaceCollection(ctx context.Context, rq *request, def *scheduler.JobCollection, withLocation bool, ifMatch string, createOnly bool) (*scheduler.CollectionRecord, error) {
	key := rq.sc.key()
	guard := false // the write is conditional on the read below, not on the request's If-Match
	cur, err := h.s.GetCollection(ctx, key)
	switch {
	case err == nil:
		if createOnly {
			return nil, existsFailed("job collection '" + rq.sc.jc + "'")
		}
		if withLocation {
			if err := locationKept(rq, cur, def.Location); err != nil {
				return nil, err
			}
		}
		if !withLocation || cur.Definition.Location != "" {
			def.Location = cur.Definition.Location // as it spells it
		}
		if ifMatch == "" || ifMatch == "*" {
			ifMatch, guard = cur.ETag, true
		}
	case !errors.Is(err, scheduler.ErrNotFound):
		return nil, err
	}
	opts := &scheduler.PutCollectionOptions{IfMatch: ifMatch}
	if createOnly {
		opts.IfNoneMatch = "*"
	}
	c, err := h.s.PutCollection(ctx, key, def, opts)
	switch {
	case guard && errors.Is(err, scheduler.ErrPreconditionFailed):
		return nil, changedMeanwhile(rq)
	case createOnly && ifMatch == "" && errors.Is(err, scheduler.ErrPreconditionFailed):
		// Another request created it after the read above.
		return nil, existsFailed("job collection '" + rq.sc.jc + "'")
	}
	return c, err
}

// existsFailed is the 412 of a create-only PUT (If-None-Match: *) of the
// resource what ("job 'j1'"), which exists.
func existsFailed(what string) error {
	return newError(http.StatusPreconditionFailed, CodePreconditionFailed, "If-None-Match",
		"The %s exists, and the If-None-Match header '*' only creates it.", what)
}

// createOnlyFailed returns the 412 of a create-only PUT (If-None-Match: *)
// of the resource what that failed with err, when err matches
// ErrPreconditionFailed because the resource exists: always when the
// request has no If-Match header (ifMatch empty), else when get, a read
// made now, finds it (otherwise the If-Match header is at fault, which
// engineError reports). nil when that is not the case.
func createOnlyFailed(what, ifMatch string, err error, get func() error) error {
	if !errors.Is(err, scheduler.ErrPreconditionFailed) || ifMatch != "" && get() != nil {
		return nil
	}
	return existsFailed(what)
}

// noneMatchRefused checks the If-None-Match header of a PATCH or DELETE
// of the resource what ("job 'j1'"), which get reads: without one the
// request goes on (nil). With "*", which holds only for a resource that
// does not exist (RFC 9110), neither method can act: the answer is 412 at
// If-None-Match when get finds the resource, and what get failed with
// (404) when it does not, so that the request changes nothing. Any other
// value is 400 at If-None-Match, as for a PUT.
func (h *handler) noneMatchRefused(r *http.Request, rq *request, what string, get func() error) error {
	star, err := ifNoneMatch(r)
	if err != nil || !star {
		return err
	}
	if err := get(); err != nil {
		return h.engineError(r.Context(), rq, err, "")
	}
	return newError(http.StatusPreconditionFailed, CodePreconditionFailed, "If-None-Match",
		"The %s exists, and the If-None-Match header '*' holds only for one that does not: the %s changed nothing.", what, r.Method)
}

// collectionExists, jobExists and calendarExists read the resource of rq
// for noneMatchRefused and createOnlyFailed.
func (h *handler) collectionExists(r *http.Request, rq *request) func() error {
	return func() error {
		_, err := h.s.GetCollection(r.Context(), rq.sc.key())
		return err
	}
}

func (h *handler) jobExists(r *http.Request, rq *request) func() error {
	return func() error {
		_, err := h.s.GetJob(r.Context(), rq.sc.key(), rq.job)
		return err
	}
}

func (h *handler) calendarExists(r *http.Request, rq *request) func() error {
	return func() error {
		_, err := h.s.GetCalendar(r.Context(), rq.sc.key(), rq.calendar)
		return err
	}
}

// changedMeanwhile is the error of a write of the collection of rq that
// was conditional on a read of it, when another write came between.
func changedMeanwhile(rq *request) error {
	return newError(http.StatusConflict, CodeConflict, "",
		"The job collection '%s' was changed by another request while this one was checked against it. Please retry the request.", rq.sc.jc)
}

// locationKept refuses a write that would move the collection cur to
// another location (409 InvalidResourceLocation, as ARM answers); a
// collection without a location takes any.
func locationKept(rq *request, cur *scheduler.CollectionRecord, location string) error {
	if cur.Definition.Location == "" || sameLocation(cur.Definition.Location, location) {
		return nil
	}
	return newError(http.StatusConflict, CodeInvalidResourceLocation, "location",
		"The resource '%s' already exists in location '%s' in resource group '%s'. A resource with the same name cannot be created in location '%s'. Please select a new resource name.",
		rq.sc.jc, cur.Definition.Location, rq.sc.rg, location)
}

// sameLocation reports whether two spellings name one Azure location, as
// ARM compares them: without regard to case and spaces ("West Europe" and
// "westeurope").
func sameLocation(a, b string) bool {
	squash := func(s string) string { return strings.ReplaceAll(s, " ", "") }
	return strings.EqualFold(squash(a), squash(b))
}

// ifNoneMatch reports whether r's If-None-Match header is "*" (create
// only); any value other than "*" or none is a 400.
func ifNoneMatch(r *http.Request) (bool, error) {
	switch v := strings.TrimSpace(r.Header.Get("If-None-Match")); v {
	case "":
		return false, nil
	case "*":
		return true, nil
	default:
		return false, badRequest("If-None-Match", "The If-None-Match header must be '*' (create only) or absent, not '%s'.", v)
	}
}

// givesMember reports whether the JSON object data has the top-level
// member name (in any case) with a value other than null.
func givesMember(data []byte, name string) bool {
	s := jsonc.NewScanner(data)
	if s.Kind() != jsonc.Object {
		return false
	}
	found := false
	s.Object(func(member []byte) bool {
		if strings.EqualFold(string(member), name) && s.Kind() != jsonc.Null {
			found = true
			return false
		}
		return s.Skip()
	})
	return found
}

func (h *handler) patchCollection(w http.ResponseWriter, r *http.Request) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	data, err := h.body(w, r)
	if err != nil {
		return err
	}
	if err := sameResource(data, "job collection", rq.sc.collectionID(), rq.sc.jc); err != nil {
		return err
	}
	if err := h.noneMatchRefused(r, rq, "job collection '"+rq.sc.jc+"'", h.collectionExists(r, rq)); err != nil {
		return err
	}
	opts := &scheduler.PatchCollectionOptions{IfMatch: ifMatch(r)}
	guard := false // the write is conditional on the read below, not on the request's If-Match
	if location, ok := patchLocation(data); ok {
		// A patch may not move the collection, as a PUT may not: it is
		// checked against the collection read here, and written only
		// if that is still the one stored.
		cur, err := h.s.GetCollection(r.Context(), rq.sc.key())
		if err != nil {
			return h.engineError(r.Context(), rq, err, "")
		}
		if err := locationKept(rq, cur, location); err != nil {
			return err
		}
		if l := cur.Definition.Location; l != "" && l != location {
			data = respelled(data, l) // the same location: it keeps its spelling
		}
		if opts.IfMatch == "" || opts.IfMatch == "*" {
			opts.IfMatch, guard = cur.ETag, true
		}
	}
	c, err := h.s.PatchCollection(r.Context(), rq.sc.key(), data, opts)
	if guard && errors.Is(err, scheduler.ErrPreconditionFailed) {
		return changedMeanwhile(rq)
	}
	if err != nil {
		return h.engineError(r.Context(), rq, err, "")
	}
	setETag(w, c.ETag)
	writeJSON(w, http.StatusOK, collectionResource(rq.sc, c))
	return nil
}

// patchLocation returns the location a collection's merge patch sets,
// and whether it sets one (a string; null removes nothing here, and a
// value of another kind is left for the Scheduler to refuse).
func patchLocation(data []byte) (string, bool) {
	if !givesMember(data, "location") {
		return "", false
	}
	var p struct {
		Location *string `json:"location"`
	}
	if json.Unmarshal(data, &p) != nil || p.Location == nil {
		return "", false
	}
	return *p.Location, true
}

// respelled returns the merge patch data with location as the string
// value of its top-level member "location" (in any case), in place of
// the spelling it gives.
func respelled(data []byte, location string) []byte {
	s := jsonc.NewScanner(data)
	if s.Kind() != jsonc.Object {
		return data
	}
	type span struct{ from, to int }
	var at []span
	s.Object(func(member []byte) bool {
		if !strings.EqualFold(string(member), "location") || s.Kind() != jsonc.String {
			return s.Skip()
		}
		from := s.Offset()
		raw, ok := s.Raw()
		at = append(at, span{from, from + len(raw)})
		return ok
	})
	if s.Err() != nil {
		return data
	}
	quoted, _ := json.Marshal(location)
	out := make([]byte, 0, len(data)+len(quoted))
	last := 0
	for _, a := range at {
		out = append(append(out, data[last:a.from]...), quoted...)
		last = a.to
	}
	return append(out, data[last:]...)
}

func (h *handler) deleteCollection(w http.ResponseWriter, r *http.Request) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	if err := h.noneMatchRefused(r, rq, "job collection '"+rq.sc.jc+"'", h.collectionExists(r, rq)); err != nil {
		return err
	}
	if err := h.s.DeleteCollection(r.Context(), rq.sc.key(), &scheduler.DeleteCollectionOptions{IfMatch: ifMatch(r)}); err != nil {
		return h.engineError(r.Context(), rq, err, "")
	}
	writeEmpty(w, http.StatusOK)
	return nil
}

func (h *handler) enableCollection(w http.ResponseWriter, r *http.Request) error {
	return h.setCollectionState(w, r, (*scheduler.Scheduler).EnableCollection)
}

func (h *handler) disableCollection(w http.ResponseWriter, r *http.Request) error {
	return h.setCollectionState(w, r, (*scheduler.Scheduler).DisableCollection)
}

func (h *handler) setCollectionState(w http.ResponseWriter, r *http.Request,
	fn func(*scheduler.Scheduler, context.Context, string) (*scheduler.CollectionRecord, error)) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	if _, err := fn(h.s, r.Context(), rq.sc.key()); err != nil {
		return h.engineError(r.Context(), rq, err, "")
	}
	writeEmpty(w, http.StatusOK)
	return nil
}

// Jobs.

// envelopeOnly checks that a job body is the ARM envelope {"properties":
// {...}}. Bodies that are not a JSON object at all are left for the parser
// to report, with their line and column.
func envelopeOnly(data []byte, tagsAlone bool) error {
	s := jsonc.NewScanner(data)
	if s.Kind() != jsonc.Object {
		return nil
	}
	found := false
	var others []string // the members given instead, which the parser would not name
	s.Object(func(name []byte) bool {
		if found = strings.EqualFold(string(name), "properties") || tagsAlone && strings.EqualFold(string(name), "tags"); found {
			return false // enough: the parser reads the rest
		}
		if !slices.ContainsFunc(envelopeMembers, func(m string) bool { return strings.EqualFold(m, string(name)) }) {
			others = append(others, string(name))
		}
		return s.Skip()
	})
	if found || s.Finish() != nil {
		return nil
	}
	msg := `properties: is required: the body is a job resource, {"properties": {"action": ..., "recurrence": ...}}`
	switch len(others) {
	case 0:
	case 1:
		msg += "; " + strconv.Quote(others[0]) + " is not one of its members" + suggest.DidYouMean(others[0], envelopeMembers)
	default:
		quoted := make([]string, len(others))
		for i, o := range others {
			quoted[i] = strconv.Quote(o)
		}
		msg += "; " + strings.Join(quoted, ", ") + " are not among its members"
	}
	return badRequest("properties", "%s", msg)
}

// envelopeMembers are the members of a job resource besides its
// properties' own.
var envelopeMembers = []string{"id", "name", "type", "properties", "tags"}

func (h *handler) getJob(w http.ResponseWriter, r *http.Request) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	j, err := h.s.GetJob(r.Context(), rq.sc.key(), rq.job)
	if err != nil {
		return h.engineError(r.Context(), rq, err, "")
	}
	setETag(w, j.ETag)
	h.writeJob(w, http.StatusOK, rq.sc, j)
	return nil
}

func (h *handler) putJob(w http.ResponseWriter, r *http.Request) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	data, err := h.body(w, r)
	if err != nil {
		return err
	}
	if err := envelopeOnly(data, false); err != nil {
		return err
	}
	if err := sameResource(data, "job", rq.sc.jobID(rq.job), rq.sc.jc+"/"+rq.job, rq.job); err != nil {
		return err
	}
	// PutJobJSON parses with the scheduler's own rules (the action types
	// registered in it, their payloads) and puts the job, validating it
	// once; its problems name their paths in the body. Whether it
	// created the job is what its store write says (CreatedByPut): a put
	// that changes nothing writes nothing, and answers 200 also for a
	// job at its first version that a put at the same moment created.
	createOnly, err := ifNoneMatch(r)
	if err != nil {
		return err
	}
	opts := &scheduler.PutJobOptions{IfMatch: ifMatch(r)}
	if createOnly {
		opts.IfNoneMatch = "*"
	}
	j, err := h.s.PutJobJSON(r.Context(), rq.sc.key(), rq.job, data, opts)
	if createOnly {
		if err := createOnlyFailed("job '"+rq.job+"'", opts.IfMatch, err, h.jobExists(r, rq)); err != nil {
			return err
		}
	}
	if err != nil {
		return h.engineError(r.Context(), rq, err, "")
	}
	status := http.StatusOK
	if j.CreatedByPut {
		status = http.StatusCreated
	}
	setETag(w, j.ETag)
	h.writeJob(w, status, rq.sc, j)
	return nil
}

func (h *handler) patchJob(w http.ResponseWriter, r *http.Request) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	data, err := h.body(w, r)
	if err != nil {
		return err
	}
	if err := envelopeOnly(data, true); err != nil {
		return err
	}
	if err := sameResource(data, "job", rq.sc.jobID(rq.job), rq.sc.jc+"/"+rq.job, rq.job); err != nil {
		return err
	}
	if err := h.noneMatchRefused(r, rq, "job '"+rq.job+"'", h.jobExists(r, rq)); err != nil {
		return err
	}
	j, err := h.s.PatchJob(r.Context(), rq.sc.key(), rq.job, data, &scheduler.PatchJobOptions{IfMatch: ifMatch(r)})
	if err != nil {
		return h.engineError(r.Context(), rq, err, "properties")
	}
	setETag(w, j.ETag)
	h.writeJob(w, http.StatusOK, rq.sc, j)
	return nil
}

func (h *handler) deleteJob(w http.ResponseWriter, r *http.Request) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	if err := h.noneMatchRefused(r, rq, "job '"+rq.job+"'", h.jobExists(r, rq)); err != nil {
		return err
	}
	if err := h.s.DeleteJob(r.Context(), rq.sc.key(), rq.job, &scheduler.DeleteJobOptions{IfMatch: ifMatch(r)}); err != nil {
		return h.engineError(r.Context(), rq, err, "")
	}
	writeEmpty(w, http.StatusOK)
	return nil
}

func (h *handler) runJob(w http.ResponseWriter, r *http.Request) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	rec, err := h.s.RunJob(r.Context(), rq.sc.key(), rq.job)
	if err != nil {
		return h.engineError(r.Context(), rq, err, "")
	}
	writeJSON(w, http.StatusOK, RunResult{
		RequestedTime: rec.Schedule.RunRequested.UTC(),
		Message: fmt.Sprintf("The job '%s' runs once as soon as the scheduler takes it up (a run requested earlier and not yet started is not repeated); "+
			"its history (GET %s/history) shows the outcome.", rq.job, rq.sc.jobID(rq.job)),
	})
	return nil
}

// RunResult answers a request to run a job, an extension: Azure's
// Jobs_Run answers 200 with no body defined. RequestedTime is when the run
// was requested, the earlier time when a run requested before has not
// started yet.
type RunResult struct {
	RequestedTime time.Time `json:"requestedTime"`
	Message       string    `json:"message"`
}

// BackfillRequest is the body of a backfill request, an extension: the
// job's occurrences expected from From to To (ISO 8601, inclusive), Only
// "Missing" (the default) or "All", and DryRun to only ask which would run.
type BackfillRequest struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Only   string `json:"only,omitempty"`
	DryRun bool   `json:"dryRun,omitempty"`
}

// BackfillResult answers a backfill request: the expected times of the
// occurrences that will run (with dryRun, that would run), in order.
type BackfillResult struct {
	ExpectedTimes []time.Time `json:"expectedTimes"`
	DryRun        bool        `json:"dryRun"`
}

func (h *handler) backfillJob(w http.ResponseWriter, r *http.Request) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	data, err := h.body(w, r)
	if err != nil {
		return err
	}
	var req BackfillRequest
	if std, err := jsonc.Standardize(data); err == nil {
		data = std // comments and trailing commas, as elsewhere
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return badRequest("", "The request body is not a backfill request {\"from\", \"to\", \"only\", \"dryRun\"}: %s.", strings.TrimPrefix(err.Error(), "json: "))
	}
	var from, to time.Time
	var errs []error
	for _, f := range []struct {
		name string
		text string
		into *time.Time
	}{{"from", req.From, &from}, {"to", req.To, &to}} {
		if f.text == "" {
			continue // the engine says it is required
		}
		t, err := scheduler.ParseTime(f.text)
		if err != nil {
			errs = append(errs, &scheduler.ValidationError{Path: f.name, Value: strconv.Quote(f.text), Reason: "is not an ISO 8601 time"})
		}
		*f.into = t
	}
	if err := errors.Join(errs...); err != nil {
		return validationError(err, "")
	}
	times, err := h.s.BackfillJob(r.Context(), rq.sc.key(), rq.job, from, to, &scheduler.BackfillOptions{Only: scheduler.BackfillOnly(req.Only), DryRun: req.DryRun})
	if err != nil {
		return h.engineError(r.Context(), rq, err, "")
	}
	if times == nil {
		times = []time.Time{}
	}
	writeJSON(w, http.StatusOK, BackfillResult{ExpectedTimes: times, DryRun: req.DryRun})
	return nil
}

func (h *handler) listJobs(w http.ResponseWriter, r *http.Request) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	p, err := parsePage(r, &jobListing)
	if err != nil {
		return err
	}
	ctx := r.Context()
	opts := &scheduler.ListJobsOptions{Top: p.top, Skip: p.skip,
		State:   scheduler.JobState(p.filter["state"]),
		Health:  scheduler.JobHealth(p.filter["health"]),
		Tag:     scheduler.TagFilter{Name: p.filter["tagName"], Value: p.filter["tagValue"]},
		OrderBy: p.orderBy, Descending: p.descending}
	list, err := h.s.ListJobs(ctx, rq.sc.key(), opts)
	if err != nil {
		return h.engineError(ctx, rq, err, "")
	}
	out := JobListResult{Value: make([]JobDefinition, 0, len(list))}
	for _, j := range list {
		out.Value = append(out.Value, h.jobResource(rq.sc, j))
	}
	if len(list) == p.top {
		next := p.skip + len(list)
		more := *opts
		more.Top, more.Skip = 1, next
		rest, err := h.s.ListJobs(ctx, rq.sc.key(), &more)
		if err != nil {
			return h.engineError(ctx, rq, err, "")
		}
		if len(rest) > 0 {
			link := h.pageURL(r, next)
			out.NextLink = &link
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *handler) listHistory(w http.ResponseWriter, r *http.Request) error {
	rq, err := h.prelude(r)
	if err != nil {
		return err
	}
	p, err := parsePage(r, &historyListing)
	if err != nil {
		return err
	}
	ctx := r.Context()
	opts := &scheduler.ListHistoryOptions{Top: p.top, Skip: p.skip,
		Status:     scheduler.ExecutionStatus(p.filter["status"]),
		Faulted:    p.filter["faulted"] == "true",
		NotFaulted: p.filter["faulted"] == "false"}
	list, err := h.s.ListHistory(ctx, rq.sc.key(), rq.job, opts)
	if err != nil {
		return h.engineError(ctx, rq, err, "")
	}
	out := JobHistoryListResult{Value: make([]JobHistoryDefinition, 0, len(list))}
	prefix := newHistoryPrefix(rq.sc, rq.job)
	for i := range list {
		out.Value = append(out.Value, prefix.resource(&list[i]))
	}
	if len(list) == p.top {
		next := p.skip + len(list)
		more := *opts
		more.Top, more.Skip = 1, next
		rest, err := h.s.ListHistory(ctx, rq.sc.key(), rq.job, &more)
		if err != nil {
			return h.engineError(ctx, rq, err, "")
		}
		if len(rest) > 0 {
			link := h.pageURL(r, next)
			out.NextLink = &link
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
