package jobdef

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jobclock/scheduler/action"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/internal/jsonpath"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
	"github.com/jobclock/scheduler/secrets"
)

// HTTPMethods lists the methods an HTTP action may use, in canonical
// (upper-case) spelling.
var HTTPMethods = []string{"GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS"}

// Validate reports every problem with j as joined [*ValidationError]
// values ordered by path (nil when j is valid), applying the rules that [ParseJob] applies
// after decoding; paths are relative to the job ("action.request.uri").
// Enum values must be in canonical spelling, except that the HTTP method
// and host-registered action types may be in any case. Validate does not
// modify j. opts may be nil.
func (j *Job) Validate(opts *ParseOptions) error {
	if opts == nil {
		opts = &ParseOptions{}
	}
	var p problems
	for _, e := range validateJob(j, opts) {
		p.errs = append(p.errs, e)
		p.rank = append(p.rank, 2)
	}
	return p.err()
}

// canonicalize rewrites the values that ParseJob accepts in any case and
// that the JSON decoders of the types do not already canonicalize, and
// expands a recurrence's cron spec into the fields it stands for.
func canonicalize(j *Job, opts *ParseOptions) {
	expandCron(j)
	for a := &j.Action; a != nil; a = a.ErrorAction {
		if t, ok := customType(a.Type, opts); ok && !a.Type.Builtin() {
			a.Type = t
		}
		if r := a.Request; r != nil {
			if m := strings.ToUpper(r.Method); isMethod(m) {
				r.Method = m
			}
		}
		for _, m := range []*action.ServiceBusMessage{sbMessage(a.ServiceBusQueueMessage), sbTopicMessage(a.ServiceBusTopicMessage)} {
			if m != nil && m.Authentication != nil {
				for _, k := range sbAuthTypes {
					if strings.EqualFold(m.Authentication.Type, k) {
						m.Authentication.Type = k
					}
				}
			}
		}
	}
}

// expandCron fills in the frequency, interval, time zone and schedule that
// the recurrence's cron spec stands for, so that the canonical form holds
// both the spec and the recurrence it compiles to. A spec that does not
// expand is left for validation to report.
func expandCron(j *Job) {
	if r := j.Recurrence; r != nil && r.Cron != "" {
		if x, err := r.ExpandCron(); err == nil {
			j.Recurrence = x
		}
	}
}

func sbMessage(m *action.ServiceBusQueueMessage) *action.ServiceBusMessage {
	if m == nil {
		return nil
	}
	return &m.ServiceBusMessage
}

func sbTopicMessage(m *action.ServiceBusTopicMessage) *action.ServiceBusMessage {
	if m == nil {
		return nil
	}
	return &m.ServiceBusMessage
}

// sbAuthTypes are the Service Bus authentication types.
var sbAuthTypes = []string{"SharedAccessKey", "NotSpecified"}

func isMethod(m string) bool {
	for _, k := range HTTPMethods {
		if m == k {
			return true
		}
	}
	return false
}

// customType returns the registered spelling of host type t: as
// ActionTypes spells it, or else as the executors' types do.
func customType(t action.Type, opts *ParseOptions) (action.Type, bool) {
	if k, ok := findType(t, opts.ActionTypes); ok || opts.Executors == nil || t.Builtin() {
		return k, ok
	}
	if _, ok := opts.Executors.Lookup(t); ok {
		return t, true
	}
	return findType(t, opts.Executors.Types())
}

// findType returns the spelling of t in types, matched without regard to
// case.
func findType(t action.Type, types []action.Type) (action.Type, bool) {
	for _, k := range types {
		if strings.EqualFold(string(t), string(k)) {
			return k, true
		}
	}
	return t, false
}

// checker collects rule violations. It holds a copy of the options, so
// that they stay off the heap for its callers.
type checker struct {
	opts ParseOptions
	errs []*ValidationError
}

