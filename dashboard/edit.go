package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/recurrence"
)

// The editors put jobs and collections with the Scheduler methods the
// REST API's PUT calls (PutJobJSON, ParseCollection and PutCollection),
// so that their problems come back with REST's words at REST's paths:
// "properties.recurrence.interval: ...". A job's form covers the common
// cases (an HTTP action, a recurrence's frequency, interval, hours,
// minutes and week days, the start time, the retry policy's type,
// interval and count); it writes those members into the JSON definition
// and keeps every other one, so that the form and the JSON editor are two
// views of one definition. Each of its lists holds the value the
// definition has, even one the list does not offer, so that a save
// writes back what it read; a recurrence without a frequency (a cron
// expression) is edited as JSON.

// --- Job editor ---

type jobEditor struct {
	New         bool
	Collection  string
	Collections []string // the collections the viewer may put a job in, for a new job
	Name        string
	ETag        string
	Mode        string // "form" or "json"
	FormFits    bool   // the definition's action is an HTTP request, and its recurrence has a frequency: the form can show it
	Definition  string
	Form        jobForm
	Problems    []problem
	Error       string
	ActionURL   string
	DraftURL    string
	CancelURL   string
	Frequencies []string
	Seconds     bool // the collection's quota allows a recurrence of seconds: the form offers Second
	WeekDays    []weekDay
	RetryTypes  []string
	Methods     []string
}

type weekDay struct {
	Name    string
	Checked bool
}

// jobForm is what the form shows of a job definition; numbers stay text,
// so that what the user typed comes back as typed.
type jobForm struct {
	Method, URI, Headers, Body           string
	Frequency, Interval, Hours, Minutes  string
	WeekDays                             []string
	StartTime                            string
	RetryType, RetryInterval, RetryCount string
}

var (
	// formFrequencies are the frequencies the form offers; Second only
	// where the collection's quota allows it (see allowsSeconds).
	formFrequencies = []string{"Minute", "Hour", "Day", "Week", "Month", "Year"}
	formWeekDays    = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
	formRetryTypes  = []string{"Fixed", "Exponential", "None"}
)

// newJobTemplate is the definition a new job starts from.
const newJobTemplate = `{
  "action": {
    "type": "Https",
    "request": {"method": "POST", "uri": "https://example.com/hook"},
    "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT30S", "retryCount": 3}
  },
  "recurrence": {"frequency": "Hour", "interval": 1}
}`

func (h *handler) editJob(r *http.Request, v *viewer) (string, any, error) {
	if v.readOnly() {
		return "", nil, &statusError{http.StatusForbidden, "Your token may only look: it may not change anything here."}
	}
	q := r.URL.Query()
	c, name := q.Get("collection"), q.Get("job")
	e := h.newJobEditor(c, name)
	if name == "" {
		e.New = true
		e.Definition = newJobTemplate
		cols, _, err := h.visibleCollections(r.Context(), v)
		if err != nil {
			return "", nil, err
		}
		for _, col := range cols {
			e.Collections = append(e.Collections, col.Name)
		}
		if c != "" && !v.sees(c) {
			return "", nil, notFound("The collection")
		}
	} else {
		if !v.sees(c) {
			return "", nil, notFound("The job")
		}
		rec, err := h.s.GetJob(r.Context(), c, name)
		if err != nil {
			return "", nil, notFoundAs(err, "The job")
		}
		e.ETag = rec.ETag
		e.Definition = editableJSON(rec.Definition())
	}
	e.Seconds = h.allowsSeconds(r.Context(), c)
	e.fill(nil)
	return "jobedit", e, nil
}

func (h *handler) newJobEditor(c, name string) *jobEditor {
	e := &jobEditor{Collection: c, Name: name, Mode: "form", ActionURL: h.url(nil, "edit", "job"), DraftURL: h.url(nil, "draft"),
		RetryTypes: formRetryTypes}
	e.CancelURL = h.url(nil)
	if name != "" {
		e.CancelURL = h.jobURL(c, name, nil)
	} else if c != "" {
		e.CancelURL = h.collectionURL(c, nil)
	}
	return e
}

