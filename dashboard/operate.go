package dashboard

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// The dashboard changes jobs and collections only through the Scheduler
// methods the REST API calls, with the same JSON, so that a change checks
// and stores the same as over REST and fails with the same message at the
// same path: pause is PATCH {"properties": {"state": "Disabled",
// "stateReason", "resumeTime"}}; resume is enable (EnableJob), which
// forgets the reason and the resume time; suspending a collection is PATCH
// {"properties": {"state": "Suspended"}}.

// invalidError is a request the Scheduler refused for its content: the
// problems at their JSON paths, shown as the REST API words them.
type invalidError struct {
	problems []problem
}

func (e *invalidError) Error() string {
	msgs := make([]string, len(e.problems))
	for i, p := range e.problems {
		msgs[i] = p.Message()
	}
	return strings.Join(msgs, "\n")
}

// problemsOf returns the problems of a validation error, each at its JSON
// path; nil when err is not one.
func problemsOf(err error) []problem {
	var out []problem
	for _, ve := range scheduler.ValidationErrors(err) {
		out = append(out, problem{Path: ve.Path, Value: ve.Value, Reason: ve.Reason, Refs: ve.Refs})
	}
	return out
}

// Message words the problem as the REST API does: "path: value reason".
func (p problem) Message() string {
	msg := p.Reason
	if p.Value != "" {
		msg = p.Value + " " + msg
	}
	if p.Path == "" {
		return msg
	}
	return p.Path + ": " + msg
}

// checked turns a Scheduler error with validation problems into an
// invalidError, and leaves any other error as it is.
func checked(err error) error {
	if ps := problemsOf(err); len(ps) > 0 {
		return &invalidError{ps}
	}
	return err
}

// checkedDefinition is checked for an error of a job definition: its
// paths under "properties", as REST gives them.
func checkedDefinition(err error) error {
	if ps := problemsOf(err); len(ps) > 0 {
		return &invalidError{underProperties(ps)}
	}
	return err
}

// underProperties puts the paths of problems of a job's properties
// object under "properties", where REST's PUT bodies have them, with the
// paths their reasons name (scheduler.ValidationError.Under).
func underProperties(ps []problem) []problem {
	out := make([]problem, 0, len(ps))
	for _, p := range ps {
		if p.Path != "properties" && !strings.HasPrefix(p.Path, "properties.") && p.Path != "job" && p.Path != "" {
			ve := scheduler.ValidationError{Path: p.Path, Value: p.Value, Reason: p.Reason, Refs: p.Refs}
			ve.Under("properties")
			p.Path, p.Reason, p.Refs = ve.Path, ve.Reason, ve.Refs
		}
		out = append(out, p)
	}
	return out
}

// patchJSON marshals the properties of a merge patch in the ARM envelope,
// as the REST API receives them, so that problems name the paths REST
// names ("properties.resumeTime").
func patchJSON(props map[string]any) []byte {
	data, _ := json.Marshal(map[string]any{"properties": props})
	return data
}

// orNull is s, or JSON null (which a merge patch reads as "remove")
// when s is empty.
func orNull(s string) any {
	if s = strings.TrimSpace(s); s != "" {
		return s
	}
	return nil
}

// pause disables the job with the reason and resume time of the form, as
// PATCH {"properties": {"state": "Disabled", "stateReason", "resumeTime"}}
// does. The form says the resume time is in the job's zone: one without
// an offset is read there.
func (h *handler) pause(r *http.Request, c, name string) error {
	rec, err := h.s.GetJob(r.Context(), c, name)
	if err != nil {
		return err
	}
	f := r.PostForm
	_, err = h.s.PatchJob(r.Context(), c, name, patchJSON(map[string]any{
		"state": "Disabled", "stateReason": orNull(f.Get("reason")), "resumeTime": orNull(inZone(f.Get("resumeTime"), rec.Job.Location())),
	}), nil)
	return checkedDefinition(err)
}

// inZone returns the ISO 8601 time s of a form that says its times are in
// loc: s itself when it has an offset (or Z) or loc is UTC, else the same
// wall clock in loc, with its offset. A text that is no time is returned
// as it is, for the Scheduler to say what is wrong at its path.
func inZone(s string, loc *time.Location) string {
	s = strings.TrimSpace(s)
	if s == "" || loc == time.UTC || len(s) > len("2006-01-02") && strings.ContainsAny(s[len("2006-01-02"):], "Zz+-") {
		return s
	}
	t, err := scheduler.ParseTime(s)
	if err != nil {
		return s
	}
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc).Format(time.RFC3339Nano)
}

// backfillPage shows what a backfill would run, and asks to run it.
type backfillPage struct {
	Collection, Name string
	JobURL           string
	ActionURL        string
	From, To, Only   string
	Times            []stamp
	Max              int
}

