// Package action holds the action object of a job definition (what a job
// does when it fires), the Executor interface that carries an action out,
// and a Registry that maps action types to executors.
//
// The built-in types are Http, Https, StorageQueue, ServiceBusQueue and
// ServiceBusTopic; their executors live in the sub-packages http,
// storagequeue and servicebus. A host adds its own types by registering an
// Executor under a new Type.
package action

import (
	"bytes"
	"encoding/json"
	"maps"
	"time"

	"github.com/jobclock/scheduler/internal/enum"
	"github.com/jobclock/scheduler/retry"
)

// Type names the kind of action. The built-in values are below in their
// canonical spelling; JSON input is accepted in any case.
type Type string

// The built-in action types.
const (
	HTTP            Type = "Http"
	HTTPS           Type = "Https"
	StorageQueue    Type = "StorageQueue"
	ServiceBusQueue Type = "ServiceBusQueue"
	ServiceBusTopic Type = "ServiceBusTopic"
)

// Func is the action type of the jobs that the root package's
// Scheduler.ScheduleFunc puts: an attempt calls the Go function registered
// under the job's name in the process that runs it. It has no payload, and
// is not one of BuiltinTypes (it takes no JSON payload of its own and is
// not listed among the types a definition may use); each Scheduler has its
// executor.
const Func Type = "Func"

// BuiltinTypes lists the action types that the module itself executes.
var BuiltinTypes = []Type{HTTP, HTTPS, StorageQueue, ServiceBusQueue, ServiceBusTopic}

// Builtin reports whether t is one of BuiltinTypes.
func (t Type) Builtin() bool {
	for _, k := range BuiltinTypes {
		if t == k {
			return true
		}
	}
	return false
}

// UnmarshalJSON accepts any case for the built-in types and stores their
// canonical spelling; other values are kept as given.
func (t *Type) UnmarshalJSON(b []byte) error { return enum.Unmarshal(b, t, BuiltinTypes) }

// Action is the "action" object of a job definition, and also its
// "errorAction" (which may not itself have an ErrorAction). Exactly one of
// the payload fields goes with Type: Request for Http and Https,
// QueueMessage for StorageQueue, ServiceBusQueueMessage and
// ServiceBusTopicMessage for the Service Bus types. Custom holds the
// payload of a host-registered type.
//
// Every job definition holds an Action, so its size is that of every job
// kept in memory: it has no member that a stored definition would never
// use (a Go value for Custom is encoded by [Handler.Action]).
type Action struct {
	Type                   Type                    `json:"type"`
	Request                *HTTPRequest            `json:"request,omitempty"`
	QueueMessage           *StorageQueueMessage    `json:"queueMessage,omitempty"`
	ServiceBusQueueMessage *ServiceBusQueueMessage `json:"serviceBusQueueMessage,omitempty"`
	ServiceBusTopicMessage *ServiceBusTopicMessage `json:"serviceBusTopicMessage,omitempty"`
	// Custom is the payload of a host-registered action type, kept as raw
	// JSON for its executor to decode. From Go, a [Handler]'s Action
	// method encodes a typed payload into it.
	Custom json.RawMessage `json:"custom,omitempty"`
	// Timeout, an extension, bounds each attempt of the action: its
	// context is cancelled when Timeout has passed, and the attempt
	// fails saying it timed out. From MinTimeout to MaxTimeout; zero
	// means the Scheduler's Config.ActionTimeout (60 s by default).
	Timeout retry.Duration `json:"timeout,omitempty"`
	// RetryPolicy says how failed attempts are retried. Nil means the
	// default policy (see package retry).
	RetryPolicy *retry.Policy `json:"retryPolicy,omitempty"`
	// ErrorAction runs when every attempt of an occurrence has failed.
	ErrorAction *Action `json:"errorAction,omitempty"`
}

// The bounds of Action.Timeout. MaxTimeout is a fixed maximum rather
// than the Scheduler's Config.ActionTimeout, so that a definition is
// valid or not whatever the Scheduler that reads it.
const (
	MinTimeout = time.Second
	MaxTimeout = time.Hour
)

// AttemptTimeout returns how long an attempt of a may take: a.Timeout,
// or def when a is nil or a.Timeout is zero.
func (a *Action) AttemptTimeout(def time.Duration) time.Duration {
	if a == nil || a.Timeout <= 0 {
		return def
	}
	return time.Duration(a.Timeout)
}

