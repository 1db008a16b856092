package http

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	nethttp "net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/lru"
	"github.com/jobclock/scheduler/internal/tracectx"
	"github.com/jobclock/scheduler/secrets"
)

// Defaults of Options.
const (
	// DefaultTimeout is the time one attempt may take, from sending the
	// request to reading the response, when Options.Timeout is zero.
	DefaultTimeout = 60 * time.Second
	// DefaultMaxMessageBody is how many bytes of the response body
	// Result.Message keeps when Options.MaxMessageBody is zero.
	DefaultMaxMessageBody = 2048
	// DefaultAuthority is the base URL of the Microsoft Entra ID (Azure AD)
	// token endpoint used by ActiveDirectoryOAuth authentication when
	// neither the action nor Options names one.
	DefaultAuthority = "https://login.microsoftonline.com/"
	// DefaultTokenRefreshMargin is how long before its expiry a cached
	// access token is replaced when Options.TokenRefreshMargin is zero.
	DefaultTokenRefreshMargin = 5 * time.Minute
	// DefaultMaxTokens is how many access tokens are cached when
	// Options.MaxTokens is zero.
	DefaultMaxTokens = 1000
	// DefaultMaxCertificates is how many client certificates (each with its
	// own connection pool) are cached when Options.MaxCertificates is zero.
	DefaultMaxCertificates = 32
	// DefaultUserAgent is the User-Agent of outbound requests whose action
	// sets none.
	DefaultUserAgent = "jobclock"
)

// The headers the executor adds to every request, spelled in lower case on
// the wire. Header values of the action with these names (in any case) are
// replaced.
const (
	HeaderJobID                 = "x-ms-scheduler-jobid"
	HeaderJobCollectionID       = "x-ms-scheduler-jobcollectionid"
	HeaderExpectedExecutionTime = "x-ms-scheduler-expected-execution-time"
	HeaderExecutionTag          = "x-ms-scheduler-execution-tag"
	HeaderClientRequestID       = "x-ms-client-request-id"
)

var schedulerHeaders = []string{
	HeaderJobID, HeaderJobCollectionID, HeaderExpectedExecutionTime, HeaderExecutionTag, HeaderClientRequestID,
}

// Bounds that are not options.
const (
	// drainLimit is how much of a response body beyond what the message
	// keeps is read and discarded so that the connection can be reused.
	// A longer body is not read further; its connection is closed.
	drainLimit = 256 << 10
	// maxMessageHeaders bounds the "Headers:" part of a message.
	maxMessageHeaders = 4096
	// maxTokenResponse bounds the body read from a token endpoint.
	maxTokenResponse = 64 << 10
)

// Options configures an Executor. The zero value, and a nil *Options, mean
// every default.
type Options struct {
	// Timeout bounds one attempt: connecting, sending, waiting for the
	// response and reading the part of its body that is kept. The context
	// passed to Execute can end the attempt sooner. An action's own
	// Timeout replaces it for that action's attempts. Defaults to
	// DefaultTimeout (60s).
	Timeout time.Duration

	// Client supplies the transport settings (proxy, TLS roots, dialer,
	// connection pool) and cookie jar of outbound requests. Its
	// CheckRedirect is ignored: redirects are never followed. Its Timeout,
	// if set, applies as well as Timeout. ClientCertificate authentication
	// needs Client.Transport to be nil or a *net/http.Transport, which is
	// cloned once per certificate. The executor does not modify Client.
	// Nil means a client with a clone of net/http's DefaultTransport that
	// keeps up to 16 idle connections per host.
	Client *nethttp.Client

	// MaxMessageBody is how many bytes of the response body Result.Message
	// keeps; a longer body is cut at a UTF-8 character boundary and marked
	// "(truncated)". Defaults to DefaultMaxMessageBody (2048). A negative
	// value keeps no body.
	MaxMessageBody int

	// Authority is the base URL of the token endpoint for
	// ActiveDirectoryOAuth authentication, used when the action's
	// authentication has no "authority". Defaults to DefaultAuthority.
	Authority string

	// TokenRefreshMargin is how long before expiry a cached access token is
	// fetched anew; it is capped at half the token's lifetime. Defaults to
	// DefaultTokenRefreshMargin (5m).
	TokenRefreshMargin time.Duration

	// MaxTokens bounds the access token cache. Defaults to DefaultMaxTokens.
	MaxTokens int

	// MaxCertificates bounds the cache of parsed client certificates and
	// their connection pools; the least recently used one is dropped (and
	// its idle connections closed) when a new one does not fit. Defaults to
	// DefaultMaxCertificates.
	MaxCertificates int
}

