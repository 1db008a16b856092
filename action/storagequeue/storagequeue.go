package storagequeue

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/lru"
	"github.com/jobclock/scheduler/internal/tracectx"
)

// Defaults for Options.
const (
	// DefaultTimeout bounds one attempt when Options.Timeout is zero.
	DefaultTimeout = 60 * time.Second
	// DefaultMaxClients is the client cache size when Options.MaxClients is
	// zero.
	DefaultMaxClients = 256
	// MaxMessageSize is the largest message the queue service takes: 64 KiB
	// of text, counted after the envelope and base64 encoding.
	MaxMessageSize = 64 * 1024
)

// ErrClosed is returned by Execute after Close.
var ErrClosed = errors.New("storagequeue: executor closed")

// Options configure an Executor. The zero value (or a nil *Options) sends
// the message text as given to https://{account}.queue.core.windows.net/.
type Options struct {
	// Endpoint returns the queue service URL for a storage account, such as
	// "https://myaccount.queue.core.windows.net/" or, for Azurite,
	// "http://127.0.0.1:10000/devstoreaccount1/" (see PathStyle). The queue
	// name is appended to it. Nil means DefaultEndpoint.
	Endpoint func(account string) string
	// Envelope wraps the message in the XML StorageQueueMessage document
	// that Azure Scheduler posted, carrying the execution metadata (see the
	// package documentation). Defaults to false: the text as given.
	Envelope bool
	// Base64 base64-encodes the text (after the envelope, if any). Defaults
	// to false.
	Base64 bool
	// Region is written to the envelope's Region element. Empty leaves the
	// element empty.
	Region string
	// Timeout bounds one attempt, retries within it included. Zero means
	// DefaultTimeout; the caller's context may end it earlier.
	Timeout time.Duration
	// MaxClients bounds the cache of queue clients (one per account, queue
	// and SAS token). Zero means DefaultMaxClients.
	MaxClients int
	// Retry are the storage SDK's retries within one attempt, for
	// throttling, server errors and dropped connections. Nil means at most 2
	// retries, 200 ms apart at first, never more than 2 s apart; the
	// scheduler's own retry policy handles anything longer. Note that a
	// retried enqueue may put the message on the queue twice; receivers can
	// drop duplicates by execution tag (Envelope).
	Retry *policy.RetryOptions
	// Transport sends the HTTP requests. Nil means a transport owned by the
	// Executor, whose idle connections Close closes.
	Transport policy.Transporter
}

// DefaultEndpoint returns the public-cloud queue service URL of account:
// https://{account}.queue.core.windows.net/.
func DefaultEndpoint(account string) string {
	return "https://" + account + ".queue.core.windows.net/"
}

// HostSuffix returns an Options.Endpoint function for a cloud whose queue
// services live under another DNS suffix: HostSuffix("queue.core.chinacloudapi.cn")
// maps "myaccount" to "https://myaccount.queue.core.chinacloudapi.cn/".
func HostSuffix(suffix string) func(account string) string {
	suffix = strings.Trim(suffix, "./")
	return func(account string) string { return "https://" + account + "." + suffix + "/" }
}

// PathStyle returns an Options.Endpoint function for a service that takes
// the account as the first path segment, as Azurite does:
// PathStyle("http://127.0.0.1:10001") maps "devstoreaccount1" to
// "http://127.0.0.1:10001/devstoreaccount1/".
func PathStyle(baseURL string) func(account string) string {
	base := strings.TrimSuffix(baseURL, "/") + "/"
	return func(account string) string { return base + account + "/" }
}

// Executor executes StorageQueue actions. It is safe for concurrent use.
// Create it with New or Register.
type Executor struct {
	opts       Options
	httpClient *http.Client // owned transport; nil when Options.Transport was given
	transport  policy.Transporter

	mu      sync.Mutex
	closed  bool
	clients *lru.Cache[clientKey, *azqueue.QueueClient]
}

type clientKey struct{ account, queue, sas string }

var (
	_ action.Executor  = (*Executor)(nil)
	_ action.Validator = (*Executor)(nil)
)

// New returns an Executor. opts may be nil, meaning all defaults; it is
// copied, so later changes have no effect.
func New(opts *Options) *Executor {
	e := &Executor{}
	if opts != nil {
		e.opts = *opts
	}
	if e.opts.Endpoint == nil {
		e.opts.Endpoint = DefaultEndpoint
	}
	if e.opts.Timeout <= 0 {
		e.opts.Timeout = DefaultTimeout
	}
	if e.opts.MaxClients <= 0 {
		e.opts.MaxClients = DefaultMaxClients
	}
	// The clients share the executor's transport: an evicted one needs no
	// closing.
	e.clients = lru.New[clientKey, *azqueue.QueueClient](e.opts.MaxClients, nil)
	if e.opts.Retry == nil {
		e.opts.Retry = &policy.RetryOptions{MaxRetries: 2, RetryDelay: 200 * time.Millisecond, MaxRetryDelay: 2 * time.Second}
	}
	e.transport = e.opts.Transport
	if e.transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 16
		e.httpClient = &http.Client{Transport: t}
		e.transport = e.httpClient
	}
	return e
}

