package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/codec"
	"github.com/jobclock/scheduler/internal/names"
	"github.com/jobclock/scheduler/internal/tracectx"
)

// Defaults of Options.
const (
	// DefaultMaxBodyBytes is the default limit of a request body.
	DefaultMaxBodyBytes = 64 << 10
	// DefaultHandlerTimeout is the default limit of one request's work.
	DefaultHandlerTimeout = 30 * time.Second
)

// The api-version values accepted.
const (
	APIVersion20160301 = "2016-03-01"
	APIVersion20160101 = "2016-01-01"
)

// Options configure the handler. A nil *Options means every default.
type Options struct {
	// Authenticator identifies callers. Nil, or a nil *TokenAuth (what
	// LoadTokenAuth returns when no tokens are configured), means no
	// authentication: every request may reach every subscription (use
	// only on a loopback address).
	Authenticator Authenticator
	// Logger receives the handler's log: refused requests (4xx) at
	// Debug, server errors and recovered panics at Error. Nil means
	// slog.Default().
	Logger *slog.Logger
	// MaxBodyBytes limits request bodies; larger ones get 413. Defaults
	// to DefaultMaxBodyBytes (64 KiB).
	MaxBodyBytes int64
	// HandlerTimeout bounds the context of each request's work. Defaults
	// to DefaultHandlerTimeout (30s).
	HandlerTimeout time.Duration
	// BaseURL, such as "https://scheduler.example.com", is used to build
	// nextLink URLs. Empty means the request's scheme and Host.
	BaseURL string
	// Throttle sets each caller's request budget. Nil means the defaults
	// of [Throttle] (120,000 reads and 12,000 writes per hour); set
	// Throttle.Disabled to turn throttling off.
	Throttle *Throttle
	// Admission bounds the operations served at once, across callers,
	// so that API load does not delay the scheduler's firings. Nil means
	// the defaults of [Admission] (2 reads and 1 write at once, a wait
	// of up to 2s for a turn, then 429); set Admission.Disabled to serve
	// every request at once.
	Admission *Admission
	// AuthFailures budgets failed authentications (requests whose
	// credentials the Authenticator refuses): beyond the budget a request
	// is answered 429 TooManyRequests with Retry-After, its credentials
	// not checked. Give the dashboard the same *AuthFailures, so that a
	// failure at one counts at both. Nil means a budget of the handler's
	// own with the defaults of [AuthFailureLimit] (10 per client address
	// and 100 in all per 15 minutes); NewAuthFailures with
	// AuthFailureLimit.Disabled turns the limit off. Unused without an
	// Authenticator.
	AuthFailures *AuthFailures
	// Observer, when set, is told of each request, to trace and measure
	// it: the *telemetry.Observer of package
	// github.com/jobclock/scheduler/telemetry (a module of its own) makes
	// each request a server span named after its method and route
	// pattern ("PUT /subscriptions/{subscriptionId}/..."), continuing the
	// caller's W3C trace context (traceparent header), and measures it in
	// the histogram http.server.request.duration (seconds) by method,
	// route pattern, status code and scheme. Nil means none, at no cost.
	Observer Observer
}

// handler is the http.Handler returned by New.
type handler struct {
	s     *scheduler.Scheduler
	opts  Options
	log   *slog.Logger
	mux   *http.ServeMux
	certs *certCache
	limit *throttle  // nil: no throttling
	admit *admission // nil: no admission control
}