// Executor runs Http and Https actions. Create it with New; it is safe for
// concurrent use. Call Close when done with it to release idle connections.
type Executor struct {
	timeout   time.Duration
	maxBody   int
	authority string

	given  *nethttp.Client // Options.Client
	once   sync.Once       // makes client and the transports
	client *nethttp.Client // plain requests and token requests
	// baseTLS is the template of the certificate transports, always a
	// *net/http.Transport; nil if unavailable. No field's type refers to
	// *net/http.Transport: an Executor is used as an interface value
	// (action.Executor), and the linker keeps the methods of the types
	// its fields refer to, which from a Transport reach the TLS client
	// (about 1.9 MB with what it links) even in a program that never
	// sends a request.
	baseTLS    nethttp.RoundTripper
	baseTLSErr string // why baseTLS is nil

	maxCerts int                                            // Options.MaxCertificates; 0: not made by New
	certs    *lru.Cache[[sha256.Size]byte, *nethttp.Client] // certificate clients, made by setup
	tokens   *tokenCache
}

var (
	_ action.Executor  = (*Executor)(nil)
	_ action.Validator = (*Executor)(nil)
)

// New returns an Executor configured by opts; nil opts means all defaults.
func New(opts *Options) *Executor {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	switch {
	case o.MaxMessageBody == 0:
		o.MaxMessageBody = DefaultMaxMessageBody
	case o.MaxMessageBody < 0:
		o.MaxMessageBody = 0
	}
	if o.Authority == "" {
		o.Authority = DefaultAuthority
	}
	if o.TokenRefreshMargin <= 0 {
		o.TokenRefreshMargin = DefaultTokenRefreshMargin
	}
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	if o.MaxCertificates <= 0 {
		o.MaxCertificates = DefaultMaxCertificates
	}

	e := &Executor{timeout: o.Timeout, maxBody: o.MaxMessageBody, authority: o.Authority, given: o.Client, maxCerts: o.MaxCertificates}
	e.tokens = newTokenCache(o.MaxTokens, o.TokenRefreshMargin)
	return e
}

// setup makes the client, the transports and the cache of certificate
// clients (whose eviction closes a transport's connections) on first use,
// so that a program that never sends a request does not link the HTTP
// client.
func (e *Executor) setup() {
	e.once.Do(func() {
		e.certs = newCertCache(e.maxCerts)
		var c nethttp.Client
		if e.given != nil {
			c = *e.given
		}
		switch t := c.Transport.(type) {
		case nil:
			if e.given == nil {
				tr := defaultTransport()
				c.Transport = tr
				e.baseTLS = tr
			} else if dt, ok := nethttp.DefaultTransport.(*nethttp.Transport); ok {
				e.baseTLS = dt
			} else {
				e.baseTLSErr = fmt.Sprintf("net/http.DefaultTransport is a %T, not a *net/http.Transport", nethttp.DefaultTransport)
			}
		case *nethttp.Transport:
			if t != nil {
				e.baseTLS = t
			}
		default:
			e.baseTLSErr = fmt.Sprintf("Options.Client.Transport is a %T, not a *net/http.Transport", t)
		}
		c.CheckRedirect = noRedirect
		e.client = &c
	})
}

func defaultTransport() *nethttp.Transport {
	if dt, ok := nethttp.DefaultTransport.(*nethttp.Transport); ok {
		t := dt.Clone()
		t.MaxIdleConnsPerHost = 16
		return t
	}
	return &nethttp.Transport{Proxy: nethttp.ProxyFromEnvironment, MaxIdleConnsPerHost: 16}
}

func noRedirect(*nethttp.Request, []*nethttp.Request) error { return nethttp.ErrUseLastResponse }

