package http

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jobclock/scheduler/action"
)

// FieldError is a problem with one field of an HTTP action, such as
// "request.authentication.pfx": the action package's [action.FieldError]
// (Value is empty for secrets).
type FieldError = action.FieldError

// StatusError is the error of an attempt whose response status was not
// 2xx (redirects included, since they are not followed).
type StatusError struct {
	// Host is the host (and port, if the URL has one) that answered.
	Host string
	// StatusCode is the response status code, such as 404.
	StatusCode int
	// Status is the reason phrase, such as "Not Found".
	Status string
	// RetryAfter is the instant a 429 or 503 answer's Retry-After header
	// (delay-seconds or an HTTP date) asks retries to wait for; zero
	// without one, or for other statuses.
	RetryAfter time.Time
}

// retryAfter reads the Retry-After header of a 429 or 503 answer received
// at now: the instant it names, or zero.
func retryAfter(resp *http.Response, now time.Time) time.Time {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return time.Time{}
	}
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return time.Time{}
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 || n > 1<<31 {
			return time.Time{}
		}
		return now.Add(time.Duration(n) * time.Second)
	}
	if t, err := http.ParseTime(v); err == nil {
		return t
	}
	return time.Time{}
}

// Error returns "404 Not Found from host 'example.com'", the first line
// of the attempt's message after its outcome.
func (e *StatusError) Error() string { return statusSummary(e.Host, e.StatusCode, e.Status) }

// RequestError is the error of an attempt that got no response: the
// connection failed, the attempt timed out or was canceled, the action's
// authentication could not be prepared (Err is then often a *FieldError), or
// the token endpoint refused. Err never contains a secret of the action.
type RequestError struct {
	// Host is the host (and port, if the URL has one) of the request.
	Host string
	// Err is the cause. Timeouts unwrap to context.DeadlineExceeded and
	// cancellation to context.Canceled.
	Err error
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("http: request to host '%s' failed: %v", e.Host, e.Err)
}

// Unwrap returns e.Err.
func (e *RequestError) Unwrap() error { return e.Err }

func quote(s string) string { return strconv.Quote(s) }