func (c *checker) add(path, value, reason string) {
	c.errs = append(c.errs, &ValidationError{Path: path, Value: value, Reason: reason})
}

func validateJob(j *Job, opts *ParseOptions) []*ValidationError {
	c := &checker{opts: *opts}
	if !opts.Now.IsZero() && j.StartTime != nil && j.StartTime.Sub(opts.Now) > MaxStartAhead {
		c.add("startTime", quoteTime(*j.StartTime), "is more than 18 months (548 days) from now")
	}
	if isZeroAction(&j.Action) {
		c.add("action", "", "is required")
	} else {
		c.action("action", &j.Action, false)
	}
	switch j.State {
	case "", JobEnabled, JobDisabled:
	case JobCompleted, JobFaulted:
		c.add("state", strconv.Quote(string(j.State)), "cannot be set; a job becomes Completed or Faulted when its last occurrence has run (use Enabled or Disabled)")
	default:
		c.add("state", valueText(string(j.State)), "is not a job state (Enabled or Disabled)")
	}
	c.pause(j)
	c.runPolicy("runPolicy", j.RunPolicy)
	if j.Recurrence != nil {
		c.recurrence(j.Recurrence, j.StartTime)
	}
	return c.errs
}

// pause adds the problems of j's stateReason and resumeTime.
func (c *checker) pause(j *Job) {
	disabled := j.State == JobDisabled
	if j.StateReason != "" {
		if !disabled {
			c.add("stateReason", valueText(j.StateReason), "is only allowed with state Disabled")
		} else if n := utf8.RuneCountInString(j.StateReason); n > MaxStateReason {
			c.add("stateReason", "", fmt.Sprintf("is %d characters long, more than %d", n, MaxStateReason))
		}
	}
	if t := j.ResumeTime; t != nil {
		switch {
		case !disabled:
			c.add("resumeTime", quoteTime(*t), "is only allowed with state Disabled")
		case c.opts.Now.IsZero():
		case !t.After(c.opts.Now):
			c.add("resumeTime", quoteTime(*t), "is not in the future")
		case t.Sub(c.opts.Now) > MaxStartAhead:
			c.add("resumeTime", quoteTime(*t), "is more than 18 months (548 days) from now")
		}
	}
}

func (c *checker) recurrence(r *recurrence.Recurrence, startTime *time.Time) {
	// Compile also rejects a schedule that never matches a date that
	// exists (day 31 of February), or whose interval never reaches a
	// listed month (every 3 months from February in December), counting
	// from startTime, or else from the creation instant, as the job's
	// Timing does.
	start, madeUp := c.opts.Created, false
	if start.IsZero() {
		start = c.opts.Now
	}
	if startTime != nil {
		start = *startTime
	}
	if start.IsZero() {
		start, madeUp = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), true
	}
	err := compileErr(r, start) // validates r first
	for _, err := range flatten(err) {
		var fe *recurrence.FieldError
		if errors.As(err, &fe) {
			reason := fe.Reason
			switch {
			case madeUp:
				// Do not mention a start made up here.
				reason = madeUpStart.ReplaceAllString(reason, "")
			case startTime == nil:
				// Where the interval's phase matters, it is the
				// creation's; a date that never exists never does.
				reason, _, _ = strings.Cut(reason, ", counting from the start")
				reason = strings.Replace(reason, "counted from the start ", "counted from the creation time ", 1)
			}
			e := &ValidationError{Path: fe.Path, Value: fe.Value, Reason: reason, Refs: fe.Refs}
			e.Under("recurrence")
			c.errs = append(c.errs, e)
		} else {
			c.add("recurrence", "", err.Error())
		}
	}
}

