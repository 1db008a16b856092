package httpapi

import (
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/jobclock/scheduler/internal/budget"
)

// Defaults of Throttle: ten times the hourly limits Azure Resource Manager
// gives each caller (12,000 reads and 1,200 writes).
const (
	DefaultReadsPerWindow  = 120_000
	DefaultWritesPerWindow = 12_000
	DefaultThrottleWindow  = time.Hour
)

// The response headers that report a caller's remaining budget, as Azure
// Resource Manager names them.
const (
	HeaderRemainingReads  = "x-ms-ratelimit-remaining-subscription-reads"
	HeaderRemainingWrites = "x-ms-ratelimit-remaining-subscription-writes"
)

// maxThrottledCallers bounds the budgets kept; the least recently seen
// caller's is dropped beyond it (it starts full again when the caller
// comes back).
const maxThrottledCallers = 10_000

// Throttle sets the request budget of each caller: reads (GET and HEAD) and
// writes (every other method) are counted apart, each in a bucket that
// holds up to its budget and refills evenly over Window. A request when
// the bucket has less than one request left is answered 429
// TooManyRequests with a Retry-After header (whole seconds until one
// request is available again). Every response carries the caller's
// remaining budget for the request's kind in HeaderRemainingReads or
// HeaderRemainingWrites, as ARM does.
//
// A caller is a principal (by [Principal.Name]) when the request is
// authenticated, otherwise the remote IP address: requests that fail
// authentication, and all requests when the handler has no Authenticator,
// are budgeted by address.
type Throttle struct {
	// ReadsPerWindow is a caller's read budget. Zero or less means
	// DefaultReadsPerWindow (120,000).
	ReadsPerWindow int
	// WritesPerWindow is a caller's write budget. Zero or less means
	// DefaultWritesPerWindow (12,000).
	WritesPerWindow int
	// Window is how long an empty budget takes to refill completely.
	// Zero or less means DefaultThrottleWindow (one hour).
	Window time.Duration
	// Disabled turns throttling off: no budget and no rate limit headers.
	Disabled bool
}

// throttle holds the callers' read and write budgets.
type throttle struct {
	reads, writes *budget.Budgets[throttleKey]
	window        time.Duration
}

type throttleKey struct {
	principal string
	addr      string
}

func newThrottle(t *Throttle) *throttle {
	var o Throttle
	if t != nil {
		o = *t
	}
	if o.Disabled {
		return nil
	}
	if o.ReadsPerWindow <= 0 {
		o.ReadsPerWindow = DefaultReadsPerWindow
	}
	if o.WritesPerWindow <= 0 {
		o.WritesPerWindow = DefaultWritesPerWindow
	}
	if o.Window <= 0 {
		o.Window = DefaultThrottleWindow
	}
	return &throttle{reads: budget.New[throttleKey](o.ReadsPerWindow, o.Window, maxThrottledCallers),
		writes: budget.New[throttleKey](o.WritesPerWindow, o.Window, maxThrottledCallers), window: o.Window}
}

// admit takes one request of r's kind from the caller's budget, sets the
// remaining budget header, and returns a 429 error when the budget is used
// up.
func (t *throttle) admit(w http.ResponseWriter, r *http.Request, p *Principal) *apiError {
	key := throttleKey{}
	if p != nil && p.Name != "" {
		key.principal = p.Name
	} else {
		key.addr = remoteHost(r)
	}
	budgets, header, kind := t.writes, headerRemainingWrites, "write"
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		budgets, header, kind = t.reads, headerRemainingReads, "read"
	}
	ok, left, wait := budgets.Take(key, time.Now())
	w.Header()[header] = []string{strconv.FormatInt(left, 10)}
	if ok {
		return nil
	}
	secs := budget.RetryAfter(wait)
	w.Header().Set("Retry-After", secs)
	return newError(http.StatusTooManyRequests, CodeTooManyRequests, "",
		"The request is being throttled: this caller's %s budget (%d requests per %s) is used up. Please try again after '%s' seconds.",
		kind, budgets.Size(), fmtWindow(t.window), secs)
}

// remoteHost returns the IP address of the client of r: the host of
// r.RemoteAddr, or all of it when it has no port.
func remoteHost(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// fmtWindow writes a window as people say it ("1h", "30m", "90s").
func fmtWindow(d time.Duration) string {
	s := d.String()
	for _, suffix := range []string{"m0s", "h0m"} {
		if len(s) > len(suffix) && s[len(s)-len(suffix):] == suffix {
			s = s[:len(s)-len(suffix)+1]
		}
	}
	return s
}
