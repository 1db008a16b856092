package storagequeue

import (
	"context"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/jobclock/scheduler/action"
)

// FieldError is a problem with one field of a StorageQueue action, found
// before anything was sent, such as "action.queueMessage.queueName": the
// action package's [action.FieldError] (Value is empty for secrets).
type FieldError = action.FieldError

// ValidateAction reports, when a job is put, the problems of the storage
// account and queue names of a's queueMessage, at their paths relative to
// the action ("queueMessage.storageAccount"), so that a name Azure
// refuses is refused then rather than failing every attempt. The SAS
// token is checked when the message is sent (its expiry is a matter of
// the time of the attempt).
func (e *Executor) ValidateAction(a *action.Action) error {
	if a.QueueMessage == nil {
		return nil // the general rules require it
	}
	return errors.Join(nameProblems("queueMessage", a.QueueMessage)...)
}

// validate checks the action's fields and returns the SAS token as a query
// string without the leading "?".
func validate(path string, m *action.StorageQueueMessage, now time.Time) (string, error) {
	errs := nameProblems(path, m)
	sas, err := parseSAS(path+".sasToken", m.SASToken, now)
	if err != nil {
		errs = append(errs, err)
	}
	return sas, errors.Join(errs...)
}

// nameProblems returns the problems of m's storage account and queue
// names, at their paths under path.
func nameProblems(path string, m *action.StorageQueueMessage) []error {
	var errs []error
	if r := accountNameProblem(m.StorageAccount); r != "" {
		errs = append(errs, &FieldError{Path: path + ".storageAccount", Value: quoteIf(m.StorageAccount), Reason: r})
	}
	if r := queueNameProblem(m.QueueName); r != "" {
		errs = append(errs, &FieldError{Path: path + ".queueName", Value: quoteIf(m.QueueName), Reason: r})
	}
	return errs
}

func quoteIf(s string) string {
	if s == "" {
		return ""
	}
	return strconv.Quote(s)
}

// accountNameProblem applies Azure's storage account name rules: 3-24
// lowercase letters and digits.
func accountNameProblem(s string) string {
	if s == "" {
		return "is required"
	}
	if len(s) < 3 || len(s) > 24 {
		return fmt.Sprintf("is %d characters long; a storage account name has 3 to 24", len(s))
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return fmt.Sprintf("contains %q; a storage account name has only lowercase letters and digits", c)
		}
	}
	return ""
}

// queueNameProblem applies Azure's queue name rules: 3-63 characters,
// lowercase letters, digits and single hyphens, starting and ending with a
// letter or digit.
func queueNameProblem(s string) string {
	if s == "" {
		return "is required"
	}
	if len(s) < 3 || len(s) > 63 {
		return fmt.Sprintf("is %d characters long; a queue name has 3 to 63", len(s))
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			if c >= 'A' && c <= 'Z' {
				return "has uppercase letters; a queue name is all lowercase"
			}
			return fmt.Sprintf("contains %q; a queue name has only lowercase letters, digits and hyphens", c)
		}
	}
	if s[0] == '-' || s[len(s)-1] == '-' {
		return "starts or ends with a hyphen; a queue name starts and ends with a letter or digit"
	}
	if strings.Contains(s, "--") {
		return "has consecutive hyphens; a queue name allows only single hyphens"
	}
	return ""
}

// sasTimeLayouts are the forms Azure accepts for a SAS token's st and se.
var sasTimeLayouts = []string{time.RFC3339, "2006-01-02T15:04Z07:00", "2006-01-02"}

// parseSAS checks the shape of a SAS token and returns it without the
// leading "?". The token's value is never put in an error: it is a secret.
func parseSAS(path, tok string, now time.Time) (string, error) {
	tok = strings.TrimPrefix(strings.TrimSpace(tok), "?")
	bad := func(reason string) (string, error) { return "", &FieldError{Path: path, Reason: reason} }
	if tok == "" {
		return bad("is required (a SAS token such as ?sv=...&se=...&sp=a&sig=...)")
	}
	if strings.Contains(tok, "://") {
		return bad("looks like a URL; give only the SAS token, the query string after '?'")
	}
	q, err := url.ParseQuery(tok)
	if err != nil {
		return bad(fmt.Sprintf("is not a URL query string (%v)", err))
	}
	if q.Get("sig") == "" {
		return bad("has no sig parameter; a SAS token looks like ?sv=...&se=...&sp=a&sig=...")
	}
	if se := q.Get("se"); se != "" {
		t, ok := parseSASTime(se)
		switch {
		case !ok:
			return bad(fmt.Sprintf("has an expiry se=%q that is not a date and time", se))
		case !now.Before(t):
			return bad(fmt.Sprintf("expired at %s (se); create a new SAS token", t.UTC().Format(time.RFC3339)))
		}
	}
	if sp, ok := q["sp"]; ok && !strings.Contains(strings.Join(sp, ""), "a") {
		return bad(fmt.Sprintf("does not grant the add permission (sp=%s); adding messages needs 'a'", strings.Join(sp, "")))
	}
	return tok, nil
}