// New returns the management API of s as an http.Handler, to be served at
// the root of a host (paths start with /subscriptions/). opts may be nil.
// See the package documentation for the operations and the rules.
func New(s *scheduler.Scheduler, opts *Options) http.Handler {
	h := &handler{s: s, mux: http.NewServeMux(), certs: newCertCache()}
	if opts != nil {
		h.opts = *opts
	}
	if a, ok := h.opts.Authenticator.(*TokenAuth); ok && a == nil {
		h.opts.Authenticator = nil // LoadTokenAuth's "nothing configured"
	}
	if h.opts.Logger == nil {
		h.opts.Logger = slog.Default()
	}
	if h.opts.MaxBodyBytes <= 0 {
		h.opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if h.opts.HandlerTimeout <= 0 {
		h.opts.HandlerTimeout = DefaultHandlerTimeout
	}
	h.opts.BaseURL = strings.TrimRight(h.opts.BaseURL, "/")
	h.opts.Logger = slog.New(tracectx.LogHandler(h.opts.Logger.Handler()))
	h.log = h.opts.Logger
	h.limit = newThrottle(h.opts.Throttle)
	if h.opts.AuthFailures == nil {
		h.opts.AuthFailures = NewAuthFailures(nil)
	}
	h.admit = newAdmission(h.opts.Admission)
	h.routes()
	if h.opts.Observer != nil {
		return observe(newGuardedObserver(h.opts.Observer, h.log), h)
	}
	return h
}

const (
	subPath  = "/subscriptions/{subscriptionId}"
	rgPath   = subPath + "/resourceGroups/{resourceGroupName}"
	collsSub = subPath + "/providers/Microsoft.Scheduler/jobCollections"
	colls    = rgPath + "/providers/Microsoft.Scheduler/jobCollections"
	coll     = colls + "/{jobCollectionName}"
	jobs     = coll + "/jobs"
	job      = jobs + "/{jobName}"
	cals     = coll + "/calendars"
	cal      = cals + "/{calendarName}"
)

// routes registers the operations. Every path also gets a method-less
// pattern that answers 405 with the allowed methods, and "/" answers 404,
// so that every response has an ARM error body.
func (h *handler) routes() {
	type op struct {
		method string
		fn     func(http.ResponseWriter, *http.Request) error
	}
	table := []struct {
		path string
		ops  []op
	}{
		{collsSub, []op{{"GET", h.listCollectionsBySubscription}}},
		{colls, []op{{"GET", h.listCollectionsByResourceGroup}}},
		{coll, []op{{"GET", h.getCollection}, {"PUT", h.putCollection}, {"PATCH", h.patchCollection}, {"DELETE", h.deleteCollection}}},
		{coll + "/enable", []op{{"POST", h.enableCollection}}},
		{coll + "/disable", []op{{"POST", h.disableCollection}}},
		{cals, []op{{"GET", h.listCalendars}}},
		{cal, []op{{"GET", h.getCalendar}, {"PUT", h.putCalendar}, {"DELETE", h.deleteCalendar}}},
		{jobs, []op{{"GET", h.listJobs}}},
		{job, []op{{"GET", h.getJob}, {"PUT", h.putJob}, {"PATCH", h.patchJob}, {"DELETE", h.deleteJob}}},
		{job + "/run", []op{{"POST", h.runJob}}},
		{job + "/backfill", []op{{"POST", h.backfillJob}}},
		{job + "/history", []op{{"GET", h.listHistory}}},
	}
	for _, e := range table {
		var allow []string
		for _, o := range e.ops {
			allow = append(allow, o.method)
			h.mux.Handle(o.method+" "+e.path, h.op(o.fn))
		}
		allowed := strings.Join(allow, ", ")
		h.mux.HandleFunc(e.path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allowed)
			h.writeError(w, r, newError(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "",
				"The method %s is not allowed here; use %s.", r.Method, allowed))
		})
	}
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.writeError(w, r, newError(http.StatusNotFound, CodeResourceNotFound, "",
			"No API operation matches the path %q.", r.URL.Path))
	})
}

// ServeHTTP adds the request ID, recovers panics, authenticates the
// caller, charges its budget, canonicalises the path and routes the
// request.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h0 := w.Header()
	h0[headerRequestID] = []string{newRequestID()}
	if id := r.Header.Get(headerClientRequestID); id != "" && len(id) <= 200 {
		h0[headerClientRequestID] = []string{id}
	}
	rec := &recorder{ResponseWriter: w}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			h.log.ErrorContext(r.Context(), "httpapi: panic serving request", "method", r.Method, "path", r.URL.Path,
				"panic", v, "stack", string(debug.Stack()))
			if !rec.wrote {
				rec.Header().Del("ETag")
				h.writeError(rec, r, newError(http.StatusInternalServerError, CodeInternalServerError, "",
					"The server encountered an internal error. Please retry the request."))
			}
		}
	}()
	var p *Principal
	authenticated := true
	if a := h.opts.Authenticator; a != nil {
		var err error
		if p, err = h.opts.AuthFailures.Authenticate(r, a); err != nil || p == nil {
			var tooMany *TooManyFailuresError
			if errors.As(err, &tooMany) {
				h.writeError(rec, r, tooManyFailures(rec, tooMany))
				return
			}
			p, authenticated = nil, false
		}
	}
	if h.limit != nil {
		if e := h.limit.admit(rec, r, p); e != nil {
			h.writeError(rec, r, e)
			return
		}
	}
	if !authenticated {
		rec.Header().Set("WWW-Authenticate", `Bearer realm="jobclock"`)
		h.writeError(rec, r, newError(http.StatusUnauthorized, CodeAuthenticationFailed, "",
			"Authentication failed: the request needs a valid bearer token in the Authorization header."))
		return
	}
	if p != nil {
		r = r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
	}
	if p := canonicalPath(r.URL.Path); p != r.URL.Path {
		r2 := new(http.Request)
		*r2 = *r
		u := *r.URL
		u.Path, u.RawPath = p, ""
		r2.URL = &u
		r = r2
	}
	h.mux.ServeHTTP(rec, r)
	noteRoute(r)
}

