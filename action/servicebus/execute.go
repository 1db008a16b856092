package servicebus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/Azure/go-amqp"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/tracectx"
)

// The application properties that carry the scheduler's execution metadata;
// the same names as the HTTP action's headers.
const (
	PropertyJobID                 = "x-ms-scheduler-jobid"
	PropertyJobCollectionID       = "x-ms-scheduler-jobcollectionid"
	PropertyExpectedExecutionTime = "x-ms-scheduler-expected-execution-time"
	PropertyExecutionTag          = "x-ms-scheduler-execution-tag"
	PropertyClientRequestID       = "x-ms-client-request-id"
)

// FieldError is a problem with one field of a Service Bus action, found
// before anything was sent, such as "action.serviceBusQueueMessage.queueName":
// the action package's [action.FieldError] (Value is empty for secrets).
type FieldError = action.FieldError

// target is what a send is about, whichever the action type.
type target struct {
	kind   string // "queue" or "topic"
	label  string // "ServiceBusQueue" or "ServiceBusTopic" for messages
	path   string // JSON path of the payload object
	entity string
	field  string // "queueName" or "topicPath"
	msg    *action.ServiceBusMessage
}

// resolve returns the target of a, whose payload's JSON path is under
// base ("action", "action.errorAction", or "" for paths relative to the action).
func resolve(a *action.Action, base string) (*target, error) {
	if base != "" {
		base += "."
	}
	q, t := a.ServiceBusQueueMessage, a.ServiceBusTopicMessage
	useQueue := a.Type == action.ServiceBusQueue || a.Type != action.ServiceBusTopic && q != nil
	if useQueue {
		p := base + "serviceBusQueueMessage"
		if q == nil {
			return nil, &FieldError{Path: p, Reason: "is required for a ServiceBusQueue action"}
		}
		return &target{kind: "queue", label: "ServiceBusQueue", path: p, entity: q.QueueName, field: "queueName", msg: &q.ServiceBusMessage}, nil
	}
	p := base + "serviceBusTopicMessage"
	if t == nil {
		return nil, &FieldError{Path: p, Reason: "is required for a ServiceBusTopic action"}
	}
	return &target{kind: "topic", label: "ServiceBusTopic", path: p, entity: t.TopicPath, field: "topicPath", msg: &t.ServiceBusMessage}, nil
}

// Execute sends the message of req.Action (ServiceBusQueueMessage or
// ServiceBusTopicMessage, chosen by the action type) to its queue or topic.
// It returns a Result naming the entity and the message id, or a failed
// attempt (a non-nil error, and a Result saying the same for the history).
func (e *Executor) Execute(ctx context.Context, req *action.Request) (*action.Result, error) {
	if req == nil || req.Action == nil {
		return nil, errors.New("servicebus: request without an action")
	}
	base := "action"
	if req.ErrorAction {
		base = "action.errorAction"
	}
	t, err := resolve(req.Action, base)
	if err != nil {
		return &action.Result{Message: "ServiceBus Action - " + err.Error()}, action.Permanent(err)
	}
	res, err := e.send(ctx, req, t)
	if err != nil {
		return &action.Result{Message: t.label + " Action - " + err.Error()}, err
	}
	return res, nil
}