// compileErr returns the error of recurrence.Compile(r, start), for a
// non-nil r and a start that is not zero, without building the rule where
// only r's fields and its time zone can be wrong: a Day or Week
// recurrence without a cron spec (such rules need no search for a date
// that exists or a grid they land on). TestCompileErrIsCompile checks
// that the two agree.
func compileErr(r *recurrence.Recurrence, start time.Time) error {
	if r.Cron == "" && (r.Frequency == recurrence.Day || r.Frequency == recurrence.Week) {
		if err := r.Validate(); err != nil {
			return err
		}
		_, err := recurrence.LoadTimeZone(r.TimeZone)
		return err
	}
	_, err := recurrence.Compile(r, start)
	return err
}

// madeUpStart matches where a recurrence error names its start.
var madeUpStart = regexp.MustCompile(`,? count(ing|ed) from the start \S+`)

// flatten lists the leaves of an error joined with errors.Join.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

func isZeroAction(a *action.Action) bool {
	return a.Type == "" && a.Request == nil && a.QueueMessage == nil && a.ServiceBusQueueMessage == nil &&
		a.ServiceBusTopicMessage == nil && a.Custom == nil && a.Timeout == 0 && a.RetryPolicy == nil && a.ErrorAction == nil
}

// payloadMembers are the members of an action that hold its payload, in
// the order their problems are reported.
var payloadMembers = [...]string{"request", "queueMessage", "serviceBusQueueMessage", "serviceBusTopicMessage", "custom"}

// payloads names the payload member of each built-in type.
var payloads = map[action.Type]string{
	action.HTTP:            "request",
	action.HTTPS:           "request",
	action.StorageQueue:    "queueMessage",
	action.ServiceBusQueue: "serviceBusQueueMessage",
	action.ServiceBusTopic: "serviceBusTopicMessage",
}

// typeList lists the action types accepted: the built-in ones, then
// ActionTypes, then the executors' other types in order.
func (c *checker) typeList() string {
	var names []string
	add := func(t action.Type) {
		if !slices.Contains(names, string(t)) {
			names = append(names, string(t))
		}
	}
	for _, t := range action.BuiltinTypes {
		add(t)
	}
	for _, t := range c.opts.ActionTypes {
		add(t)
	}
	if c.opts.Executors != nil {
		types := c.opts.Executors.Types()
		slices.Sort(types)
		for _, t := range types {
			add(t)
		}
	}
	return orList(names)
}