// backfill asks the Scheduler to backfill the range of the form (from,
// to: ISO 8601; only: Missing or All). With dry=1 it runs nothing and
// shows the occurrences it would run, with a button to run them;
// otherwise it redirects to the job.
func (h *handler) backfill(w http.ResponseWriter, r *http.Request, v *viewer, c, name string) (string, error) {
	f := r.PostForm
	p := &backfillPage{Collection: c, Name: name, JobURL: h.jobURL(c, name, nil), ActionURL: h.jobURL(c, name, nil) + "/backfill",
		From: strings.TrimSpace(f.Get("from")), To: strings.TrimSpace(f.Get("to")), Only: f.Get("only"), Max: scheduler.MaxBackfill}
	if p.Only == "" {
		p.Only = string(scheduler.BackfillMissing)
	}
	var from, to time.Time
	var ps []problem
	for _, fl := range []struct {
		name, text string
		into       *time.Time
	}{{"from", p.From, &from}, {"to", p.To, &to}} {
		if fl.text == "" {
			continue // the Scheduler says it is required
		}
		t, err := scheduler.ParseTime(fl.text)
		if err != nil {
			ps = append(ps, problem{Path: fl.name, Value: strconv.Quote(fl.text), Reason: "is not an ISO 8601 time"})
		}
		*fl.into = t
	}
	if len(ps) > 0 {
		return "", &invalidError{ps}
	}
	dry := f.Get("dry") == "1"
	times, err := h.s.BackfillJob(r.Context(), c, name, from, to, &scheduler.BackfillOptions{Only: scheduler.BackfillOnly(p.Only), DryRun: dry})
	if err != nil {
		return "", checked(err)
	}
	if !dry {
		h.log.Info("dashboard: job backfill", "collection", c, "job", name, "occurrences", len(times), "user", v.name())
		return h.jobURL(c, name, url.Values{"flash": {"backfill"}}), nil
	}
	rec, err := h.s.GetJob(r.Context(), c, name)
	if err != nil {
		return "", notFoundAs(err, "The job")
	}
	for _, t := range times {
		p.Times = append(p.Times, at(t, rec.Job.Location()))
	}
	sameClock(p.Times, func(s *stamp) *stamp { return s })
	h.render(w, r, http.StatusOK, "backfill", v, p)
	return "", nil
}

// retry runs again the occurrence of a history row, expected at the
// form's "expected" (RFC 3339): a scheduled or backfilled one as a
// backfill of that one instant with Only All (BackfillJob), which runs
// it, once, as an ordinary occurrence with its original expected time; a
// run now's (manual=1), whose instant is not on the schedule, as another
// run now (RunJob). It redirects to the job, saying whether anything was
// asked for.
func (h *handler) retry(r *http.Request, v *viewer, c, name string) (string, error) {
	f := r.PostForm
	if f.Get("manual") == "1" {
		if _, err := h.s.RunJob(r.Context(), c, name); err != nil {
			return "", notFoundAs(err, "The job")
		}
		h.log.Info("dashboard: job retry", "collection", c, "job", name, "manual", true, "user", v.name())
		return h.jobURL(c, name, url.Values{"flash": {"run"}}), nil
	}
	expected, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(f.Get("expected")))
	if err != nil {
		return "", &invalidError{[]problem{{Path: "expected", Value: strconv.Quote(f.Get("expected")), Reason: "is not an RFC 3339 time"}}}
	}
	times, err := h.s.BackfillJob(r.Context(), c, name, expected, expected, &scheduler.BackfillOptions{Only: scheduler.BackfillAll})
	if err != nil {
		return "", notFoundAs(checked(err), "The job")
	}
	flash := "retry"
	if len(times) == 0 {
		flash = "retry-none"
	}
	h.log.Info("dashboard: job retry", "collection", c, "job", name, "expected", expected, "occurrences", len(times), "user", v.name())
	return h.jobURL(c, name, url.Values{"flash": {flash}}), nil
}

// deleteCollectionPage asks to confirm the deletion of a collection,
// naming the jobs it removes: the first maxNamedJobs of them, in name
// order, and how many more. Seen identifies every job it counts (see
// jobSet), so that the deletion deletes only what the page showed; ETag
// is the collection's, which the deletion must find too.
type deleteCollectionPage struct {
	Name, URL, ActionURL string
	Jobs                 []string
	Total, More          int
	Seen                 string
	ETag                 string
}

// maxNamedJobs is how many jobs the confirmation of a collection's
// deletion names at most (ListJobs pages of 100).
const maxNamedJobs = 1000

func (h *handler) confirmDeleteCollection(r *http.Request, v *viewer) (string, any, error) {
	ctx := r.Context()
	c := r.PathValue("collection")
	if !v.sees(c) {
		return "", nil, notFound("The collection")
	}
	col, err := h.s.GetCollection(ctx, c)
	if err != nil {
		return "", nil, notFoundAs(err, "The collection")
	}
	p := &deleteCollectionPage{Name: c, URL: h.collectionURL(c, nil), ActionURL: h.url(nil, "collections", c, "delete"), ETag: col.ETag}
	set, err := h.jobSet(ctx, c, func(name string) {
		if len(p.Jobs) < maxNamedJobs {
			p.Jobs = append(p.Jobs, name)
		}
	})
	if err != nil {
		return "", nil, notFoundAs(err, "The collection")
	}
	p.Total, p.Seen = set.n, set.digest
	p.More = p.Total - len(p.Jobs)
	return "collectiondelete", p, nil
}