func (e *Executor) send(ctx context.Context, req *action.Request, t *target) (res *action.Result, err error) {
	msg, err := e.validate(req, t)
	if err != nil {
		// The definition's own problems: no retry mends them.
		return nil, action.Permanent(err)
	}
	m := t.msg
	host := e.host(m.Namespace)
	// Without a trace in ctx there is no span: skip describing one.
	if tracectx.From(ctx) != nil {
		var span tracectx.Span
		ctx, span = tracectx.Start(ctx, scope, "send "+t.entity, tracectx.Producer, spanAttributes(host, t.entity, msg)...)
		defer func() { tracectx.End(span, err, sendErrorType(err)) }()
		setTraceProperties(ctx, msg)
	}
	ce, release, err := e.acquire(host, m.Authentication.SASKeyName, m.Authentication.SASKey)
	if err != nil {
		return nil, err
	}
	defer release()
	s, err := ce.sender(t.entity)
	if err != nil {
		return nil, fmt.Errorf("service bus %s %q: %w", t.kind, t.entity, err)
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	start := time.Now()
	if err := s.SendMessage(ctx, msg, nil); err != nil {
		return nil, e.describe(err, t, host, time.Since(start))
	}
	id := ""
	if msg.MessageID != nil {
		id = *msg.MessageID
	}
	return &action.Result{Message: t.label + " Action - Message sent to " + t.kind + " '" + m.Namespace + "/" + t.entity +
		"' (message id " + id + ", " + strconv.Itoa(len(msg.Body)) + " bytes)"}, nil
}

// ValidateAction reports, when a job is put, the problems of a's Service
// Bus message that Execute would find before sending it, at their paths
// relative to the action ("serviceBusQueueMessage.namespace"), so that a
// definition Service Bus refuses is refused then rather than failing
// every attempt: the namespace, queue and topic names, the transport and
// authentication fields, and the brokered message properties.
func (e *Executor) ValidateAction(a *action.Action) error {
	t, err := resolve(a, "")
	if err != nil {
		return err
	}
	return errors.Join(problems(t)...)
}

// problems returns the problems of the fields of t's message, at their
// paths under t.path: the rules of both ValidateAction and Execute.
func problems(t *target) []error {
	m := t.msg
	var errs []error
	bad := func(field, value, reason string) {
		errs = append(errs, &FieldError{Path: t.path + "." + field, Value: value, Reason: reason})
	}
	if r := namespaceProblem(m.Namespace); r != "" {
		bad("namespace", quoteIf(m.Namespace), r)
	}
	if r := entityProblem(t.entity); r != "" {
		bad(t.field, quoteIf(t.entity), r)
	}
	if m.TransportType != "" && !strings.EqualFold(string(m.TransportType), string(action.TransportNotSpecified)) &&
		!strings.EqualFold(string(m.TransportType), string(action.TransportNetMessaging)) &&
		!strings.EqualFold(string(m.TransportType), string(action.TransportAMQP)) {
		bad("transportType", strconv.Quote(string(m.TransportType)), "is not a transport type (NotSpecified, NetMessaging or AMQP)")
	}
	switch a := m.Authentication; {
	case a == nil:
		bad("authentication", "", "is required (type SharedAccessKey with sasKeyName and sasKey)")
	default:
		if a.Type != "" && !strings.EqualFold(a.Type, "SharedAccessKey") && !strings.EqualFold(a.Type, "NotSpecified") {
			bad("authentication.type", strconv.Quote(a.Type), "is not an authentication type (SharedAccessKey or NotSpecified)")
		}
		switch {
		case a.SASKeyName == "":
			bad("authentication.sasKeyName", "", "is required (the name of a shared access policy, such as RootManageSharedAccessKey)")
		case len(a.SASKeyName) > 256 || strings.ContainsAny(a.SASKeyName, ";=\r\n"):
			bad("authentication.sasKeyName", quoteIf(a.SASKeyName), "is not a shared access policy name (at most 256 characters, no ';' or '=')")
		}
		switch {
		case a.SASKey == "":
			bad("authentication.sasKey", "", "is required (the policy's primary or secondary key)")
		case strings.ContainsAny(a.SASKey, ";\r\n"):
			bad("authentication.sasKey", "", "contains ';' or a line break, which a shared access key never does")
		}
	}
	if !utf8.ValidString(m.Message) {
		bad("message", "", "is not valid UTF-8")
	}
	if p := m.BrokeredMessageProperties; p != nil {
		bp := "brokeredMessageProperties."
		for _, f := range []struct{ name, v string }{{"messageId", p.MessageID}, {"sessionId", p.SessionID}, {"partitionKey", p.PartitionKey}, {"replyToSessionId", p.ReplyToSessionID}} {
			if len(f.v) > 128 {
				bad(bp+f.name, "", fmt.Sprintf("is %d characters long; Service Bus allows at most 128", len(f.v)))
			}
		}
		if p.SessionID != "" && p.PartitionKey != "" && p.SessionID != p.PartitionKey {
			bad(bp+"partitionKey", strconv.Quote(p.PartitionKey), fmt.Sprintf("differs from sessionId %q; Service Bus requires them to be equal when both are set", p.SessionID))
		}
		if p.TimeToLive != nil && *p.TimeToLive <= 0 {
			bad(bp+"timeToLive", strconv.Quote(p.TimeToLive.String()), "must be positive")
		}
	}
	return errs
}

// validate checks the action's fields and builds the message.
func (e *Executor) validate(req *action.Request, t *target) (*azservicebus.Message, error) {
	if err := errors.Join(problems(t)...); err != nil {
		return nil, err
	}
	m := t.msg
	requestID := req.ClientRequestID()
	msg := &azservicebus.Message{Body: []byte(m.Message)}
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		p := new(string)
		*p = s
		return p
	}
	if p := m.BrokeredMessageProperties; p != nil {
		msg.ContentType = str(p.ContentType)
		msg.CorrelationID = str(p.CorrelationID)
		msg.Subject = str(p.Label)
		msg.MessageID = str(p.MessageID)
		msg.PartitionKey = str(p.PartitionKey)
		msg.ReplyTo = str(p.ReplyTo)
		msg.ReplyToSessionID = str(p.ReplyToSessionID)
		msg.SessionID = str(p.SessionID)
		msg.To = str(p.To)
		if p.ScheduledEnqueueTimeUtc != nil {
			st := p.ScheduledEnqueueTimeUtc.UTC()
			msg.ScheduledEnqueueTime = &st
		}
		if p.TimeToLive != nil {
			d := time.Duration(*p.TimeToLive)
			msg.TimeToLive = &d
		}
		// ForcePersistence and ViaPartitionKey: no counterpart, see the
		// package documentation.
	}
	if msg.MessageID == nil {
		msg.MessageID = str(requestID)
	}

	props := make(map[string]any, len(m.CustomMessageProperties)+5)
	for k, v := range m.CustomMessageProperties {
		props[k] = v
	}
	// The execution metadata replaces custom properties of the same names.
	setProp := func(k, v string) {
		if v != "" {
			props[k] = v
		}
	}
	setProp(PropertyJobID, req.JobID())
	setProp(PropertyJobCollectionID, req.CollectionID)
	setProp(PropertyExecutionTag, req.ExecutionTag())
	setProp(PropertyClientRequestID, requestID)
	if !req.ExpectedTime.IsZero() {
		props[PropertyExpectedExecutionTime] = req.ExpectedTime.UTC().Format(time.RFC3339)
	}
	if len(props) > 0 {
		msg.ApplicationProperties = props
	}
	return msg, nil
}