// fill sets the form from the definition, or to what the user typed
// when it is not nil and the form can show the definition; and the mode
// to JSON when it cannot (the definition's action is not an HTTP request).
func (e *jobEditor) fill(typed *jobForm) {
	var tree map[string]any
	if json.Unmarshal([]byte(e.Definition), &tree) == nil {
		e.Form, e.FormFits = formOf(tree)
	}
	if typed != nil && e.FormFits {
		e.Form = *typed
	}
	if !e.FormFits || e.Mode != "form" {
		e.Mode = "json"
	}
	e.Frequencies = formFrequencies
	if e.Seconds {
		e.Frequencies = append([]string{"Second"}, formFrequencies...)
	}
	e.Frequencies = withValue(e.Frequencies, e.Form.Frequency)
	e.Methods = withValue(scheduler.HTTPMethods, e.Form.Method)
	e.RetryTypes = withValue(formRetryTypes, e.Form.RetryType)
	e.WeekDays = make([]weekDay, len(formWeekDays))
	for i, d := range formWeekDays {
		e.WeekDays[i] = weekDay{Name: d}
		for _, w := range e.Form.WeekDays {
			e.WeekDays[i].Checked = e.WeekDays[i].Checked || strings.EqualFold(w, d)
		}
	}
}

// withValue returns list, with v at its end when it is not empty and not
// in list: a select shows the definition's value, even one the form does
// not offer, so that saving the form writes back what it read.
func withValue(list []string, v string) []string {
	if v == "" || slices.Contains(list, v) {
		return list
	}
	return append(slices.Clip(list), v)
}

// allowsSeconds reports whether the quota of the collection named c lets
// its jobs recur every so many seconds; false when it cannot tell.
func (h *handler) allowsSeconds(ctx context.Context, c string) bool {
	if c == "" {
		return false
	}
	col, err := h.s.GetCollection(ctx, c)
	return err == nil && col.Definition.MaxRecurrence().Frequency == recurrence.Second
}

// saveJob puts the job of the editor: a new one (refused when the name
// is taken) or a new version of the one opened (refused when it changed
// since: the ETag). Problems show on the editor, with what was typed.
func (h *handler) saveJob(w http.ResponseWriter, r *http.Request, v *viewer) (string, error) {
	f := r.PostForm
	c, name := strings.TrimSpace(f.Get("collection")), strings.TrimSpace(f.Get("job"))
	if !v.sees(c) {
		return "", notFound("The collection")
	}
	e := h.newJobEditor(c, name)
	e.ETag, e.New, e.Mode = f.Get("etag"), f.Get("etag") == "", f.Get("mode")
	def, ps := jobDraft(f)
	e.Definition = string(def)
	if e.New {
		cols, _, err := h.visibleCollections(r.Context(), v)
		if err != nil {
			return "", err
		}
		for _, col := range cols {
			e.Collections = append(e.Collections, col.Name)
		}
	}
	show := func(status int) (string, error) {
		e.Seconds = h.allowsSeconds(r.Context(), c)
		var typed *jobForm
		if e.Mode == "form" {
			ff := formFromValues(f)
			typed = &ff
		}
		e.fill(typed)
		h.render(w, r, status, "jobedit", v, e)
		return "", nil
	}
	if len(ps) > 0 {
		e.Problems = ps
		return show(http.StatusBadRequest)
	}
	opts := &scheduler.PutJobOptions{IfMatch: e.ETag}
	if e.New {
		if _, err := h.s.GetJob(r.Context(), c, name); err == nil {
			e.Error = "A job named " + strconv.Quote(name) + " already exists in " + c + ": open it and edit it there, or choose another name."
			return show(http.StatusConflict)
		}
	} else {
		rec, err := h.s.GetJob(r.Context(), c, name)
		if err != nil {
			return "", notFoundAs(err, "The job")
		}
		def = withSecrets(rec, def)
		// The editor edits the job's properties: its tags stay, unless
		// the JSON editor was given a whole resource with "tags".
		opts.Tags = rec.Tags
	}
	_, err := h.s.PutJobJSON(r.Context(), c, name, def, opts)
	if err == nil {
		h.log.Info("dashboard: job saved", "collection", c, "job", name, "user", v.name())
		return h.jobURL(c, name, url.Values{"flash": {"saved"}}), nil
	}
	status, ps, msg := h.refused(r, err, "job")
	if status == 0 {
		return "", err
	}
	e.Problems, e.Error = underProperties(ps), msg
	return show(status)
}

