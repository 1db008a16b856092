package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/jobclock/scheduler/internal/guard"
)

// Observer is told of the requests the handler serves, to trace and
// measure them: package telemetry (github.com/jobclock/scheduler/telemetry,
// a module of its own) implements it with OpenTelemetry, as a server span
// per request named "METHOD ROUTE" that continues the caller's W3C trace
// context, and the histogram http.server.request.duration. Its methods are
// called from several goroutines at once. A method that panics is
// recovered and logged to Options.Logger (an error the first time each
// method panics, with its stack; debug after that), as the Scheduler does
// with its Config.Observer, and the request is served as if the method had
// returned nothing: a request whose StartRequest panicked is served with
// its own context. The record is written with the call's context (the
// request's own for StartRequest, the one StartRequest returned for
// EndRequest), so that a handler that reads trace IDs from it finds them.
type Observer interface {
	// StartRequest is called as r arrives, before it is routed. It
	// returns the context to serve r with: r's own, or one that carries
	// what the Observer needs at the end (the handler's log records
	// about r are written with it). A nil context serves r with its own.
	StartRequest(r *http.Request) context.Context
	// EndRequest is called once r is served; r's context is the one
	// StartRequest returned.
	EndRequest(r *http.Request, s Served)
}

// Served describes a request the handler served, for
// [Observer.EndRequest].
type Served struct {
	// Route is the route pattern that served the request, without its
	// method ("/subscriptions/{subscriptionId}/..."); empty when no
	// route matched (the 404 of an unknown path).
	Route string
	// Status is the response's status code.
	Status int
	// Duration is how long the handler took, from before StartRequest
	// to the end of the response.
	Duration time.Duration
}

// guardedObserver is Options.Observer as the handler calls it: a method
// that panics is recovered and logged, as the Scheduler does with its
// Config.Observer, and the request is served as if the method had returned
// nothing: with its own context when StartRequest panicked.
type guardedObserver struct {
	obs    Observer
	panics *guard.Panics
}

func newGuardedObserver(obs Observer, log *slog.Logger) *guardedObserver {
	return &guardedObserver{obs, guard.New(log, "the Observer (Options.Observer)", "the request is served as if the call returned nothing",
		"StartRequest", "EndRequest")}
}

// The methods of an Observer by their index in the methods of
// guardedObserver.panics.
const (
	obsStartRequest = iota
	obsEndRequest
)

func (g *guardedObserver) StartRequest(r *http.Request) (ctx context.Context) {
	ctx = r.Context()
	defer g.panics.Recover(ctx, obsStartRequest)
	if c := g.obs.StartRequest(r); c != nil {
		return c
	}
	return ctx
}

func (g *guardedObserver) EndRequest(r *http.Request, s Served) {
	defer g.panics.Recover(r.Context(), obsEndRequest)
	g.obs.EndRequest(r, s)
}

// observe returns next with every request told to o.
func observe(o Observer, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ri := &requestInfo{}
		r = r.WithContext(context.WithValue(o.StartRequest(r), requestInfoKey{}, ri))
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		o.EndRequest(r, Served{Route: ri.route, Status: status, Duration: time.Since(start)})
	})
}

// requestInfo is filled in by the handler for observe.
type requestInfo struct{ route string }

type requestInfoKey struct{}

// noteRoute notes, for the Observer of r if any, the route pattern the mux
// chose for r.
func noteRoute(r *http.Request) {
	if ri, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok && r.Pattern != "" {
		route := r.Pattern
		if i := strings.IndexByte(route, '/'); i >= 0 {
			route = route[i:] // drop the method
		}
		if route != "/" { // the catch-all that answers 404
			ri.route = route
		}
	}
}

// statusWriter notes the status code of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
