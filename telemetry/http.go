package telemetry

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/internal/tracectx"
)

// httpObserver traces and measures the requests of the REST API with the
// OpenTelemetry HTTP server conventions: a server span per request named
// "METHOD ROUTE", continuing the caller's W3C trace context, and the
// http.server.request.duration histogram by method, route and status.
type httpObserver struct {
	tracer   *tracer
	duration metric.Float64Histogram

	mu   sync.RWMutex
	sets map[requestKey][]metric.RecordOption
}

type requestKey struct {
	method, route, scheme string
	status                int
}

func (h *httpObserver) init(opts *Options) {
	mp := opts.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	d, err := mp.Meter(httpScope).Float64Histogram("http.server.request.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of HTTP server requests."), metric.WithExplicitBucketBoundaries(httpBuckets...))
	if err != nil {
		opts.Logger.Warn("telemetry: creating the request duration histogram", "err", err)
	}
	h.tracer, h.duration, h.sets = newTracer(opts.TracerProvider, httpScope), d, make(map[requestKey][]metric.RecordOption)
}

// StartRequest implements [httpapi.Observer]: it starts the request's
// server span, continuing the W3C trace context of its traceparent header.
// Without a tracer that records, a span that the request's context carries
// already (a host's middleware's) is the one the handler's log records
// name.
func (o *Observer) StartRequest(r *http.Request) context.Context {
	ctx := r.Context()
	tr := o.http.tracer.get()
	if tr == nil {
		if sp := trace.SpanFromContext(ctx); sp.SpanContext().IsValid() {
			return tracectx.With(ctx, span{Span: sp})
		}
		return ctx
	}
	method := knownMethod(r.Method)
	ctx = propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
	attrs := []attribute.KeyValue{
		attribute.String("http.request.method", method),
		attribute.String("url.path", r.URL.Path),
		attribute.String("url.scheme", scheme(r)),
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
	ctx, sp := tr.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	return tracectx.With(ctx, span{Span: sp, mine: true})
}

// EndRequest implements [httpapi.Observer]: it ends the request's span,
// named after its route, and measures it in http.server.request.duration.
func (o *Observer) EndRequest(r *http.Request, s httpapi.Served) {
	method := knownMethod(r.Method)
	if sp, ok := tracectx.From(r.Context()).(span); ok && sp.mine {
		if s.Route != "" {
			sp.SetName(method + " " + s.Route)
			sp.SetAttributes(attribute.String("http.route", s.Route))
		}
		sp.SetAttributes(attribute.Int("http.response.status_code", s.Status))
		if s.Status >= 500 {
			sp.SetAttributes(attribute.String("error.type", strconv.Itoa(s.Status)))
			sp.SetStatus(codes.Error, "")
		}
		sp.Span.End()
	}
	h := &o.http
	if h.duration != nil && h.duration.Enabled(r.Context()) {
		h.duration.Record(r.Context(), s.Duration.Seconds(), h.opts(requestKey{method, s.Route, scheme(r), s.Status})...)
	}
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// opts returns the measurement options of one attribute set (a bounded
// number: known methods, the API's routes, status codes).
func (h *httpObserver) opts(k requestKey) []metric.RecordOption {
	h.mu.RLock()
	opts := h.sets[k]
	h.mu.RUnlock()
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
	h.mu.Lock()
	h.sets[k] = opts
	h.mu.Unlock()
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