func quoteIf(s string) string {
	if s == "" {
		return ""
	}
	return strconv.Quote(s)
}

// namespaceProblem applies Service Bus's namespace name rules: 6-50
// letters, digits and hyphens, starting with a letter and ending with a
// letter or digit.
func namespaceProblem(s string) string {
	switch {
	case s == "":
		return "is required (the namespace name, such as \"contoso\")"
	case strings.Contains(s, "."):
		return "looks like a host name; give only the namespace name (\"contoso\", not \"contoso.servicebus.windows.net\")"
	case len(s) < 6 || len(s) > 50:
		return fmt.Sprintf("is %d characters long; a namespace name has 6 to 50", len(s))
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Sprintf("contains %q; a namespace name has only letters, digits and hyphens", c)
		}
	}
	if c := s[0]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return "does not start with a letter"
	}
	if s[len(s)-1] == '-' {
		return "ends with a hyphen"
	}
	return ""
}

// entityProblem applies Service Bus's queue and topic name rules: 1-260
// letters, digits, '.', '-', '_' and '/' (path segments), not starting or
// ending with '/'.
func entityProblem(s string) string {
	switch {
	case s == "":
		return "is required"
	case len(s) > 260:
		return fmt.Sprintf("is %d characters long; Service Bus allows at most 260", len(s))
	case s[0] == '/' || s[len(s)-1] == '/':
		return "starts or ends with '/'"
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(".-_/", c)) {
			return fmt.Sprintf("contains %q; a queue or topic name has only letters, digits, '.', '-', '_' and '/'", c)
		}
	}
	return ""
}