// Close releases the idle connections of the transports the executor made
// (its default transport and one per cached client certificate) and empties
// its caches. The executor stays usable; later requests open new
// connections. A transport supplied in Options.Client is left alone.
func (e *Executor) Close() {
	if e == nil || e.maxCerts == 0 {
		return
	}
	e.setup()
	if e.given == nil { // the client's transport is the one setup made
		e.client.CloseIdleConnections()
	}
	e.certs.Clear()
	e.tokens.clear()
}

// errTimeout is the cause of an attempt's context when Options.Timeout ends it.
var errTimeout = errors.New("timeout")

// Execute sends the HTTP request of req.Action and reports whether the
// response status was 2xx. It returns a nil error on success. On failure
// the error says why, and the Result (non-nil whenever req.Action has a
// request) carries the message for the job's history: the response status,
// headers and the start of the body, or why no response came. A non-2xx
// response gives a *StatusError; no response (connection error, timeout,
// cancellation, refused token request) a *RequestError; a problem with the
// action's fields a *FieldError, which may be wrapped in a *RequestError
// naming the host, and is marked [action.Permanent]. Use errors.As to tell
// them apart. A nil ctx means context.Background().
//
// When ctx carries a trace (the Scheduler's attempt span, made by package
// telemetry when the host opts in, or an occurrence's stored trace
// context), the request is traced as a client span, a child of it made
// with the same tracer provider, named after the method and described
// with the OpenTelemetry HTTP client conventions (http.request.method,
// server.address, server.port, url.full with credentials and query values
// redacted, http.response.status_code, error.type); the request carries
// that span's W3C trace context in the traceparent and tracestate headers,
// replacing the action's own headers of those names. (A stored trace
// context without a tracer makes no span and is passed on as it is.)
func (e *Executor) Execute(ctx context.Context, req *action.Request) (res *action.Result, err error) {
	if e == nil || e.maxCerts == 0 {
		return nil, errors.New("http: Executor not created with New")
	}
	e.setup()
	if ctx == nil {
		ctx = context.Background()
	}
	if req == nil || req.Action == nil {
		return nil, errors.New("http: Execute called without an action")
	}
	path := "action"
	if req.ErrorAction {
		path = "action.errorAction"
	}
	hr := req.Action.Request
	if hr == nil {
		return notSent("", path, &FieldError{Path: "request", Reason: fmt.Sprintf("is required for %s actions", req.Action.Type)}, nil)
	}
	p, err := prepare(hr)
	if err != nil {
		host := ""
		if p != nil {
			host = p.u.Host
		}
		return notSent(host, path, err, nil)
	}
	host := p.u.Host

	timeout := req.Action.AttemptTimeout(e.timeout)
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()
	var status int // of the response, if any
	var span tracectx.Span
	// Without a trace in ctx there is no span: skip describing one.
	if tracectx.From(ctx) != nil {
		ctx, span = tracectx.Start(ctx, scope, p.method, tracectx.Client, spanAttributes(p)...)
		defer func() { endSpan(span, status, err) }()
	}

	hreq, err := nethttp.NewRequestWithContext(ctx, p.method, p.u.String(), bodyReader(hr.Body))
	if err != nil {
		return notSent(host, path, &FieldError{Path: "request.method", Value: quote(hr.Method), Reason: err.Error()}, nil)
	}
	for k, v := range hr.Headers {
		if isSchedulerHeader(k) {
			continue
		}
		if strings.EqualFold(k, "Host") {
			hreq.Host = v
			continue
		}
		hreq.Header.Set(k, v)
	}
	if hreq.Header.Get("User-Agent") == "" {
		hreq.Header.Set("User-Agent", DefaultUserAgent)
	}
	// Set directly so that the names go on the wire in lower case.
	hreq.Header[HeaderJobID] = []string{req.JobID()}
	hreq.Header[HeaderJobCollectionID] = []string{req.CollectionID}
	hreq.Header[HeaderExpectedExecutionTime] = []string{req.ExpectedTime.UTC().Format(time.RFC3339Nano)}
	hreq.Header[HeaderExecutionTag] = []string{req.ExecutionTag()}
	hreq.Header[HeaderClientRequestID] = []string{req.ClientRequestID()}
	if span != nil {
		delete(hreq.Header, "Traceparent")
		delete(hreq.Header, "Tracestate")
		parent, state := span.TraceContext()
		hreq.Header["Traceparent"] = []string{parent}
		if state != "" {
			hreq.Header["Tracestate"] = []string{state}
		}
	}

	client := e.client
	var secrets []string
	if a := hr.Authentication; a != nil {
		switch a.Type {
		case action.AuthBasic:
			hreq.SetBasicAuth(a.Username, a.Password)
			secrets = append(secrets, a.Password, hreq.Header.Get("Authorization"))
		case action.AuthClientCertificate:
			secrets = append(secrets, a.Password, a.Pfx)
			c, err := e.certClient(a)
			if err != nil {
				return notSent(host, path, err, secrets)
			}
			client = c
		case action.AuthActiveDirectoryOAuth:
			secrets = append(secrets, a.Secret)
			tok, err := e.token(ctx, a)
			if err != nil {
				return notSent(host, path, timeoutErr(ctx, timeout, err), secrets)
			}
			hreq.Header.Set("Authorization", "Bearer "+tok)
			secrets = append(secrets, tok)
		}
	}

	resp, err := client.Do(hreq)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return failure(host, timeoutErr(ctx, timeout, err), secrets)
	}
	status = resp.StatusCode
	msg, readErr := e.describe(host, resp)
	resp.Body.Close()
	if readErr != nil {
		// The status alone decides success: a body cut short (by the
		// timeout, say) does not turn a 2xx into a failure. The message
		// says what happened.
		msg += " (reading the body failed: " + timeoutErr(ctx, timeout, readErr).Error() + ")"
	}
	res = &action.Result{Message: strings.ToValidUTF8(redact(msg, secrets), "\uFFFD")}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return res, &StatusError{Host: host, StatusCode: resp.StatusCode, Status: statusText(resp), RetryAfter: retryAfter(resp, time.Now())}
	}
	return res, nil
}