func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func (c *checker) action(path string, a *action.Action, isErrorAction bool) {
	before := len(c.errs)
	want := ""
	known := true
	switch _, custom := customType(a.Type, &c.opts); {
	case a.Type == "":
		c.add(path+".type", "", "is required ("+c.typeList()+")")
		known = false
	case a.Type.Builtin():
		want = payloads[a.Type]
	case custom:
		want = "custom"
	default:
		c.add(path+".type", valueText(string(a.Type)), "is not an action type ("+c.typeList()+")")
		known = false
	}
	if known {
		// Whether each of payloadMembers is set, in its order.
		present := [len(payloadMembers)]bool{a.Request != nil, a.QueueMessage != nil,
			a.ServiceBusQueueMessage != nil, a.ServiceBusTopicMessage != nil, a.Custom != nil}
		for i, name := range payloadMembers {
			switch {
			case name == want && !present[i] && name != "custom":
				c.add(path+"."+name, "", "is required for type "+string(a.Type))
			case name != want && present[i]:
				c.add(path+"."+name, "", "does not apply to type "+string(a.Type))
			}
		}
	}
	// The payload of the type, or with a type that is not known, each
	// payload present as its built-in type, so that its errors are
	// reported with the type's.
	check := func(member string) bool { return member == want || !known }
	if r := a.Request; r != nil && check("request") {
		typ := a.Type
		if !known {
			typ = action.HTTP
		}
		c.request(path+".request", r, typ)
	}
	if q := a.QueueMessage; q != nil && check("queueMessage") {
		p := path + ".queueMessage"
		c.required(p+".storageAccount", q.StorageAccount)
		c.required(p+".queueName", q.QueueName)
		c.required(p+".sasToken", q.SASToken)
		if !isErrorAction { // an errorAction without one carries the failure document
			c.required(p+".message", q.Message)
		}
	}
	if m := a.ServiceBusQueueMessage; m != nil && check("serviceBusQueueMessage") {
		p := path + ".serviceBusQueueMessage"
		c.required(p+".queueName", m.QueueName)
		c.serviceBus(p, &m.ServiceBusMessage, isErrorAction)
	}
	if m := a.ServiceBusTopicMessage; m != nil && check("serviceBusTopicMessage") {
		p := path + ".serviceBusTopicMessage"
		c.required(p+".topicPath", m.TopicPath)
		c.serviceBus(p, &m.ServiceBusMessage, isErrorAction)
	}
	if known && len(c.errs) == before && c.opts.Executors != nil {
		c.executor(path, a)
	}
	if d := time.Duration(a.Timeout); d != 0 && (d < action.MinTimeout || d > action.MaxTimeout) {
		c.add(path+".timeout", strconv.Quote(a.Timeout.String()),
			fmt.Sprintf("is out of range (%s to %s)", retry.Duration(action.MinTimeout), retry.Duration(action.MaxTimeout)))
	}
	if p := a.RetryPolicy; p != nil && len(p.PermanentStatusCodes) > 0 && known && a.Type != action.HTTP && a.Type != action.HTTPS {
		c.add(path+".retryPolicy.permanentStatusCodes", "", "applies to Http and Https actions only")
	}
	if a.RetryPolicy != nil {
		for _, err := range flatten(a.RetryPolicy.Validate(&retry.ValidateOptions{MinInterval: c.opts.MinRetryInterval})) {
			var fe *retry.FieldError
			if errors.As(err, &fe) {
				c.add(jsonpath.Join(path+".retryPolicy", fe.Path), fe.Value, fe.Reason)
			} else {
				c.add(path+".retryPolicy", "", err.Error())
			}
		}
	}
	if a.ErrorAction != nil {
		if isErrorAction {
			c.add(path+".errorAction", "", "is not allowed: an errorAction cannot have an errorAction of its own")
		} else if isZeroAction(a.ErrorAction) {
			c.add(path+".errorAction.type", "", "is required ("+c.typeList()+")")
		} else {
			c.action(path+".errorAction", a.ErrorAction, true)
		}
	}
}

// executor reports an action whose type has no executor, and the
// problems that the executor, when it is an [action.Validator], finds with
// the action.
func (c *checker) executor(path string, a *action.Action) {
	t := a.Type
	if k, ok := customType(t, &c.opts); ok {
		t = k
	}
	exec, ok := c.opts.Executors.Lookup(t)
	if !ok {
		c.add(path+".type", strconv.Quote(string(a.Type)), action.NoExecutor(t))
		return
	}
	v, ok := exec.(action.Validator)
	if !ok {
		return
	}
	for _, err := range flatten(v.ValidateAction(a)) {
		var fe *action.FieldError
		if errors.As(err, &fe) {
			c.add(jsonpath.Join(path, fe.Path), fe.Value, fe.Reason)
		} else {
			c.add(path, "", err.Error())
		}
	}
}

func (c *checker) required(path, v string) {
	if v == "" {
		c.add(path, "", "is required")
	}
}