// sendError is a failed send: a message for people and the underlying
// error, reachable with errors.As (*azservicebus.Error, *amqp.Error).
type sendError struct {
	msg string
	err error
}

func (e *sendError) Error() string { return e.msg }
func (e *sendError) Unwrap() error { return e.err }

// describe turns a send error into a message a person can act on.
func (e *Executor) describe(err error, t *target, host string, elapsed time.Duration) error {
	m := t.msg
	where := fmt.Sprintf("%s '%s' in namespace '%s'", t.kind, t.entity, m.Namespace)
	wrap := func(format string, args ...any) error { return &sendError{msg: fmt.Sprintf(format, args...), err: err} }

	var sbErr *azservicebus.Error
	var amqpErr *amqp.Error
	var opErr *net.OpError
	switch {
	case errors.Is(err, azservicebus.ErrMessageTooLarge) ||
		errors.As(err, &amqpErr) && amqpErr.Condition == amqp.ErrCondMessageSizeExceeded:
		// The same message is as large at every retry.
		return action.Permanent(wrap("message of %d bytes is too large for %s (Service Bus takes 256 KiB per message on the Standard tier, 100 MB on Premium)", len(m.Message), where))
	case errors.As(err, &sbErr) && sbErr.Code == azservicebus.CodeUnauthorizedAccess ||
		errors.As(err, &amqpErr) && amqpErr.Condition == amqp.ErrCondUnauthorizedAccess:
		return wrap("key '%s' refused (401 unauthorized) by namespace '%s' for %s %q: check authentication.sasKeyName and sasKey, and that the policy grants Send",
			m.Authentication.SASKeyName, m.Namespace, t.kind, t.entity)
	case errors.As(err, &sbErr) && sbErr.Code == azservicebus.CodeNotFound ||
		errors.As(err, &amqpErr) && amqpErr.Condition == amqp.ErrCondNotFound:
		return wrap("%s does not exist (amqp:not-found); create it or correct %s", where, t.field)
	case errors.As(err, &amqpErr) && amqpErr.Condition == amqp.ErrCondNotAllowed:
		return wrap("%s refused the message (amqp:not-allowed): %s", where, amqpErr.Description)
	case errors.As(err, &amqpErr) && amqpErr.Condition == "com.microsoft:entity-disabled":
		return wrap("%s is disabled", where)
	case errors.Is(err, context.DeadlineExceeded):
		return wrap("no answer from namespace '%s' (%s) within %s while sending to %s %q", m.Namespace, host, elapsed.Round(time.Millisecond), t.kind, t.entity)
	case errors.Is(err, context.Canceled):
		return wrap("send to %s canceled", where)
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return wrap("namespace '%s' unreachable at %s: %v", m.Namespace, host, opErr.Err)
	case errors.As(err, &sbErr) && sbErr.Code == azservicebus.CodeConnectionLost && strings.Contains(err.Error(), "dial "):
		// azservicebus.Error does not unwrap: the dial error is only in its text.
		_, dial, _ := strings.Cut(err.Error(), "dial ")
		return wrap("namespace '%s' unreachable at %s: dial %s", m.Namespace, host, dial)
	case errors.As(err, &sbErr) && sbErr.Code == azservicebus.CodeConnectionLost:
		return wrap("connection to namespace '%s' (%s) lost while sending to %s %q: %v", m.Namespace, host, t.kind, t.entity, err)
	}
	return wrap("send to %s failed: %v", where, err)
}