// Register creates an Executor with New(opts) and registers it for
// action.StorageQueue in reg.
func Register(reg *action.Registry, opts *Options) *Executor {
	e := New(opts)
	reg.Register(action.StorageQueue, e)
	return e
}

// Close drops the cached clients and closes idle connections. Execute
// returns ErrClosed afterwards. Close is idempotent and always returns nil.
func (e *Executor) Close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.clients.Clear()
	if e.httpClient != nil {
		e.httpClient.CloseIdleConnections()
	}
	return nil
}

// Execute puts req.Action.QueueMessage's message on its queue. It returns
// a Result naming the queue and the new message's id, or a failed attempt
// (a non-nil error, and a Result saying the same for the history) when the
// action is invalid, the service refuses the message or cannot be reached.
func (e *Executor) Execute(ctx context.Context, req *action.Request) (*action.Result, error) {
	res, err := e.execute(ctx, req)
	if err != nil {
		return &action.Result{Message: "StorageQueue Action - " + err.Error()}, err
	}
	return res, nil
}

func (e *Executor) execute(ctx context.Context, req *action.Request) (res *action.Result, err error) {
	if req == nil || req.Action == nil {
		return nil, errors.New("storagequeue: request without an action")
	}
	path := "action"
	if req.ErrorAction {
		path = "action.errorAction"
	}
	path += ".queueMessage"
	m := req.Action.QueueMessage
	if m == nil {
		return nil, action.Permanent(&FieldError{Path: path, Reason: "is required for a StorageQueue action"})
	}
	// The definition's own problems (an expired SAS token too) are
	// permanent: no retry mends them.
	sasQuery, err := validate(path, m, time.Now())
	if err != nil {
		return nil, action.Permanent(err)
	}
	// Without a trace in ctx there is no span: skip describing one.
	if tracectx.From(ctx) != nil {
		var span tracectx.Span
		ctx, span = tracectx.Start(ctx, scope, "send "+m.QueueName, tracectx.Producer, spanAttributes(e.opts.Endpoint(m.StorageAccount), m)...)
		defer func() { tracectx.End(span, err, enqueueErrorType(err)) }()
	}
	traceparent, tracestate := tracectx.Parent(ctx)
	text, err := e.encode(path, m.Message, req, traceparent, tracestate)
	if err != nil {
		return nil, action.Permanent(err)
	}

	client, err := e.client(m.StorageAccount, m.QueueName, sasQuery)
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	if id := req.ClientRequestID(); id != "" {
		ctx = policy.WithHTTPHeader(ctx, http.Header{"x-ms-client-request-id": []string{id}})
	}
	start := time.Now()
	resp, err := client.EnqueueMessage(ctx, text, nil)
	if err != nil {
		return nil, e.describe(err, m, time.Since(start))
	}
	id := ""
	if len(resp.Messages) > 0 && resp.Messages[0].MessageID != nil {
		id = *resp.Messages[0].MessageID
	}
	return &action.Result{Message: fmt.Sprintf("StorageQueue Action - Message queued to '%s/%s' (id %s, %d bytes)",
		m.StorageAccount, m.QueueName, id, len(text))}, nil
}

// client returns the cached client for the account, queue and SAS token,
// creating it (and evicting the least recently used one) when needed.
func (e *Executor) client(account, queue, sasQuery string) (*azqueue.QueueClient, error) {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	return e.clients.GetOrCreate(clientKey{account, queue, sasQuery}, func() (*azqueue.QueueClient, error) {
		base := e.opts.Endpoint(account)
		if !strings.HasSuffix(base, "/") {
			base += "/"
		}
		c, err := azqueue.NewQueueClientWithNoCredential(base+queue+"?"+sasQuery, &azqueue.ClientOptions{ClientOptions: azcore.ClientOptions{
			Retry:     *e.opts.Retry,
			Transport: e.transport,
			Telemetry: policy.TelemetryOptions{ApplicationID: "jobclock"},
		}})
		if err != nil {
			return nil, fmt.Errorf("storage queue endpoint %q for account %q: %w", base, account, err)
		}
		return c, nil
	})
}

// cachedClients reports the number of cached clients (for tests).
func (e *Executor) cachedClients() int { return e.clients.Len() }