func (c *checker) request(path string, r *action.HTTPRequest, typ action.Type) {
	secure := false
	switch n := utf8.RuneCountInString(r.URI); {
	case r.URI == "":
		c.add(path+".uri", "", "is required")
	case n > MaxURILength:
		c.add(path+".uri", valueText(r.URI), fmt.Sprintf("is %s characters long, more than the limit of %s", thousands(n), thousands(MaxURILength)))
	default:
		if scheme := plainURLScheme(r.URI); scheme != "" {
			// A shape url.Parse accepts as it is: only the scheme matters.
			if typ == action.HTTPS && scheme != "https" {
				c.add(path+".uri", valueText(r.URI), "is not an https URL, as an Https action requires")
			}
			secure = scheme == "https"
			break
		}
		u, err := url.Parse(r.URI)
		switch {
		case err != nil:
			c.add(path+".uri", valueText(r.URI), "is not a URL")
		case u.Scheme != "http" && u.Scheme != "https":
			c.add(path+".uri", valueText(r.URI), "is not an absolute http or https URL")
		case u.Host == "" || u.Hostname() == "":
			c.add(path+".uri", valueText(r.URI), "has no host")
		case u.User != nil:
			// No value: it would show the password.
			auth := path + ".authentication"
			c.errs = append(c.errs, &ValidationError{Path: path + ".uri",
				Reason: "must not hold a user name or password; put them in " + auth + " (type Basic)", Refs: []string{auth}})
		case !validPort(u.Port()):
			c.add(path+".uri", valueText(r.URI), "has port "+u.Port()+", more than 65535")
		case typ == action.HTTPS && u.Scheme != "https":
			c.add(path+".uri", valueText(r.URI), "is not an https URL, as an Https action requires")
		default:
			secure = u.Scheme == "https"
		}
	}
	switch m := r.Method; {
	case m == "":
		c.add(path+".method", "", "is required ("+orList(HTTPMethods)+")")
	case !isMethod(strings.ToUpper(m)):
		c.add(path+".method", valueText(m), "is not an HTTP method ("+orList(HTTPMethods)+")")
	}
	if len(r.Headers) > MaxHeaders {
		c.add(path+".headers", "", fmt.Sprintf("has %d headers, more than the limit of %d", len(r.Headers), MaxHeaders))
	}
	names := make([]string, 0, len(r.Headers))
	for k := range r.Headers {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		switch {
		case !validHeaderName(k):
			c.add(pathKey(path+".headers", k), "", "is not a valid header name")
		case strings.ContainsAny(r.Headers[k], "\r\n\x00"):
			c.add(pathKey(path+".headers", k), "", "contains a line break or NUL, which a header value may not")
		}
	}
	if n := utf8.RuneCountInString(r.Body); n > MaxBodyLength {
		c.add(path+".body", "", fmt.Sprintf("is %s characters long, more than the limit of %s", thousands(n), thousands(MaxBodyLength)))
	}
	if r.Authentication != nil {
		c.auth(path+".authentication", r.Authentication)
		if !secure && r.URI != "" && !c.opts.AllowInsecureAuthentication && strings.HasPrefix(strings.ToLower(r.URI), "http:") {
			c.add(path+".authentication", "", "requires an https uri, so that credentials are not sent in clear text")
		}
	}
}

// plainURLScheme returns "http" or "https" when uri is an absolute URL of
// the plain shape most jobs use, and "" otherwise: a lower-case http or
// https scheme, a host of ASCII letters, digits, dots and hyphens, an
// optional numeric port, and a path and query of unreserved characters,
// slashes, '?', '=' and '&'; no user info, and a port of at most 65535.
// url.Parse accepts every such URL with that
// scheme and a non-empty host name, so request validation needs no more;
// anything else goes through url.Parse.
func plainURLScheme(uri string) string {
	var scheme, rest string
	switch {
	case strings.HasPrefix(uri, "https://"):
		scheme, rest = "https", uri[len("https://"):]
	case strings.HasPrefix(uri, "http://"):
		scheme, rest = "http", uri[len("http://"):]
	default:
		return ""
	}
	i := 0
	for i < len(rest) && (isAlnumASCII(rest[i]) || rest[i] == '.' || rest[i] == '-') {
		i++
	}
	if i == 0 {
		return ""
	}
	if i < len(rest) && rest[i] == ':' {
		i++
		d := i
		for i < len(rest) && '0' <= rest[i] && rest[i] <= '9' {
			i++
		}
		if i == d || !validPort(rest[d:i]) {
			return ""
		}
	}
	if i < len(rest) && rest[i] != '/' && rest[i] != '?' {
		return ""
	}
	for ; i < len(rest); i++ {
		switch c := rest[i]; {
		case isAlnumASCII(c):
		case c == '-', c == '.', c == '_', c == '~', c == '/', c == '?', c == '=', c == '&':
		default:
			return ""
		}
	}
	return scheme
}