func parseSASTime(s string) (time.Time, bool) {
	for _, l := range sasTimeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// envelopeElements are the child elements of the XML StorageQueueMessage
// document Azure Scheduler posted, in their order on the wire, followed by
// the W3C trace context elements jobclock adds when the attempt is traced.
var envelopeElements = [...]string{"ExecutionTag", "ClientRequestId", "ExpectedExecutionTime",
	"SchedulerJobId", "SchedulerJobCollectionId", "Region", "Message", "TraceParent", "TraceState"}

// optionalElements is the number of trailing envelopeElements that are
// left out when empty.
const optionalElements = 2

// buildEnvelope writes the envelope document. Text is escaped the way .NET's
// XmlSerializer does (&, < and >; quotes stay as they are), plus carriage
// returns, which XML parsers would otherwise turn into line feeds.
func buildEnvelope(values [len(envelopeElements)]string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="utf-8"?>`)
	b.WriteString(`<StorageQueueMessage xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">`)
	for i, name := range envelopeElements {
		if i >= len(envelopeElements)-optionalElements && values[i] == "" {
			continue
		}
		b.WriteString("<" + name + ">")
		envelopeEscaper.WriteString(&b, values[i])
		b.WriteString("</" + name + ">")
	}
	b.WriteString("</StorageQueueMessage>")
	return b.String()
}

var envelopeEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\r", "&#xD;")

// encode builds the queue message text: the message, wrapped in the
// envelope and base64-encoded as the options say, and checks it can be
// sent.
//
// traceparent and tracestate, when not empty, go into the envelope's
// TraceParent and TraceState elements.
func (e *Executor) encode(path, msg string, req *action.Request, traceparent, tracestate string) (string, error) {
	text := msg
	if !utf8.ValidString(msg) {
		return "", &FieldError{Path: path + ".message", Reason: "is not valid UTF-8"}
	}
	if e.opts.Envelope {
		expected := ""
		if !req.ExpectedTime.IsZero() {
			expected = req.ExpectedTime.UTC().Format(time.RFC3339)
		}
		text = buildEnvelope([...]string{req.ExecutionTag(), req.ClientRequestID(), expected,
			req.JobID(), req.CollectionID, e.opts.Region, msg, traceparent, tracestate})
	}
	if i, r := xmlInvalid(msg); i >= 0 && (e.opts.Envelope || !e.opts.Base64) {
		how := "a queue message cannot carry as text; enable base64 encoding to send it"
		if e.opts.Envelope {
			how = "the XML envelope cannot carry; send it without the envelope and base64-encoded"
		}
		return "", &FieldError{Path: path + ".message", Reason: fmt.Sprintf("contains %U at byte %d, which %s", r, i, how)}
	}
	if e.opts.Base64 {
		text = base64.StdEncoding.EncodeToString([]byte(text))
	}
	if len(text) > MaxMessageSize {
		how := "the message"
		switch {
		case e.opts.Envelope && e.opts.Base64:
			how = "the message in its envelope, base64-encoded,"
		case e.opts.Envelope:
			how = "the message in its envelope"
		case e.opts.Base64:
			how = "the message, base64-encoded,"
		}
		return "", &FieldError{Path: path + ".message", Reason: fmt.Sprintf(
			"is too large: %s is %d bytes; a queue message can be at most %d bytes (64 KiB)", how, len(text), MaxMessageSize)}
	}
	return text, nil
}

// xmlInvalid returns the byte offset and value of the first rune XML 1.0
// cannot carry, or -1.
func xmlInvalid(s string) (int, rune) {
	for i, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
		case r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		default:
			return i, r
		}
	}
	return -1, 0
}

// sendError is a failed enqueue: a message for people (which never contains
// the SAS token) and the underlying error.
type sendError struct {
	msg string
	err error
}