// Clone returns a deep copy of a; nil for a nil a.
func (a *Action) Clone() *Action {
	if a == nil {
		return nil
	}
	// Small enough to be inlined, so that a caller that copies the
	// result into a value of its own allocates nothing for it.
	c := a.clone()
	return &c
}

// clone returns a deep copy of a, which must not be nil.
func (a *Action) clone() Action {
	c := *a
	if r := a.Request; r != nil {
		cr := *r
		cr.Headers = maps.Clone(r.Headers)
		if au := r.Authentication; au != nil {
			ca := *au
			if au.CertificateExpirationDate != nil {
				ca.CertificateExpirationDate = new(*au.CertificateExpirationDate)
			}
			cr.Authentication = &ca
		}
		c.Request = &cr
	}
	if q := a.QueueMessage; q != nil {
		c.QueueMessage = new(*q)
	}
	if q := a.ServiceBusQueueMessage; q != nil {
		c.ServiceBusQueueMessage = &ServiceBusQueueMessage{ServiceBusMessage: q.ServiceBusMessage.clone(), QueueName: q.QueueName}
	}
	if t := a.ServiceBusTopicMessage; t != nil {
		c.ServiceBusTopicMessage = &ServiceBusTopicMessage{ServiceBusMessage: t.ServiceBusMessage.clone(), TopicPath: t.TopicPath}
	}
	c.Custom = bytes.Clone(a.Custom)
	c.RetryPolicy = a.RetryPolicy.Clone()
	c.ErrorAction = a.ErrorAction.Clone()
	return c
}

// HTTPRequest is the "request" object of an Http or Https action.
type HTTPRequest struct {
	URI            string            `json:"uri"`
	Method         string            `json:"method"`
	Headers        map[string]string `json:"headers,omitempty"`
	Body           string            `json:"body,omitempty"`
	Authentication *Authentication   `json:"authentication,omitempty"`
}

// AuthType is the kind of outbound HTTP authentication.
type AuthType string

// The outbound authentication types in their canonical spelling.
const (
	AuthClientCertificate    AuthType = "ClientCertificate"
	AuthActiveDirectoryOAuth AuthType = "ActiveDirectoryOAuth"
	AuthBasic                AuthType = "Basic"
)

var authTypes = []AuthType{AuthClientCertificate, AuthActiveDirectoryOAuth, AuthBasic}

// Valid reports whether t is a known type in canonical spelling.
func (t AuthType) Valid() bool {
	for _, k := range authTypes {
		if t == k {
			return true
		}
	}
	return false
}

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given.
func (t *AuthType) UnmarshalJSON(b []byte) error { return enum.Unmarshal(b, t, authTypes) }