// validPort reports whether port, the digits after a URL's host, is empty
// or a port number (0 to 65535).
func validPort(port string) bool {
	if port == "" {
		return true
	}
	n, err := strconv.ParseUint(port, 10, 16)
	return err == nil && n <= 65535
}

func isAlnumASCII(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// validHeaderName reports whether k is an RFC 9110 token.
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		b := k[i]
		if b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0 {
			continue
		}
		return false
	}
	return true
}

func (c *checker) auth(path string, a *action.Authentication) {
	// Secret values are never echoed in errors.
	set := map[string]bool{
		"username": a.Username != "", "password": a.Password != "", "pfx": a.Pfx != "",
		"tenant": a.Tenant != "", "audience": a.Audience != "", "clientId": a.ClientID != "",
		"secret": a.Secret != "", "authority": a.Authority != "",
	}
	var need, allowed []string
	switch a.Type {
	case "":
		c.add(path+".type", "", "is required (Basic, ClientCertificate or ActiveDirectoryOAuth)")
		return
	case action.AuthBasic:
		need = []string{"username", "password"}
	case action.AuthClientCertificate:
		need = []string{"pfx", "password"}
	case action.AuthActiveDirectoryOAuth:
		need = []string{"tenant", "audience", "clientId", "secret"}
		allowed = []string{"authority"}
	default:
		c.add(path+".type", valueText(string(a.Type)), "is not an authentication type (Basic, ClientCertificate or ActiveDirectoryOAuth)")
		return
	}
	for _, f := range need {
		if !set[f] {
			c.add(path+"."+f, "", fmt.Sprintf("is required for %s authentication", a.Type))
		}
	}
	for _, f := range []string{"username", "password", "pfx", "tenant", "audience", "clientId", "secret", "authority"} {
		if set[f] && !contains(need, f) && !contains(allowed, f) {
			c.add(path+"."+f, "", fmt.Sprintf("does not apply to %s authentication", a.Type))
		}
	}
	if a.Type == action.AuthClientCertificate && a.Pfx != "" && !secrets.IsSealed(a.Pfx) {
		// A sealed pfx is checked by the scheduler once it has opened it.
		if _, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(a.Pfx), "")); err != nil {
			c.add(path+".pfx", "", "is not valid base64")
		} else if err := httpaction.CheckPfxWork(a.Pfx); err != nil {
			var fe *httpaction.FieldError
			if errors.As(err, &fe) {
				c.add(path+".pfx", "", fe.Reason)
			}
		}
	}
	if a.Authority != "" {
		if u, err := url.Parse(a.Authority); err != nil || u.Scheme != "https" || u.Host == "" {
			c.add(path+".authority", valueText(a.Authority), "is not an absolute https URL")
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (c *checker) serviceBus(path string, m *action.ServiceBusMessage, isErrorAction bool) {
	c.required(path+".namespace", m.Namespace)
	if !isErrorAction { // an errorAction without one carries the failure document
		c.required(path+".message", m.Message)
	}
	if m.TransportType != "" && !m.TransportType.Valid() {
		c.add(path+".transportType", valueText(string(m.TransportType)), "is not a transport type (NotSpecified, NetMessaging or AMQP)")
	}
	if a := m.Authentication; a != nil {
		switch a.Type {
		case "", "NotSpecified":
		case "SharedAccessKey":
			c.required(path+".authentication.sasKeyName", a.SASKeyName)
			c.required(path+".authentication.sasKey", a.SASKey)
		default:
			c.add(path+".authentication.type", valueText(a.Type), "is not a Service Bus authentication type (SharedAccessKey or NotSpecified)")
		}
	}
}

func quoteTime(t time.Time) string { return strconv.Quote(t.Format(time.RFC3339Nano)) }
