package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/jobclock/scheduler/internal/tracectx"
)

// scopeName is the instrumentation scope of the handler's spans and metrics.
const scopeName = "github.com/jobclock/scheduler/httpapi"

// durationBuckets are the bucket boundaries OpenTelemetry's HTTP
// conventions advise for http.server.request.duration, in seconds.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// observer traces and measures the requests of the handler with the
// OpenTelemetry HTTP server conventions: a server span per request named
// "METHOD ROUTE", continuing the caller's W3C trace context, and the
// http.server.request.duration histogram by method, route and status.
type observer struct {
	tracer   *tracectx.Tracer
	duration metric.Float64Histogram

	mu   sync.RWMutex
	sets map[requestKey][]metric.RecordOption
}

type requestKey struct {
	method, route, scheme string
	status                int
}

func newObserver(opts *Options) *observer {
	mp := opts.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	d, err := mp.Meter(scopeName).Float64Histogram("http.server.request.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of HTTP server requests."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		opts.Logger.Warn("httpapi: creating the request duration histogram", "err", err)
	}
	return &observer{tracer: tracectx.NewTracer(opts.TracerProvider, scopeName), duration: d, sets: make(map[requestKey][]metric.RecordOption)}
}

// requestInfo is filled in by the handler for the observer.
type requestInfo struct{ route string }

type requestInfoKey struct{}

// noteRoute tells the observer of r (if any) the route pattern the mux
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

// wrap returns next traced and measured.
func (o *observer) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr := o.tracer.Get()
		measure := o.duration != nil && o.duration.Enabled(r.Context())
		if tr == nil && !measure {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		method := knownMethod(r.Method)
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		ctx := r.Context()
		var span trace.Span
		if tr != nil {
			ctx = propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
			attrs := []attribute.KeyValue{
				attribute.String("http.request.method", method),
				attribute.String("url.path", r.URL.Path),
				attribute.String("url.scheme", scheme),
				attribute.String("network.protocol.version", strings.TrimPrefix(r.Proto, "HTTP/")),
			}
			if method != r.Method {
				attrs = append(attrs, attribute.String("http.request.method_original", r.Method))
			}
			if ua := r.UserAgent(); ua != "" {
				attrs = append(attrs, attribute.String("user_agent.original", ua))
			}
			if r.RemoteAddr != "" {
				attrs = append(attrs, attribute.String("client.address", clientAddress(r.RemoteAddr)))
			}
			ctx, span = tr.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...), trace.WithTimestamp(start))
		}
		ri := &requestInfo{}
		ctx = context.WithValue(ctx, requestInfoKey{}, ri)
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(ctx))
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		if span != nil {
			if ri.route != "" {
				span.SetName(method + " " + ri.route)
				span.SetAttributes(attribute.String("http.route", ri.route))
			}
			span.SetAttributes(attribute.Int("http.response.status_code", status))
			if status >= 500 {
				span.SetAttributes(attribute.String("error.type", strconv.Itoa(status)))
				span.SetStatus(codes.Error, "")
			}
			span.End()
		}
		if measure {
			o.duration.Record(r.Context(), time.Since(start).Seconds(), o.opts(requestKey{method, ri.route, scheme, status})...)
		}
	})
}

// opts returns the measurement options of one attribute set (a bounded
// number: known methods, the API's routes, status codes).
func (o *observer) opts(k requestKey) []metric.RecordOption {
	o.mu.RLock()
	opts := o.sets[k]
	o.mu.RUnlock()
	if opts != nil {
		return opts
	}
	attrs := []attribute.KeyValue{
		attribute.String("http.request.method", k.method),
		attribute.String("url.scheme", k.scheme),
		attribute.Int("http.response.status_code", k.status),
	}
	if k.route != "" {
		attrs = append(attrs, attribute.String("http.route", k.route))
	}
	if k.status >= 500 {
		attrs = append(attrs, attribute.String("error.type", strconv.Itoa(k.status)))
	}
	opts = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	o.mu.Lock()
	o.sets[k] = opts
	o.mu.Unlock()
	return opts
}

// knownMethod returns the method, or _OTHER for a method the HTTP
// conventions do not list, which keeps the attribute bounded.
func knownMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	}
	return "_OTHER"
}

func clientAddress(remote string) string {
	if i := strings.LastIndexByte(remote, ':'); i > 0 {
		return strings.Trim(remote[:i], "[]")
	}
	return remote
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