// refused says why the Scheduler refused to save a job or collection
// (what): the status to answer with, the problems at their paths, or a
// message; status 0 for an error that is not the user's to fix.
func (h *handler) refused(r *http.Request, err error, what string) (status int, ps []problem, msg string) {
	var se *scheduler.SyntaxError
	switch {
	case errors.As(err, &se):
		return http.StatusBadRequest, []problem{{Reason: "is not valid JSON: " + se.Error()}}, ""
	case len(problemsOf(err)) > 0:
		return http.StatusBadRequest, problemsOf(err), ""
	case errors.Is(err, scheduler.ErrPreconditionFailed):
		return http.StatusConflict, nil, "The " + what + " changed since you opened it: open it again to see the new version, and make your change there."
	case errors.Is(err, scheduler.ErrInvalid):
		return http.StatusBadRequest, nil, "Not saved: " + err.Error() + "."
	case errors.Is(err, scheduler.ErrQuotaExceeded), errors.Is(err, scheduler.ErrFinalState), errors.Is(err, scheduler.ErrNotFound):
		return http.StatusConflict, nil, "Not saved: " + h.refusal(r, err) + "."
	}
	return 0, nil, ""
}

// withSecrets puts back into def the secrets the editor showed hidden,
// rec's: a value that reads as the stored one masked is the stored one.
func withSecrets(rec *scheduler.JobRecord, def []byte) []byte {
	var tree any
	if json.Unmarshal(def, &tree) != nil {
		return def // the Scheduler says what is wrong with it
	}
	stored, masked := definitionTree(rec.Definition()), definitionTree(rec.Definition())
	mask(masked, "")
	if !unmask(tree, masked, stored) {
		return def
	}
	b, err := json.Marshal(tree)
	if err != nil {
		return def
	}
	return b
}

// unmask replaces each string of v equal to the one at the same place in
// masked, and unlike the one in stored, with the stored one; it reports
// whether it replaced any.
func unmask(v, masked, stored any) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		m, _ := masked.(map[string]any)
		s, _ := stored.(map[string]any)
		for k, val := range x {
			if str, ok := val.(string); ok {
				if ms, ok := m[k].(string); ok && ms == str {
					if ss, ok := s[k].(string); ok && ss != str {
						x[k], changed = ss, true
					}
				}
				continue
			}
			changed = unmask(val, m[k], s[k]) || changed
		}
	case []any:
		m, _ := masked.([]any)
		s, _ := stored.([]any)
		for i := range x {
			if i < len(m) && i < len(s) {
				changed = unmask(x[i], m[i], s[i]) || changed
			}
		}
	}
	return changed
}

// editableJSON is the definition as the editor shows it: secrets hidden,
// and without what the Scheduler keeps (status).
func editableJSON(def *scheduler.Job) string {
	d := def.Clone()
	d.Status = nil
	return maskedJSON(d)
}

// --- The draft: the form's values written into the definition ---

