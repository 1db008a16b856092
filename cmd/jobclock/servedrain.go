package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jobclock/scheduler/httpapi"
)

// drainRetryAfter is the Retry-After, in seconds, of the 503 with which
// serve answers the API and the dashboard while it shuts down: by then a
// load balancer that reads /readyz sends the retry to another process.
const drainRetryAfter = 5

// drain is the shutdown of serve (or run) as its HTTP handlers see it:
// from the signal until the scheduler has stopped and the listeners
// close. The zero value is not draining.
type drain struct{ on atomic.Bool }

// start marks the shutdown as begun.
func (d *drain) start() { d.on.Store(true) }

// draining reports whether the shutdown has begun.
func (d *drain) draining() bool { return d.on.Load() }

// refuse answers a write (any method but GET and HEAD) of the API or the
// dashboard during the shutdown: 503 with Retry-After, and Connection:
// close so that the client's next request opens a connection, which a
// load balancer sends to a process that is ready. The API's answer has
// the ARM error shape of its other errors; the dashboard's is text.
func (d *drain) refuse(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Retry-After", strconv.Itoa(drainRetryAfter))
	h.Set("Connection", "close")
	h.Set("Cache-Control", "no-store")
	const msg = "The server is shutting down and takes no more writes. Please retry the request."
	if r.URL.Path == "/" || r.URL.Path == dashboardPrefix || strings.HasPrefix(r.URL.Path, dashboardPrefix+"/") {
		h.Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(msg + "\n"))
		return
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusServiceUnavailable)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": httpapi.CodeServiceUnavailable, "message": msg}})
}