// jobSet is what a collection's jobs are at one read: how many, and a
// digest of the identity of each (its name, Incarnation and Created: a
// job deleted and created again under its name is another job).
type jobSet struct {
	n      int
	digest string
}

// jobSet reads every job of collection c, a page of the store's name
// order at a time, calling each (if not nil) with each job's name.
func (h *handler) jobSet(ctx context.Context, c string, each func(name string)) (jobSet, error) {
	sum := sha256.New()
	var set jobSet
	var buf []byte
	for skip := 0; ; skip += scheduler.MaxPageSize {
		jobs, err := h.s.ListJobs(ctx, c, &scheduler.ListJobsOptions{Skip: skip, Top: scheduler.MaxPageSize})
		if err != nil {
			return jobSet{}, err
		}
		for _, j := range jobs {
			buf = binary.AppendUvarint(buf[:0], uint64(len(j.Name)))
			buf = append(buf, j.Name...)
			buf = binary.BigEndian.AppendUint64(buf, uint64(j.Incarnation))
			buf = binary.BigEndian.AppendUint64(buf, uint64(j.Created.UnixNano()))
			sum.Write(buf)
			if each != nil {
				each(j.Name)
			}
		}
		set.n += len(jobs)
		if len(jobs) < scheduler.MaxPageSize {
			break
		}
	}
	set.digest = hex.EncodeToString(sum.Sum(nil)[:16])
	return set, nil
}

// collectionAction enables, disables, suspends or deletes a collection:
// the REST API's POST .../enable and .../disable, its PATCH
// {"properties": {"state": "Suspended"}}, and its DELETE (after the
// confirmation page, as a job's deletion).
func (h *handler) collectionAction(w http.ResponseWriter, r *http.Request, v *viewer) (string, error) {
	ctx := r.Context()
	c, op := r.PathValue("collection"), r.PathValue("op")
	if !v.sees(c) {
		return "", notFound("The collection")
	}
	var err error
	switch op {
	case "enable":
		_, err = h.s.EnableCollection(ctx, c)
	case "disable":
		_, err = h.s.DisableCollection(ctx, c)
	case "suspend":
		_, err = h.s.PatchCollection(ctx, c, patchJSON(map[string]any{"state": "Suspended"}), nil)
	case "delete":
		etag := r.PostForm.Get("etag")
		if r.PostForm.Get("confirm") != "yes" || etag == "" {
			return h.url(nil, "collections", c, "delete"), nil
		}
		// Delete only the jobs the confirmation showed: when they
		// changed since, nothing is deleted and the confirmation shows
		// them as they are now. The Scheduler's delete takes no
		// condition on the collection's jobs (a job's write leaves the
		// collection's ETag as it is), so this is a check right before
		// the delete: a job put in between is deleted with it. The
		// collection's ETag, checked in the delete, keeps a collection
		// written again since (replaced, its state changed, deleted and
		// created again with the same jobs, none) from being deleted.
		var set jobSet
		if set, err = h.jobSet(ctx, c, nil); err != nil {
			break
		}
		if set.digest != r.PostForm.Get("jobs") {
			h.log.Info("dashboard: collection not deleted: its jobs changed since the confirmation", "collection", c, "jobs", set.n, "user", v.name())
			return h.url(url.Values{"flash": {"collection-changed"}}, "collections", c, "delete"), nil
		}
		if err = h.s.DeleteCollection(ctx, c, &scheduler.DeleteCollectionOptions{IfMatch: etag}); err == nil {
			h.log.Info("dashboard: collection deleted", "collection", c, "user", v.name())
			return h.url(url.Values{"flash": {"collection-deleted"}}), nil
		}
		if errors.Is(err, scheduler.ErrPreconditionFailed) {
			// Written since, or gone: one that is gone is not found.
			if _, err = h.s.GetCollection(ctx, c); err == nil {
				h.log.Info("dashboard: collection not deleted: it was written since the confirmation", "collection", c, "user", v.name())
				return h.url(url.Values{"flash": {"collection-replaced"}}, "collections", c, "delete"), nil
			}
		}
	default:
		return "", &statusError{http.StatusNotFound, "There is no such action."}
	}
	if err != nil {
		return "", notFoundAs(checked(err), "The collection")
	}
	h.log.Info("dashboard: collection "+op, "collection", c, "user", v.name())
	return h.collectionURL(c, url.Values{"flash": {"collection-" + op}}), nil
}

// isInvalid reports whether err carries problems at JSON paths.
func isInvalid(err error) (*invalidError, bool) {
	var ie *invalidError
	return ie, errors.As(err, &ie)
}