// jobDraft returns the definition of the editor's request: the JSON
// editor's text, with, in form mode, the form's members written into it.
// The problems are those of the form's own text (header lines).
func jobDraft(f url.Values) ([]byte, []problem) {
	text := f.Get("definition")
	if f.Get("mode") != "form" {
		return []byte(text), nil
	}
	tree := map[string]any{}
	if strings.TrimSpace(text) != "" && json.Unmarshal([]byte(text), &tree) != nil {
		// Not an object the form could write into: the text stays as
		// it is, for the Scheduler to say what is wrong with it, rather
		// than the form's members alone replacing it.
		return []byte(text), nil
	}
	if props, ok := tree["properties"].(map[string]any); ok {
		tree = props // a whole resource: the editor edits its properties
	}
	fv := formFromValues(f)
	var ps []problem
	act := object(tree, "action")
	// An Http action may call an https URL: its type stays; an Https one
	// becomes Http when its URL is no longer https; any other type takes
	// the one its URL names.
	https := strings.HasPrefix(strings.ToLower(fv.URI), "https:")
	switch typ, _ := act["type"].(string); {
	case strings.EqualFold(typ, "http"):
	case strings.EqualFold(typ, "https"):
		if !https {
			act["type"] = "Http"
		}
	case https:
		act["type"] = "Https"
	default:
		act["type"] = "Http"
	}
	req := object(act, "request")
	set(req, "method", fv.Method)
	set(req, "uri", fv.URI)
	// A browser sends a textarea's line breaks as CRLF: a body that
	// differs from the stored one only so is the stored one.
	if old, ok := req["body"].(string); !ok || lineBreaks.Replace(old) != lineBreaks.Replace(fv.Body) {
		set(req, "body", fv.Body)
	}
	headers := map[string]any{}
	for i, line := range strings.Split(fv.Headers, "\n") {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		name, val, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) == "" {
			ps = append(ps, problem{Path: "properties.action.request.headers", Value: strconv.Quote(line),
				Reason: "(line " + itoa(i+1) + ") is not a header: write one per line as Name: value"})
			continue
		}
		headers[strings.TrimSpace(name)] = strings.TrimSpace(val)
	}
	if len(headers) > 0 {
		req["headers"] = headers
	} else {
		delete(req, "headers")
	}
	if fv.RetryType == "" {
		delete(act, "retryPolicy")
	} else {
		// The policy's other members (maxRetryDuration,
		// permanentStatusCodes, and an Exponential policy's
		// minimumInterval and maximumInterval) stay. A policy switched
		// to another type drops what that type does not take: the
		// interval bounds, which only Exponential takes, and, switched
		// to None, which never retries, the interval and count.
		rp := object(act, "retryPolicy")
		old, _ := rp["retryType"].(string)
		rp["retryType"] = fv.RetryType
		set(rp, "retryInterval", fv.RetryInterval)
		setNumber(rp, "retryCount", fv.RetryCount)
		if !strings.EqualFold(fv.RetryType, "Exponential") {
			delete(rp, "minimumInterval")
			delete(rp, "maximumInterval")
		}
		if strings.EqualFold(fv.RetryType, "None") && !strings.EqualFold(old, "None") {
			delete(rp, "retryInterval")
			delete(rp, "retryCount")
		}
	}
	if fv.Frequency == "" {
		delete(tree, "recurrence")
	} else {
		rec := object(tree, "recurrence")
		rec["frequency"] = fv.Frequency
		setNumber(rec, "interval", fv.Interval)
		sch := object(rec, "schedule")
		setNumbers(sch, "hours", fv.Hours)
		setNumbers(sch, "minutes", fv.Minutes)
		old, _ := sch["weekDays"].([]any)
		switch {
		case sameDays(old, fv.WeekDays):
			// The form lists the days in its order: the stored
			// list of the same days stays as it is.
		case len(fv.WeekDays) > 0:
			days := make([]any, len(fv.WeekDays))
			for i, d := range fv.WeekDays {
				days[i] = d
			}
			sch["weekDays"] = days
		default:
			delete(sch, "weekDays")
		}
		if len(sch) == 0 {
			delete(rec, "schedule")
		}
	}
	set(tree, "startTime", fv.StartTime)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(tree)
	return b.Bytes(), ps
}

// sameDays reports whether the list of week days old and the days typed
// name the same days, in any order and any case.
func sameDays(old []any, typed []string) bool {
	if len(old) == 0 {
		return false
	}
	for _, d := range old {
		s, ok := d.(string)
		if !ok || !slices.ContainsFunc(typed, func(t string) bool { return strings.EqualFold(t, s) }) {
			return false
		}
	}
	for _, t := range typed {
		if !slices.ContainsFunc(old, func(d any) bool { s, _ := d.(string); return strings.EqualFold(t, s) }) {
			return false
		}
	}
	return true
}

// lineBreaks writes CRLF and CR line breaks as LF.
var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n")