// Authentication is the "authentication" object of an HTTP request. Which
// fields apply depends on Type:
//   - Basic: Username, Password.
//   - ClientCertificate: Pfx (base64 of a PKCS#12 file) and Password; the
//     Certificate* fields are filled in by the scheduler for display.
//   - ActiveDirectoryOAuth: Tenant, Audience, ClientID, Secret; Authority
//     overrides the token endpoint's base URL (default
//     https://login.microsoftonline.com/).
//
// Password, Pfx and Secret are secrets: accepted on input, never returned by
// the management API, and stored sealed (see "Secrets" in the scheduler
// package): the executor receives them in clear, a record read from a
// store holds them sealed.
type Authentication struct {
	Type AuthType `json:"type"`

	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`

	Pfx                       string     `json:"pfx,omitempty"`
	CertificateThumbprint     string     `json:"certificateThumbprint,omitempty"`
	CertificateSubjectName    string     `json:"certificateSubjectName,omitempty"`
	CertificateExpirationDate *time.Time `json:"certificateExpirationDate,omitempty"`

	Tenant    string `json:"tenant,omitempty"`
	Audience  string `json:"audience,omitempty"`
	ClientID  string `json:"clientId,omitempty"`
	Secret    string `json:"secret,omitempty"`
	Authority string `json:"authority,omitempty"`
}

// StorageQueueMessage is the "queueMessage" object of a StorageQueue action.
// SASToken is a secret: accepted on input, never returned, stored sealed.
type StorageQueueMessage struct {
	StorageAccount string `json:"storageAccount"`
	QueueName      string `json:"queueName"`
	SASToken       string `json:"sasToken"`
	Message        string `json:"message"`
}

// ServiceBusMessage holds the fields common to Service Bus queue and topic
// messages.
type ServiceBusMessage struct {
	Namespace                 string                     `json:"namespace"`
	TransportType             TransportType              `json:"transportType,omitempty"`
	Authentication            *ServiceBusAuthentication  `json:"authentication,omitempty"`
	Message                   string                     `json:"message"`
	BrokeredMessageProperties *BrokeredMessageProperties `json:"brokeredMessageProperties,omitempty"`
	CustomMessageProperties   map[string]string          `json:"customMessageProperties,omitempty"`
}

// clone returns a deep copy of m.
func (m ServiceBusMessage) clone() ServiceBusMessage {
	if a := m.Authentication; a != nil {
		m.Authentication = new(*a)
	}
	if p := m.BrokeredMessageProperties; p != nil {
		cp := *p
		if p.ScheduledEnqueueTimeUtc != nil {
			cp.ScheduledEnqueueTimeUtc = new(*p.ScheduledEnqueueTimeUtc)
		}
		if p.TimeToLive != nil {
			cp.TimeToLive = new(*p.TimeToLive)
		}
		if p.ForcePersistence != nil {
			cp.ForcePersistence = new(*p.ForcePersistence)
		}
		m.BrokeredMessageProperties = &cp
	}
	m.CustomMessageProperties = maps.Clone(m.CustomMessageProperties)
	return m
}

// ServiceBusQueueMessage is the "serviceBusQueueMessage" object.
type ServiceBusQueueMessage struct {
	ServiceBusMessage
	QueueName string `json:"queueName"`
}

// ServiceBusTopicMessage is the "serviceBusTopicMessage" object.
type ServiceBusTopicMessage struct {
	ServiceBusMessage
	TopicPath string `json:"topicPath"`
}

// TransportType is the Service Bus transport: NotSpecified, NetMessaging or
// AMQP. Every value is sent over AMQP.
type TransportType string

// The transport types in their canonical spelling.
const (
	TransportNotSpecified TransportType = "NotSpecified"
	TransportNetMessaging TransportType = "NetMessaging"
	TransportAMQP         TransportType = "AMQP"
)

var transportTypes = []TransportType{TransportNotSpecified, TransportNetMessaging, TransportAMQP}

// Valid reports whether t is a known type in canonical spelling.
func (t TransportType) Valid() bool {
	for _, k := range transportTypes {
		if t == k {
			return true
		}
	}
	return false
}

// UnmarshalJSON accepts any case and stores the canonical spelling of known
// values; unknown values are kept as given.
func (t *TransportType) UnmarshalJSON(b []byte) error { return enum.Unmarshal(b, t, transportTypes) }

// ServiceBusAuthentication is the "authentication" object of a Service Bus
// message. SASKey is a secret: accepted on input, never returned, stored
// sealed.
type ServiceBusAuthentication struct {
	SASKeyName string `json:"sasKeyName,omitempty"`
	SASKey     string `json:"sasKey,omitempty"`
	// Type is "SharedAccessKey" or "NotSpecified".
	Type string `json:"type,omitempty"`
}

// BrokeredMessageProperties are the system properties of a Service Bus
// message. TimeToLive is an ISO 8601 duration. ForcePersistence is nil
// when the definition leaves it out; false and true are kept as given.
type BrokeredMessageProperties struct {
	ContentType             string          `json:"contentType,omitempty"`
	CorrelationID           string          `json:"correlationId,omitempty"`
	ForcePersistence        *bool           `json:"forcePersistence,omitempty"`
	Label                   string          `json:"label,omitempty"`
	MessageID               string          `json:"messageId,omitempty"`
	PartitionKey            string          `json:"partitionKey,omitempty"`
	ReplyTo                 string          `json:"replyTo,omitempty"`
	ReplyToSessionID        string          `json:"replyToSessionId,omitempty"`
	ScheduledEnqueueTimeUtc *time.Time      `json:"scheduledEnqueueTimeUtc,omitempty"`
	SessionID               string          `json:"sessionId,omitempty"`
	TimeToLive              *retry.Duration `json:"timeToLive,omitempty"`
	To                      string          `json:"to,omitempty"`
	ViaPartitionKey         string          `json:"viaPartitionKey,omitempty"`
}