// timeoutErr turns the context errors of an ended attempt under timeout
// into errors that say what ended it; other errors are returned as they
// are.
func timeoutErr(ctx context.Context, timeout time.Duration, err error) error {
	if ctx.Err() == nil {
		return err
	}
	switch {
	case context.Cause(ctx) == errTimeout:
		return fmt.Errorf("timed out after %v: %w", timeout, context.DeadlineExceeded)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("timed out (the attempt's deadline passed): %w", context.DeadlineExceeded)
	default:
		return fmt.Errorf("canceled: %w", context.Cause(ctx))
	}
}

// failure makes the result and error of an attempt that got no response.
func failure(host string, err error, secrets []string) (*action.Result, error) {
	text := redact(err.Error(), secrets)
	msg := fmt.Sprintf("Failed: no response from host '%s': %s", host, text)
	return &action.Result{Message: strings.ToValidUTF8(msg, "\uFFFD")}, &RequestError{Host: host, Err: redactErr(err, text)}
}

// notSent makes the result and error of an attempt that failed before
// anything was sent to host, because of err: a problem with a field of the
// action at path ("action" or "action.errorAction"), named by its full
// path, or a failure to prepare the request, such as its access token
// request. A *FieldError, a problem of the definition itself, is marked
// [action.Permanent]: no retry mends it. With a host the error is a
// *RequestError, without one (the uri is at fault) err itself.
func notSent(host, path string, err error, secrets []string) (*action.Result, error) {
	var fe *FieldError
	isField := errors.As(err, &fe)
	what := err.Error()
	switch {
	case isField:
		what = path + "." + fe.Error()
	default:
		what = path + ".request.authentication: " + what
	}
	what = redact(what, secrets)
	msg := "Failed: " + what
	if host != "" {
		msg += "; nothing was sent to host '" + host + "'"
		err = &RequestError{Host: host, Err: redactErr(err, redact(err.Error(), secrets))}
	}
	res := &action.Result{Message: strings.ToValidUTF8(msg, "\uFFFD")}
	if isField {
		return res, action.Permanent(err)
	}
	return res, err
}