// object returns the object member name of m, adding an empty one when
// it is missing or not an object.
func object(m map[string]any, name string) map[string]any {
	if o, ok := m[name].(map[string]any); ok {
		return o
	}
	o := map[string]any{}
	m[name] = o
	return o
}

// set sets m[name] to s, or removes it when s is empty.
func set(m map[string]any, name, s string) {
	if s = strings.TrimSpace(s); s != "" {
		m[name] = s
	} else {
		delete(m, name)
	}
}

// number is s as a JSON number when it is an integer, else as the text
// typed, for the Scheduler to refuse at its path.
func number(s string) any {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return s
}

func setNumber(m map[string]any, name, s string) {
	if s = strings.TrimSpace(s); s != "" {
		m[name] = number(s)
	} else {
		delete(m, name)
	}
}

// setNumbers sets m[name] to the list of numbers s gives, separated by
// commas or spaces, or removes it when s is empty.
func setNumbers(m map[string]any, name, s string) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	if len(fields) == 0 {
		delete(m, name)
		return
	}
	list := make([]any, len(fields))
	for i, f := range fields {
		list[i] = number(f)
	}
	m[name] = list
}

// formFromValues reads the form's fields of a request.
func formFromValues(f url.Values) jobForm {
	g := func(k string) string { return strings.TrimSpace(f.Get(k)) }
	return jobForm{Method: g("method"), URI: g("uri"), Headers: f.Get("headers"), Body: f.Get("body"),
		Frequency: g("frequency"), Interval: g("interval"), Hours: g("hours"), Minutes: g("minutes"), WeekDays: f["weekDays"],
		StartTime: g("startTime"), RetryType: g("retryType"), RetryInterval: g("retryInterval"), RetryCount: g("retryCount")}
}

// formOf reads the form's fields from a definition, and reports whether
// the form can show it: an HTTP or HTTPS action, and no recurrence or one
// with a frequency (not a cron expression, which the form would lose).
func formOf(tree map[string]any) (jobForm, bool) {
	if props, ok := tree["properties"].(map[string]any); ok {
		tree = props
	}
	var f jobForm
	text := func(v any) string {
		switch x := v.(type) {
		case string:
			return x
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64)
		}
		return ""
	}
	str := func(m map[string]any, k string) string { return text(m[k]) }
	list := func(m map[string]any, k string) string {
		var out []string
		if l, ok := m[k].([]any); ok {
			for _, v := range l {
				out = append(out, text(v))
			}
		}
		return strings.Join(out, ", ")
	}
	sub := func(m map[string]any, k string) map[string]any {
		o, _ := m[k].(map[string]any)
		if o == nil {
			return map[string]any{}
		}
		return o
	}
	act := sub(tree, "action")
	typ := strings.ToLower(str(act, "type"))
	fits := typ == "http" || typ == "https"
	req := sub(act, "request")
	f.Method, f.URI, f.Body = str(req, "method"), str(req, "uri"), str(req, "body")
	var hs []string
	for k, v := range sub(req, "headers") {
		if s, ok := v.(string); ok {
			hs = append(hs, k+": "+s)
		}
	}
	slices.Sort(hs)
	f.Headers = strings.Join(hs, "\n")
	if rp, ok := act["retryPolicy"].(map[string]any); ok {
		f.RetryType, f.RetryInterval, f.RetryCount = str(rp, "retryType"), str(rp, "retryInterval"), str(rp, "retryCount")
	}
	if rec, ok := tree["recurrence"].(map[string]any); ok {
		f.Frequency, f.Interval = str(rec, "frequency"), str(rec, "interval")
		_, cron := rec["cron"]
		fits = fits && f.Frequency != "" && !cron
		sch := sub(rec, "schedule")
		f.Hours, f.Minutes = list(sch, "hours"), list(sch, "minutes")
		if l, ok := sch["weekDays"].([]any); ok {
			for _, d := range l {
				if s, ok := d.(string); ok {
					f.WeekDays = append(f.WeekDays, s)
				}
			}
		}
	}
	f.StartTime = str(tree, "startTime")
	return f, fits
}

// --- The draft endpoint: live validation as the user types ---