// recorder notes whether a response has been started.
type recorder struct {
	http.ResponseWriter
	wrote bool
}

func (r *recorder) WriteHeader(code int) {
	r.wrote = true
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// canonicalPath rewrites the literal segments of an API path to their
// canonical spelling, so that they match without regard to case as ARM
// paths do. Names (subscription, resource group, collection, job) are left
// alone.
func canonicalPath(p string) string {
	// Split without allocating for the paths the API serves (at most
	// 16 segments); strings.Split's result otherwise.
	var buf [16]string
	segs := buf[:0]
	for rest := p; ; {
		seg, after, more := strings.Cut(rest, "/")
		segs = append(segs, seg)
		if !more {
			break
		}
		rest = after
	}
	changed := false
	lit := func(i int, want ...string) bool {
		if i >= len(segs) {
			return false
		}
		for _, w := range want {
			if strings.EqualFold(segs[i], w) {
				if segs[i] != w {
					segs[i], changed = w, true
				}
				return true
			}
		}
		return false
	}
	if len(segs) < 2 || segs[0] != "" || !lit(1, "subscriptions") {
		return p
	}
	i := 3
	if lit(i, "resourceGroups") {
		i += 2
	}
	if lit(i, "providers") && lit(i+1, "Microsoft.Scheduler") && lit(i+2, "jobCollections") {
		j := i + 4
		if !lit(j, "enable", "disable") && lit(j, "jobs") {
			lit(j+2, "run", "history")
		}
	}
	if !changed {
		return p
	}
	return strings.Join(segs, "/")
}

// Response headers in canonical form, so that setting them needs no
// canonicalisation (http.Header.Set would allocate one per call).
var (
	headerRequestID       = http.CanonicalHeaderKey("x-ms-request-id")
	headerClientRequestID = http.CanonicalHeaderKey("x-ms-client-request-id")
	headerRemainingReads  = http.CanonicalHeaderKey(HeaderRemainingReads)
	headerRemainingWrites = http.CanonicalHeaderKey(HeaderRemainingWrites)
	headerETag            = http.CanonicalHeaderKey("ETag")
)

// newRequestID returns a random (version 4) UUID.
func newRequestID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var x [36]byte
	hex.Encode(x[0:8], b[0:4])
	x[8] = '-'
	hex.Encode(x[9:13], b[4:6])
	x[13] = '-'
	hex.Encode(x[14:18], b[6:8])
	x[18] = '-'
	hex.Encode(x[19:23], b[8:10])
	x[23] = '-'
	hex.Encode(x[24:], b[10:])
	return string(x[:])
}

// op adapts an operation that returns an error to an http.Handler: it
// waits for the operation's turn (see Admission), and writes an error as
// an ARM error response.
func (h *handler) op(fn func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.admit != nil {
			leave, err := h.admit.enter(r.Context(), w, r)
			var ae *apiError
			switch {
			case errors.As(err, &ae):
				h.writeError(w, r, ae)
				return
			case err != nil:
				return // the caller is gone
			}
			defer leave()
		}
		ctx, cancel := context.WithTimeout(r.Context(), h.opts.HandlerTimeout)
		defer cancel()
		if err := fn(w, r.WithContext(ctx)); err != nil {
			var ae *apiError
			if !errors.As(err, &ae) {
				ae = h.internal(r, err)
			}
			h.writeError(w, r, ae)
		}
	})
}

