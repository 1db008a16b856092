package schedulertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	httpaction "github.com/jobclock/scheduler/action/http"
)

// Delivery is one HTTP request that a [Receiver] received.
type Delivery struct {
	// Metadata is read from the request's x-ms-scheduler-* and
	// x-ms-client-request-id headers.
	Metadata
	// Method and Path are the request's; Query its raw query.
	Method, Path, Query string
	// Header holds every header of the request; Body its body.
	Header http.Header
	Body   string
	// Status is the status code the receiver answered with.
	Status int
	// At is when the request arrived.
	At time.Time
}

// Receiver is an HTTP server that records every request it receives,
// reached through memory rather than the network, so that it works inside
// a testing/synctest bubble (where network I/O would stop the fake clock)
// as well as outside one. It answers a request to /status/NNN with status
// NNN, and any other request with 200 and the text "ok".
//
// Its URL has a host of its own under the reserved .test domain. The HTTP
// executor that [New] registers reaches every Receiver; with a Scheduler
// of your own, register an action/http executor whose Options.Client is
// [Receiver.Client]. Create the Receiver in the bubble that uses it (or
// outside any bubble when nothing does), and Close it when done. It is
// safe for concurrent use.
type Receiver struct {
	// URL is the receiver's base URL, "http://receiver-N.test", without
	// a trailing slash.
	URL string

	host string
	ln   *pipeListener
	srv  *http.Server

	mu         sync.Mutex
	deliveries []Delivery
	changed    signal
}

var (
	receiverSeq atomic.Int64
	receivers   sync.Map // host -> *Receiver
)

// NewReceiver starts a Receiver.
func NewReceiver() *Receiver {
	host := fmt.Sprintf("receiver-%d.test", receiverSeq.Add(1))
	r := &Receiver{URL: "http://" + host, host: host, ln: newPipeListener(host)}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: time.Minute}
	receivers.Store(host, r)
	go r.srv.Serve(r.ln)
	return r
}

// Close stops the receiver and closes its connections.
func (r *Receiver) Close() {
	receivers.Delete(r.host)
	r.srv.Close()
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	status := http.StatusOK
	if s, ok := strings.CutPrefix(req.URL.Path, "/status/"); ok {
		if n, err := strconv.Atoi(s); err == nil && n >= 200 && n <= 599 {
			status = n
		}
	}
	d := Delivery{
		Metadata: Metadata{
			JobID:           req.Header.Get(httpaction.HeaderJobID),
			CollectionID:    req.Header.Get(httpaction.HeaderJobCollectionID),
			ExecutionTag:    req.Header.Get(httpaction.HeaderExecutionTag),
			ClientRequestID: req.Header.Get(httpaction.HeaderClientRequestID),
		},
		Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery,
		Header: req.Header.Clone(), Body: string(body), Status: status, At: time.Now(),
	}
	if t, err := time.Parse(time.RFC3339Nano, req.Header.Get(httpaction.HeaderExpectedExecutionTime)); err == nil {
		d.ExpectedTime = t
	}
	r.mu.Lock()
	r.deliveries = append(r.deliveries, d)
	r.changed.fire()
	r.mu.Unlock()
	w.Header().Set("Connection", "close")
	w.WriteHeader(status)
	if status == http.StatusOK {
		io.WriteString(w, "ok")
	}
}

// Deliveries returns the requests received so far, in the order they
// arrived.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.deliveries)
}

// Wait waits until at least n requests have arrived and returns them. When
// ctx ends first, it returns those received so far and ctx's error.
func (r *Receiver) Wait(ctx context.Context, n int) ([]Delivery, error) {
	for {
		r.mu.Lock()
		if len(r.deliveries) >= n {
			defer r.mu.Unlock()
			return slices.Clone(r.deliveries), nil
		}
		ch := r.changed.wait()
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return r.Deliveries(), ctx.Err()
		}
	}
}

// Client returns a new HTTP client that reaches every open Receiver
// through memory, and other hosts over the network. It keeps no idle
// connections, so that nothing of it outlives a request.
func (r *Receiver) Client() *http.Client { return newClient() }

// newClient returns a client whose transport dials receivers in memory.
func newClient() *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			if v, ok := receivers.Load(host); ok {
				return v.(*Receiver).ln.dial(ctx)
			}
			return d.DialContext(ctx, network, addr)
		},
	}}
}

// pipeListener is a net.Listener whose connections are the server ends of
// net.Pipe pairs.
type pipeListener struct {
	addr  pipeAddr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener(host string) *pipeListener {
	return &pipeListener{addr: pipeAddr(host + ":80"), conns: make(chan net.Conn), done: make(chan struct{})}
}

var errClosed = errors.New("schedulertest: receiver closed")

func (l *pipeListener) dial(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, errClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return l.addr }

type pipeAddr string

func (a pipeAddr) Network() string { return "pipe" }
func (a pipeAddr) String() string  { return string(a) }