func (e *sendError) Error() string { return e.msg }
func (e *sendError) Unwrap() error { return e.err }

// describe turns an enqueue error into a message a person can act on.
func (e *Executor) describe(err error, m *action.StorageQueueMessage, elapsed time.Duration) error {
	where := fmt.Sprintf("'%s/%s'", m.StorageAccount, m.QueueName)
	host := e.opts.Endpoint(m.StorageAccount)
	if u, perr := url.Parse(host); perr == nil && u.Host != "" {
		host = u.Host
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		detail := serviceMessage(re)
		// The service's error code, or, from a service that sent none,
		// the status: "400 Bad Request".
		code := re.ErrorCode
		if code == "" {
			code = strconv.Itoa(re.StatusCode) + " " + http.StatusText(re.StatusCode)
			if re.RawResponse != nil && re.RawResponse.Status != "" {
				code = re.RawResponse.Status
			}
			code = strings.TrimSpace(code)
		}
		var msg string
		switch {
		case re.StatusCode == 403 || re.StatusCode == 401:
			msg = fmt.Sprintf("SAS token refused by %s for %s: %s", host, where, code)
			if h := sasHints[re.ErrorCode]; h != "" {
				msg += " (" + h + ")"
			}
		case re.StatusCode == 404 && re.ErrorCode == "QueueNotFound":
			msg = fmt.Sprintf("queue '%s' does not exist in account '%s'; create it first", m.QueueName, m.StorageAccount)
		case re.StatusCode == 404:
			msg = fmt.Sprintf("%s not found at %s: %s (check the account name and the endpoint)", where, host, code)
		case re.StatusCode == 413:
			msg = fmt.Sprintf("message refused by %s as too large (%s); a queue message can be at most 64 KiB after encoding", host, code)
		case re.ErrorCode == "":
			msg = fmt.Sprintf("queue service %s answered %s for %s", host, code, where)
		default:
			msg = fmt.Sprintf("queue service %s answered %d %s for %s", host, re.StatusCode, re.ErrorCode, where)
		}
		if detail != "" {
			msg += ": " + detail
		}
		if re.RawResponse != nil {
			if id := re.RawResponse.Header.Get("x-ms-request-id"); id != "" {
				msg += " [request id " + id + "]"
			}
		}
		se := &sendError{msg: msg, err: err}
		if re.StatusCode == 413 {
			// The same message is as large at every retry.
			return action.Permanent(se)
		}
		return se
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &sendError{msg: fmt.Sprintf("no answer from the queue service %s for %s within %s", host, where, elapsed.Round(time.Millisecond)), err: err}
	case errors.Is(err, context.Canceled):
		return &sendError{msg: fmt.Sprintf("enqueue to %s canceled", where), err: err}
	}
	inner := err
	var ue *url.Error
	if errors.As(err, &ue) {
		inner = ue.Err // url.Error's text holds the URL, and so the SAS signature
	}
	return &sendError{msg: fmt.Sprintf("queue service %s unreachable for %s: %v", host, where, inner), err: err}
}

// sasHints explains the storage service's authorization error codes.
var sasHints = map[string]string{
	"AuthenticationFailed":              "the signature does not match: the token was altered, signed with another key, or made for another account or queue",
	"AuthorizationFailure":              "the token is not allowed to do this: check its permissions, IP range and the account's network rules",
	"AuthorizationPermissionMismatch":   "the token lacks the add (a) permission",
	"AuthorizationProtocolMismatch":     "the token does not allow this protocol: check its spr parameter against the endpoint's http/https",
	"AuthorizationResourceTypeMismatch": "an account SAS needs resource type object (srt=o) to add messages",
	"AuthorizationServiceMismatch":      "the token is not for the queue service (ss=q)",
	"AuthorizationSourceIPMismatch":     "the request comes from an IP address the token does not allow (sip)",
}

// serviceMessage returns the first line of the <Message> in the service's
// error body, if any.
func serviceMessage(re *azcore.ResponseError) string {
	if re.RawResponse == nil || re.RawResponse.Body == nil {
		return ""
	}
	b, err := io.ReadAll(io.LimitReader(re.RawResponse.Body, 16<<10))
	if err != nil {
		return ""
	}
	var body struct {
		Message string `xml:"Message"`
	}
	if xml.Unmarshal(b, &body) != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(body.Message), "\n")
	return strings.TrimSpace(line)
}