// prepared is the checked part of an HTTP request.
type prepared struct {
	u      *url.URL
	method string
}

// prepare checks the fields of r that Execute needs. It returns a non-nil
// prepared with the URL whenever the URL could be parsed, so that errors
// about other fields can name the host.
func prepare(r *action.HTTPRequest) (*prepared, error) {
	if r.URI == "" {
		return nil, &FieldError{Path: "request.uri", Reason: "is required"}
	}
	u, err := url.Parse(r.URI)
	if err != nil {
		return nil, &FieldError{Path: "request.uri", Reason: "is not a valid URL: " + unwrapURLError(err)}
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return nil, &FieldError{Path: "request.uri", Value: quote(u.Redacted()), Reason: "must be an absolute http or https URL"}
	}
	if u.Host == "" {
		return nil, &FieldError{Path: "request.uri", Value: quote(u.Redacted()), Reason: "has no host"}
	}
	p := &prepared{u: u, method: strings.ToUpper(r.Method)}
	if r.Method == "" {
		return p, &FieldError{Path: "request.method", Reason: "is required"}
	}
	if !isToken(r.Method) {
		return p, &FieldError{Path: "request.method", Value: quote(r.Method), Reason: "is an invalid method (not an HTTP token)"}
	}
	if a := r.Authentication; a != nil {
		switch a.Type {
		case "", "NotSpecified", action.AuthBasic:
		case action.AuthClientCertificate:
			if scheme != "https" {
				return p, &FieldError{Path: "request.authentication.type", Value: quote(string(a.Type)), Reason: "needs an https uri"}
			}
			if a.Pfx == "" {
				return p, &FieldError{Path: "request.authentication.pfx", Reason: "is required for ClientCertificate authentication"}
			}
		case action.AuthActiveDirectoryOAuth:
			for _, f := range []struct{ path, v string }{
				{"request.authentication.tenant", a.Tenant},
				{"request.authentication.audience", a.Audience},
				{"request.authentication.clientId", a.ClientID},
				{"request.authentication.secret", a.Secret},
			} {
				if f.v == "" {
					return p, &FieldError{Path: f.path, Reason: "is required for ActiveDirectoryOAuth authentication"}
				}
			}
		default:
			return p, &FieldError{Path: "request.authentication.type", Value: quote(string(a.Type)), Reason: "is not an authentication type (ClientCertificate, ActiveDirectoryOAuth or Basic)"}
		}
	}
	return p, nil
}

// ValidateRequest reports the problems Execute would find with r before
// sending it: a missing or malformed uri, a missing method, an unknown
// authentication type, missing authentication fields, and a pfx that is not
// base64 or that its password does not open. Errors are *FieldError values
// whose Path is relative to the action ("request.uri"). A nil r is
// reported as a missing request. It reads a client certificate with
// [ReadCertificate], whose outcome a description of the same certificate
// then finds read.
func ValidateRequest(r *action.HTTPRequest) error {
	if r == nil {
		return &FieldError{Path: "request", Reason: "is required"}
	}
	if _, err := prepare(r); err != nil {
		return err
	}
	if a := r.Authentication; a != nil && a.Type == action.AuthClientCertificate {
		if _, err := ReadCertificate(a.Pfx, a.Password); err != nil {
			return err
		}
	}
	return nil
}

// ValidateAction reports, when a job is put, the problems ValidateRequest
// finds with a's request, so that a request Execute would refuse before
// sending it, such as a client certificate whose pfx is not a PKCS#12 file
// or does not open with its password, is refused then, at its path
// (request.authentication.pfx or request.authentication.password), rather
// than failing every attempt. A pfx or password that is sealed (see
// package secrets) is not opened here: the Scheduler checks the job again
// once it opened them. An action without a request is left to the
// general rules.
func (e *Executor) ValidateAction(a *action.Action) error {
	r := a.Request
	if r == nil {
		return nil
	}
	if au := r.Authentication; au != nil && (secrets.IsSealed(au.Pfx) || secrets.IsSealed(au.Password)) {
		_, err := prepare(r)
		return err
	}
	return ValidateRequest(r)
}