// stoppedRetryAfter is the Retry-After, in seconds, of the 503 that
// answers a request reaching a stopped Scheduler: a process shutting down,
// whose client retries at another one behind the same address.
const stoppedRetryAfter = "5"

// internal logs an unexpected error and returns a 500 (or 503 when the
// scheduler is stopped, with Retry-After, or the request timed out).
func (h *handler) internal(r *http.Request, err error) *apiError {
	switch {
	case errors.Is(err, scheduler.ErrStopped):
		e := newError(http.StatusServiceUnavailable, CodeServiceUnavailable, "",
			"The scheduler is shutting down. Please retry the request.")
		e.retryAfter = stoppedRetryAfter
		return e
	case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil:
		h.log.ErrorContext(r.Context(), "httpapi: request timed out", "method", r.Method, "path", r.URL.Path, "err", err)
		return newError(http.StatusServiceUnavailable, CodeServiceUnavailable, "",
			"The operation could not be completed within the permitted time. Please retry the request.")
	}
	h.log.ErrorContext(r.Context(), "httpapi: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	return newError(http.StatusInternalServerError, CodeInternalServerError, "",
		"The server encountered an internal error. Please retry the request.")
}

func (h *handler) writeError(w http.ResponseWriter, r *http.Request, e *apiError) {
	if e.status < 500 {
		h.log.DebugContext(r.Context(), "httpapi: request refused", "method", r.Method, "path", r.URL.Path,
			"status", e.status, "code", e.detail.Code, "message", e.detail.Message)
	}
	if e.retryAfter != "" {
		w.Header().Set("Retry-After", e.retryAfter)
	}
	writeJSON(w, e.status, ErrorResponse{Error: e.detail})
}

// writeJSON writes v as the response body with encoding/json, as the API
// writes every body: without HTML escaping, ending with a newline. A value
// encoding/json refuses gives a 500.
func writeJSON(w http.ResponseWriter, status int, v any) {
	buf := jsonBuffers.Get().(*[]byte)
	defer putJSONBuffer(buf)
	b, err := codec.Append((*buf)[:0], v, false)
	if err != nil {
		b = append(b[:0], `{"error":{"code":"InternalServerError","message":"The response could not be encoded."}}`...)
		status = http.StatusInternalServerError
	}
	*buf = append(b, '\n')
	writeBody(w, status, *buf)
}

// writeBody writes a response with the JSON body b.
func writeBody(w http.ResponseWriter, status int, b []byte) {
	w.Header()["Content-Type"] = []string{"application/json; charset=utf-8"}
	w.WriteHeader(status)
	w.Write(b)
}

// writeJob writes the resource of the job r in scope sc.
func (h *handler) writeJob(w http.ResponseWriter, status int, sc scope, r *scheduler.JobRecord) {
	res := h.jobResource(sc, r)
	writeJSON(w, status, &res)
}

// jsonBuffers holds the buffers responses are encoded in: a job's
// response is a few kilobytes, which a fresh buffer reaches by growing
// several times.
var jsonBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledJSONBuffer bounds the buffers kept for reuse, so that one
// large list does not stay in memory.
const maxPooledJSONBuffer = 64 << 10

func putJSONBuffer(b *[]byte) {
	if cap(*b) <= maxPooledJSONBuffer {
		*b = (*b)[:0]
		jsonBuffers.Put(b)
	}
}

// writeEmpty writes a response without a body.
func writeEmpty(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(status)
}

func setETag(w http.ResponseWriter, etag string) {
	if etag != "" {
		w.Header()[headerETag] = []string{`"` + etag + `"`}
	}
}

// ifMatch returns the entity tag of the If-Match header without quotes
// ("*" as is); empty when there is none.
func ifMatch(r *http.Request) string {
	v := strings.TrimSpace(r.Header.Get("If-Match"))
	v = strings.TrimPrefix(v, "W/")
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	return v
}

// request is what an operation learns from the path and query.
type request struct {
	sc       scope
	job      string
	calendar string
}

