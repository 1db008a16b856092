package servicebus

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/lru"
)

// Defaults for Options.
const (
	// DefaultTimeout bounds one attempt when Options.Timeout is zero.
	DefaultTimeout = 60 * time.Second
	// DefaultMaxClients is the client cache size when Options.MaxClients is
	// zero.
	DefaultMaxClients = 64
)

// ErrClosed is returned by Execute after Close.
var ErrClosed = errors.New("servicebus: executor closed")

// Options configure an Executor. The zero value (or a nil *Options) reaches
// {namespace}.servicebus.windows.net over AMQPS.
type Options struct {
	// Endpoint returns the host, with an optional port, at which a
	// namespace is reached, such as "myns.servicebus.chinacloudapi.cn" or
	// "127.0.0.1:5672". An "sb://" prefix and a trailing "/" are ignored.
	// Nil means DefaultEndpoint.
	Endpoint func(namespace string) string
	// UseDevelopmentEmulator connects with plain AMQP (amqp://, no TLS; port
	// 5672 unless Endpoint gives one), as the Service Bus emulator and
	// local test peers need. Defaults to false: AMQPS.
	UseDevelopmentEmulator bool
	// MaxClients bounds the number of open clients (connections), one per
	// namespace, key name and key. Zero means DefaultMaxClients.
	MaxClients int
	// Timeout bounds one attempt, connecting and the SDK's retries
	// included. Zero means DefaultTimeout; the caller's context may end it
	// earlier.
	Timeout time.Duration
	// Retry are the SDK's retries within one attempt. Nil means at most 2
	// retries, 200 ms apart at first, never more than 2 s apart; the job's
	// retry policy handles anything longer.
	Retry *azservicebus.RetryOptions
	// TLSConfig configures TLS for AMQPS connections. Nil means the
	// system's defaults.
	TLSConfig *tls.Config
}

// DefaultEndpoint returns the public-cloud host of a namespace:
// {namespace}.servicebus.windows.net.
func DefaultEndpoint(namespace string) string {
	return namespace + ".servicebus.windows.net"
}

// Executor executes ServiceBusQueue and ServiceBusTopic actions. It is safe
// for concurrent use. Create it with New or Register.
type Executor struct {
	opts Options

	inflight sync.WaitGroup // Execute calls holding a client
	closing  sync.WaitGroup // evicted clients being closed

	// clients are held by the sends using them: one evicted meanwhile is
	// closed when its last send ends.
	clients *lru.Cache[clientKey, *clientEntry]

	mu       sync.Mutex
	closed   bool
	closeErr error // the first error closing a client after Close began
}

type clientKey struct {
	host, keyName string
	keyHash       [sha256.Size]byte
}

type clientEntry struct {
	client *azservicebus.Client

	mu      sync.Mutex
	senders map[string]*azservicebus.Sender // by entity
}

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
	if e.opts.MaxClients <= 0 {
		e.opts.MaxClients = DefaultMaxClients
	}
	if e.opts.Timeout <= 0 {
		e.opts.Timeout = DefaultTimeout
	}
	if e.opts.Retry == nil {
		e.opts.Retry = &azservicebus.RetryOptions{MaxRetries: 2, RetryDelay: 200 * time.Millisecond, MaxRetryDelay: 2 * time.Second}
	}
	e.clients = lru.New(e.opts.MaxClients, func(_ clientKey, ce *clientEntry) { e.closeEvicted(ce) })
	return e
}

// Register creates an Executor with New(opts) and registers it for
// action.ServiceBusQueue and action.ServiceBusTopic in reg.
func Register(reg *action.Registry, opts *Options) *Executor {
	e := New(opts)
	reg.Register(action.ServiceBusQueue, e)
	reg.Register(action.ServiceBusTopic, e)
	return e
}

// Close waits for running sends to finish (or ctx to end), then closes
// every client and its senders. Execute returns ErrClosed afterwards. It
// returns the first error from closing, or ctx.Err() when ctx ended first;
// clients still sending then close as their sends end.
func (e *Executor) Close(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()

	if err := wait(ctx, &e.inflight); err != nil {
		e.clients.Clear()
		return err
	}
	// No send holds a client now, and none can start: every client is
	// closed by Clear, and no more are added to e.closing.
	e.clients.Clear()
	if err := wait(ctx, &e.closing); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closeErr != nil {
		return fmt.Errorf("servicebus: close: %w", e.closeErr)
	}
	return nil
}

// wait waits for wg, or for ctx to end.
func wait(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// acquire returns the client for host and key, creating it when needed, and
// holds it until release is called.
func (e *Executor) acquire(host, keyName, key string) (ce *clientEntry, release func(), err error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, nil, ErrClosed
	}
	e.inflight.Add(1)
	e.mu.Unlock()
	k := clientKey{host: host, keyName: keyName, keyHash: sha256.Sum256([]byte(key))}
	ce, rel, err := e.clients.Acquire(k, func() (*clientEntry, error) {
		cs := "Endpoint=sb://" + host + "/;SharedAccessKeyName=" + keyName + ";SharedAccessKey=" + key
		if e.opts.UseDevelopmentEmulator {
			cs += ";UseDevelopmentEmulator=true"
		}
		c, err := azservicebus.NewClientFromConnectionString(cs, &azservicebus.ClientOptions{
			ApplicationID: "jobclock",
			RetryOptions:  *e.opts.Retry,
			TLSConfig:     e.opts.TLSConfig,
		})
		if err != nil {
			// The connection string holds the key: never show it.
			return nil, fmt.Errorf("service bus endpoint %q: cannot create a client (check Options.Endpoint)", host)
		}
		return &clientEntry{client: c, senders: make(map[string]*azservicebus.Sender)}, nil
	})
	if err != nil {
		e.inflight.Done()
		return nil, nil, err
	}
	return ce, func() { rel(); e.inflight.Done() }, nil
}

// closeEvicted closes a client that left the cache and that no send uses,
// in the background.
func (e *Executor) closeEvicted(ce *clientEntry) {
	e.closing.Add(1)
	go func() {
		defer e.closing.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ce.client.Close(ctx); err != nil {
			e.mu.Lock()
			if e.closed && e.closeErr == nil {
				e.closeErr = err
			}
			e.mu.Unlock()
		}
	}()
}

// sender returns the client's sender for entity, creating it (without I/O)
// on first use.
func (ce *clientEntry) sender(entity string) (*azservicebus.Sender, error) {
	ce.mu.Lock()
	defer ce.mu.Unlock()
	if s, ok := ce.senders[entity]; ok {
		return s, nil
	}
	s, err := ce.client.NewSender(entity, nil)
	if err != nil {
		return nil, err
	}
	ce.senders[entity] = s
	return s, nil
}

// host normalises what Options.Endpoint returns for namespace.
func (e *Executor) host(namespace string) string {
	h := e.opts.Endpoint(namespace)
	for _, p := range []string{"sb://", "amqps://", "amqp://"} {
		h = strings.TrimPrefix(h, p)
	}
	return strings.TrimSuffix(h, "/")
}