// isToken reports whether s is an HTTP token (RFC 9110 section 5.6.2).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return s != ""
}

func isSchedulerHeader(name string) bool {
	for _, h := range schedulerHeaders {
		if strings.EqualFold(name, h) {
			return true
		}
	}
	return false
}

func bodyReader(body string) io.Reader {
	if body == "" {
		return nil
	}
	return strings.NewReader(body)
}

// describe reads what the message keeps of resp's body, drains a bounded
// amount more, and formats the message: the outcome and the status first,
// then the body, then the headers, one per line (see "Outcome" in the
// package documentation):
//
//	Failed: 404 Not Found from host 'example.com'
//	Body: no such page
//	Headers:
//	  Content-Type: text/plain
func (e *Executor) describe(host string, resp *nethttp.Response) (string, error) {
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, int64(e.maxBody)+1))
	if readErr == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	}
	var b strings.Builder
	outcome := "Failed"
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		outcome = "Completed"
	}
	b.WriteString(outcome + ": " + statusSummary(host, resp.StatusCode, statusText(resp)))
	text, cut := truncateUTF8(body, e.maxBody)
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if !cut {
		text = strings.TrimSuffix(text, "\n") // the line ends here anyway
	}
	if text != "" || cut {
		b.WriteString("\nBody: " + text)
	}
	if cut {
		b.WriteString("... (truncated)")
	}
	b.WriteString(formatHeaders(resp.Header))
	return b.String(), readErr
}

// statusSummary is the one line that says which status host answered:
// "404 Not Found from host 'example.com'", the error text of a
// *StatusError.
func statusSummary(host string, code int, status string) string {
	return fmt.Sprintf("%d %s from host '%s'", code, status, host)
}

// statusText is the reason phrase of resp ("Not Found"), or the standard
// one for its code when the server sent none.
func statusText(resp *nethttp.Response) string {
	s := strings.TrimSpace(strings.TrimPrefix(resp.Status, fmt.Sprint(resp.StatusCode)))
	if s == "" {
		s = nethttp.StatusText(resp.StatusCode)
	}
	if s == "" {
		s = fmt.Sprint(resp.StatusCode)
	}
	return s
}

// formatHeaders lists h sorted, as "\nHeaders:" and a line "  Name:
// value" for each value, up to maxMessageHeaders bytes; "" for none.
func formatHeaders(h nethttp.Header) string {
	if len(h) == 0 {
		return ""
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("\nHeaders:")
	for _, k := range keys {
		for _, v := range h[k] {
			line := "\n  " + k + ": " + v
			if b.Len()+len(line) > maxMessageHeaders {
				b.WriteString("\n  ... (truncated)")
				return b.String()
			}
			b.WriteString(line)
		}
	}
	return b.String()
}

// truncateUTF8 returns at most max bytes of b, cut before a UTF-8 sequence
// that would not fit, and whether anything was cut.
func truncateUTF8(b []byte, max int) (string, bool) {
	if len(b) <= max {
		return string(b), false
	}
	// b[max] exists. If it continues a multi-byte sequence, back up to
	// the sequence's first byte (at most UTFMax-1 bytes for valid UTF-8).
	i := max
	for j := max; j > 0 && j > max-utf8.UTFMax; j-- {
		if utf8.RuneStart(b[j]) {
			i = j
			break
		}
	}
	return string(b[:i]), true
}

// redact replaces each secret of at least 4 bytes in s with "***". Shorter
// secrets are left, since replacing them would garble the text.
func redact(s string, secrets []string) string {
	for _, sec := range secrets {
		if len(sec) >= 4 {
			s = strings.ReplaceAll(s, sec, "***")
		}
	}
	return s
}

// redactErr keeps err when redaction did not change its text, so that
// errors.Is and errors.As still see the chain; otherwise it returns an
// error with the redacted text that still unwraps to the context errors.
func redactErr(err error, text string) error {
	if text == err.Error() {
		return err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &redactedError{text, context.DeadlineExceeded}
	case errors.Is(err, context.Canceled):
		return &redactedError{text, context.Canceled}
	}
	return &redactedError{text, nil}
}

type redactedError struct {
	text string
	err  error
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }

func unwrapURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}