// prelude checks what every operation needs: the caller may reach the
// subscription (and, with any method but GET and HEAD, change it), the
// api-version is known and the names in the path are valid.
func (h *handler) prelude(r *http.Request) (*request, error) {
	sub := r.PathValue("subscriptionId")
	if h.opts.Authenticator != nil {
		p := PrincipalFrom(r.Context())
		if !p.Allows(sub) {
			return nil, newError(http.StatusForbidden, CodeAuthorizationFailed, "",
				"The client is not authorized to reach subscription '%s'.", sub)
		}
		if p.ReadOnly && r.Method != http.MethodGet && r.Method != http.MethodHead {
			return nil, newError(http.StatusForbidden, CodeAuthorizationFailed, "",
				"The client may only read: its token is read-only, so it may not %s here.", r.Method)
		}
	}
	switch v := apiVersion(r.URL); v {
	case APIVersion20160301, APIVersion20160101:
	case "":
		return nil, newError(http.StatusBadRequest, CodeMissingAPIVersion, "api-version",
			"The api-version query parameter is required; supported versions are %s and %s.", APIVersion20160301, APIVersion20160101)
	default:
		return nil, newError(http.StatusBadRequest, CodeInvalidAPIVersion, "api-version",
			"The api-version '%s' is not supported; supported versions are %s and %s.", v, APIVersion20160301, APIVersion20160101)
	}
	req := &request{sc: scope{sub: strings.ToLower(sub), rg: r.PathValue("resourceGroupName"), jc: r.PathValue("jobCollectionName")}, job: r.PathValue("jobName"), calendar: r.PathValue("calendarName")}
	var details []ErrorDetail
	check := func(param, v string, valid func(string) bool, rule string) {
		if v == "" && param != "subscriptionId" {
			return // not in this path
		}
		if !valid(v) {
			details = append(details, ErrorDetail{Code: CodeBadRequest, Target: param,
				Message: "The " + param + " '" + v + "' is invalid: " + rule + "."})
		}
	}
	const scopeRule = "1 to 90 characters of letters, digits, '-', '_', '.', '(' and ')', starting with a letter or digit"
	const nameRule = "1 to 100 characters of letters, digits, '-' and '_', starting with a letter"
	check("subscriptionId", sub, names.ValidScope, scopeRule)
	check("resourceGroupName", req.sc.rg, names.ValidScope, scopeRule)
	check("jobCollectionName", req.sc.jc, names.Valid, nameRule)
	check("jobName", req.job, names.Valid, nameRule)
	check("calendarName", req.calendar, names.Valid, nameRule)
	switch len(details) {
	case 0:
		return req, nil
	case 1:
		return nil, &apiError{status: http.StatusBadRequest, detail: details[0]}
	}
	msgs := make([]string, len(details))
	for i, d := range details {
		msgs[i] = d.Message
	}
	return nil, &apiError{status: http.StatusBadRequest, detail: ErrorDetail{Code: CodeBadRequest,
		Message: "The request has " + itoa(len(details)) + " errors: " + strings.Join(msgs, " "), Details: details}}
}

// apiVersion returns the api-version query parameter of u, as
// u.Query().Get does, without decoding the whole query when it is only
// that parameter with a version spelled plainly.
func apiVersion(u *url.URL) string {
	if v, ok := strings.CutPrefix(u.RawQuery, "api-version="); ok && (v == APIVersion20160301 || v == APIVersion20160101) {
		return v
	}
	return u.Query().Get("api-version")
}

// body reads the request body within the size limit. An empty body is an
// error.
func (h *handler) body(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, newError(http.StatusRequestEntityTooLarge, CodeRequestEntityTooLarge, "",
				"The request body is larger than %d bytes.", h.opts.MaxBodyBytes)
		}
		return nil, badRequest("", "The request body could not be read: %v.", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, badRequest("", "The request body is required.")
	}
	return data, nil
}

// pageURL returns the URL of r with $skip replaced.
func (h *handler) pageURL(r *http.Request, skip int) string {
	base := h.opts.BaseURL
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	// Keep the client's parameters as sent, replacing only $skip.
	var parts []string
	for _, kv := range strings.Split(r.URL.RawQuery, "&") {
		k, _, _ := strings.Cut(kv, "=")
		if uk, err := url.QueryUnescape(k); kv == "" || err == nil && uk == "$skip" {
			continue
		}
		parts = append(parts, kv)
	}
	parts = append(parts, "$skip="+itoa(skip))
	return base + r.URL.EscapedPath() + "?" + strings.Join(parts, "&")
}

func itoa(n int) string { return strconv.Itoa(n) }