// draftAnswer is what POST /draft answers: the definition the form makes,
// its problems at their JSON paths, or its schedule in words and its next
// occurrences.
type draftAnswer struct {
	Definition string         `json:"definition"`
	Problems   []draftProblem `json:"problems"`
	Schedule   string         `json:"schedule,omitempty"`
	Next       []draftTime    `json:"next"`
	Note       string         `json:"note,omitempty"`
	Form       *jobForm       `json:"form,omitempty"`
}

type draftProblem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

type draftTime struct {
	UTC   string `json:"utc"`
	Local string `json:"local,omitempty"`
}

// draftOccurrences is how many next occurrences the draft answer lists.
const draftOccurrences = 5

// draft parses the editor's definition as the Scheduler does when it is
// saved (its action types, executors and retry floor; not the
// collection's quota, which the save checks), and answers JSON: it
// changes nothing, so a read-only viewer may use it too. A collection
// the viewer may not see is not found (404), as on every page: the answer
// neither lists occurrences under its calendars nor tells whether it exists.
func (h *handler) draft(w http.ResponseWriter, r *http.Request, v *viewer) (string, error) {
	c := r.PostForm.Get("collection")
	if c != "" && !v.sees(c) {
		return "", notFound("The collection")
	}
	def, ps := jobDraft(r.PostForm)
	a := draftAnswer{Definition: string(def), Problems: []draftProblem{}, Next: []draftTime{}}
	if r.PostForm.Get("mode") == "json" {
		var tree map[string]any
		if json.Unmarshal(def, &tree) == nil {
			if f, fits := formOf(tree); fits {
				a.Form = &f
			}
		}
	}
	res := h.check(r.Context(), def, c, r.PostForm.Get("job"), time.Now().UTC().Truncate(time.Second), draftOccurrences)
	if res.Syntax != "" {
		ps = append(ps, problem{Reason: "is not valid JSON: " + res.Syntax})
	}
	for _, p := range append(ps, underProperties(res.Problems)...) {
		a.Problems = append(a.Problems, draftProblem{Path: p.Path, Message: p.Message()})
	}
	if len(a.Problems) == 0 {
		a.Schedule, a.Note = res.Schedule, res.Note
		for _, row := range res.Upcoming.Rows {
			if row.Skipped {
				continue // excluded by the job's calendar: it does not run
			}
			a.Next = append(a.Next, draftTime{UTC: row.At.UTC, Local: row.At.Local})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(a)
	return "", nil
}

// --- Collection editor ---

type collectionEditor struct {
	New                        bool
	Name                       string
	ETag                       string
	Location                   string
	Plan, State                string
	MaxJobCount                string
	RecurrenceFrequency        string
	RecurrenceInterval         string
	Plans, States, Frequencies []string
	Problems                   []problem
	Error                      string
	ActionURL, CancelURL       string
	NameHint                   string
}

var (
	formPlans            = []string{"Free", "Standard", "P10Premium", "P20Premium"}
	formCollectionStates = []string{"Enabled", "Disabled", "Suspended"}
	formQuotaFrequencies = []string{"", "Second", "Minute", "Hour", "Day", "Week", "Month"}
)

func (h *handler) newCollectionEditor(v *viewer) *collectionEditor {
	e := &collectionEditor{Plans: formPlans, States: formCollectionStates, Frequencies: formQuotaFrequencies,
		ActionURL: h.url(nil, "edit", "collection"), CancelURL: h.url(nil), Plan: "Standard", State: "Enabled"}
	if !v.seesAll() {
		sub := "{subscriptionId}"
		if v.principal != nil && len(v.principal.Subscriptions) > 0 {
			sub = v.principal.Subscriptions[0]
		}
		e.NameHint = "Your token reaches only collections named subscription/resourceGroup/name, such as " + sub + "/my-group/my-collection."
	}
	return e
}

func (h *handler) editCollection(r *http.Request, v *viewer) (string, any, error) {
	if v.readOnly() {
		return "", nil, &statusError{http.StatusForbidden, "Your token may only look: it may not change anything here."}
	}
	name := r.URL.Query().Get("name")
	e := h.newCollectionEditor(v)
	if name == "" {
		e.New = true
		return "collectionedit", e, nil
	}
	if !v.sees(name) {
		return "", nil, notFound("The collection")
	}
	col, err := h.s.GetCollection(r.Context(), name)
	if err != nil {
		return "", nil, notFoundAs(err, "The collection")
	}
	d := col.Definition
	e.Name, e.ETag, e.Location, e.CancelURL = name, col.ETag, d.Location, h.collectionURL(name, nil)
	e.Plan, e.State = string(d.Plan()), string(d.State())
	if q := d.Properties.Quota; q != nil {
		if q.MaxJobCount > 0 {
			e.MaxJobCount = itoa(q.MaxJobCount)
		}
		if m := q.MaxRecurrence; m != nil {
			e.RecurrenceFrequency = string(m.Frequency)
			if m.Interval > 0 {
				e.RecurrenceInterval = itoa(m.Interval)
			}
		}
	}
	return "collectionedit", e, nil
}

// saveCollection puts the collection of the editor: its form's members
// written into its stored definition (tags and run policy kept), parsed
// and put as the REST API's PUT does.
func (h *handler) saveCollection(w http.ResponseWriter, r *http.Request, v *viewer) (string, error) {
	f := r.PostForm
	e := h.newCollectionEditor(v)
	g := func(k string) string { return strings.TrimSpace(f.Get(k)) }
	e.Name, e.ETag, e.Location, e.Plan, e.State = g("name"), f.Get("etag"), g("location"), g("plan"), g("state")
	e.MaxJobCount, e.RecurrenceFrequency, e.RecurrenceInterval = g("maxJobCount"), g("maxRecurrenceFrequency"), g("maxRecurrenceInterval")
	e.New = e.ETag == ""
	show := func(status int) (string, error) {
		h.render(w, r, status, "collectionedit", v, e)
		return "", nil
	}
	if e.Name == "" {
		e.Problems = []problem{{Path: "name", Reason: "is required"}}
		return show(http.StatusBadRequest)
	}
	if !v.sees(e.Name) {
		e.Error = "Your token may not reach the collection " + strconv.Quote(e.Name) + ". " + e.NameHint
		return show(http.StatusForbidden)
	}
	tree := map[string]any{}
	if !e.New {
		e.CancelURL = h.collectionURL(e.Name, nil)
		col, err := h.s.GetCollection(r.Context(), e.Name)
		if err != nil {
			return "", notFoundAs(err, "The collection")
		}
		data, _ := json.Marshal(col.Definition)
		json.Unmarshal(data, &tree)
	} else if _, err := h.s.GetCollection(r.Context(), e.Name); err == nil {
		e.Error = "A collection named " + strconv.Quote(e.Name) + " already exists: open it and edit it there, or choose another name."
		return show(http.StatusConflict)
	}
	set(tree, "location", e.Location)
	props := object(tree, "properties")
	object(props, "sku")["name"] = e.Plan
	set(props, "state", e.State)
	quota := object(props, "quota")
	setNumber(quota, "maxJobCount", e.MaxJobCount)
	if e.RecurrenceFrequency == "" && e.RecurrenceInterval == "" {
		delete(quota, "maxRecurrence")
	} else {
		mr := map[string]any{"frequency": e.RecurrenceFrequency}
		setNumber(mr, "interval", e.RecurrenceInterval)
		quota["maxRecurrence"] = mr
	}
	if len(quota) == 0 {
		delete(props, "quota")
	}
	data, _ := json.Marshal(tree)
	def, err := scheduler.ParseCollection(data)
	if err == nil {
		_, err = h.s.PutCollection(r.Context(), e.Name, def, &scheduler.PutCollectionOptions{IfMatch: e.ETag})
	}
	if err == nil {
		h.log.Info("dashboard: collection saved", "collection", e.Name, "user", v.name())
		return h.collectionURL(e.Name, url.Values{"flash": {"saved"}}), nil
	}
	status, ps, msg := h.refused(r, err, "collection")
	if status == 0 {
		return "", err
	}
	e.Problems, e.Error = ps, msg
	return show(status)
}
