package otlp

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// The retry schedule: the first wait, the longest, and the time after the
// first attempt past which no retry starts.
const (
	firstBackoff = time.Second
	maxBackoff   = 30 * time.Second
	maxElapsed   = time.Minute
)

// ErrShutdown is returned by an export after Shutdown.
var ErrShutdown = errors.New("otlp: exporter shut down")

// client posts export requests to one URL.
type client struct {
	cfg       Config
	http      *http.Client
	once      sync.Once
	stop      chan struct{} // closed by shutdown
	lastOnce  sync.Once
	lastCalls chan struct{} // closed by stopRetries
}

func newClient(cfg Config) *client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.TLS != nil {
		tr.TLSClientConfig = cfg.TLS
	}
	return &client{cfg: cfg, http: &http.Client{Transport: tr}, stop: make(chan struct{}), lastCalls: make(chan struct{})}
}

// stopRetries makes each export from now on one request, and ends one
// that waits to retry with the error of its last request.
func (c *client) stopRetries() {
	c.lastOnce.Do(func() { close(c.lastCalls) })
}

func (c *client) retrying() bool {
	select {
	case <-c.lastCalls:
		return false
	default:
		return true
	}
}

// shutdown makes later exports fail and stops one that waits to retry.
func (c *client) shutdown() {
	c.once.Do(func() { close(c.stop) })
	c.http.CloseIdleConnections()
}

func (c *client) closed() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

// send posts body, retrying what the specification says may be retried.
func (c *client) send(ctx context.Context, body []byte) error {
	if c.closed() {
		return ErrShutdown
	}
	if c.cfg.Gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(body)
		if err := zw.Close(); err != nil {
			return err
		}
		body = buf.Bytes()
	}
	start := time.Now()
	backoff := firstBackoff
	for attempt := 1; ; attempt++ {
		if attempt > 1 && c.closed() {
			return ErrShutdown
		}
		wait, err := c.post(ctx, body)
		if err == nil || wait < 0 {
			return err
		}
		if !c.retrying() {
			return fmt.Errorf("otlp: %s: not retried, the exporter stops: %w", c.cfg.URL, err)
		}
		if wait == 0 {
			wait = backoff/2 + rand.N(backoff) // 0.5 to 1.5 times the backoff
			backoff = min(2*backoff, maxBackoff)
		}
		if time.Since(start)+wait > maxElapsed {
			return fmt.Errorf("otlp: %s: giving up after %d attempts in %v: %w", c.cfg.URL, attempt, time.Since(start).Round(time.Millisecond), err)
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
			return fmt.Errorf("otlp: %s: no time left to retry after %d attempts: %w", c.cfg.URL, attempt, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("otlp: %s: %w (after %d attempts, the last: %v)", c.cfg.URL, ctx.Err(), attempt, err)
		case <-c.stop:
			t.Stop()
			return fmt.Errorf("%w (after %d attempts, the last: %v)", ErrShutdown, attempt, err)
		case <-c.lastCalls:
			t.Stop()
			return fmt.Errorf("otlp: %s: not retried, the exporter stops (after %d attempts): %w", c.cfg.URL, attempt, err)
		case <-t.C:
		}
	}
}

// post makes one attempt. It returns a nil error on success; otherwise
// wait is -1 when the error is final (an answer that may not be retried,
// or no answer for a reason that is not temporary), 0 for a retry after the
// backoff, and the answer's Retry-After when it gave one.
func (c *client) post(parent context.Context, body []byte) (wait time.Duration, err error) {
	ctx, cancel := context.WithTimeout(parent, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return -1, err
	}
	for k, vs := range c.cfg.Headers {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", cmp.Or(c.cfg.UserAgent, "jobclock"))
	if c.cfg.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if parent.Err() != nil || !temporary(err) {
			return -1, fmt.Errorf("otlp: %w", err)
		}
		return 0, fmt.Errorf("otlp: %w", err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		return -1, partialSuccess(answer)
	}
	err = fmt.Errorf("otlp: %s answered %s: %s", c.cfg.URL, resp.Status, bytes.TrimSpace(answer[:min(len(answer), 512)]))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return retryAfter(resp.Header.Get("Retry-After")), err
	}
	return -1, err
}

// temporary reports whether a request that got no answer may succeed if
// tried again: a timeout, a refused or reset connection, a connection
// closed before the answer, a DNS failure the resolver calls temporary.
// Anything else (a certificate the client does not trust, a malformed
// request) would fail the same way each time.
func temporary(err error) bool {
	var ne net.Error
	var dns *net.DNSError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	case errors.As(err, &dns):
		return dns.IsTemporary || dns.IsTimeout
	}
	return false
}

// retryAfter returns the wait a Retry-After header asks for (seconds or an
// HTTP date); 0, the backoff, without one or with a negative number of
// seconds. It is not cut to maxBackoff: send gives up instead when the
// wait would outlast maxElapsed or the caller's context.
func retryAfter(h string) time.Duration {
	var d time.Duration
	if s, err := strconv.Atoi(h); err == nil {
		if s < 0 {
			return 0
		}
		d = time.Duration(s) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = time.Until(t)
	} else {
		return 0
	}
	// A zero or past Retry-After retries at once; 1ns keeps it apart from "none".
	return max(d, time.Nanosecond)
}

// partialSuccess returns an error when a successful answer says that some
// of the spans or points were rejected, or carries a message; such a
// request is not retried. Both the lowerCamelCase member names of the OTLP
// JSON encoding and the snake_case ones of the protobuf JSON mapping are
// read.
func partialSuccess(answer []byte) error {
	type partial struct {
		RejectedSpans      json.Number `json:"rejectedSpans"`
		RejectedSpans_     json.Number `json:"rejected_spans"`
		RejectedDataPoints json.Number `json:"rejectedDataPoints"`
		RejectedPoints_    json.Number `json:"rejected_data_points"`
		ErrorMessage       string      `json:"errorMessage"`
		ErrorMessage_      string      `json:"error_message"`
	}
	var r struct {
		PartialSuccess  *partial `json:"partialSuccess"`
		PartialSuccess_ *partial `json:"partial_success"`
	}
	if json.Unmarshal(answer, &r) != nil {
		return nil // not JSON (a protobuf answer, or none): success
	}
	p := cmp.Or(r.PartialSuccess, r.PartialSuccess_)
	if p == nil {
		return nil
	}
	n, _ := cmp.Or(p.RejectedSpans, p.RejectedSpans_, p.RejectedDataPoints, p.RejectedPoints_).Int64()
	msg := cmp.Or(p.ErrorMessage, p.ErrorMessage_)
	switch {
	case n > 0:
		return fmt.Errorf("otlp: the endpoint rejected %d items: %s", n, msg)
	case msg != "":
		return fmt.Errorf("otlp: the endpoint took everything, with a warning: %s", msg)
	}
	return nil
}
