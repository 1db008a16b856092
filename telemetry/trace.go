package telemetry

import (
	"context"
	"encoding/hex"
	"log/slog"
	"reflect"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/jobclock/scheduler/internal/tracectx"
)

// tracer is the tracer of one instrumentation scope from a provider that
// may be nil, meaning the global one. Its get tells whether spans would
// record, so that the caller skips the work of describing them (and the
// allocations of starting a span) when nothing records: with the global
// provider while no SDK is installed, or a no-op provider.
type tracer struct {
	tracer trace.Tracer // nil: a no-op provider was given
	global bool         // tracer is the global provider's: on only while one is installed
	state  atomic.Pointer[providerState]
}

// providerState caches whether a global provider records.
type providerState struct {
	tp trace.TracerProvider
	on bool
}

// newTracer returns the tracer of scope from tp, or from the global
// provider when tp is nil.
func newTracer(tp trace.TracerProvider, scope string) *tracer {
	t := &tracer{}
	if tp == nil {
		tp, t.global = otel.GetTracerProvider(), true
	}
	if t.global || !off(tp) {
		t.tracer = tp.Tracer(scope)
	}
	return t
}

// get returns the tracer to start spans with, or nil when spans would not
// record. With the global provider it costs two atomic loads.
func (t *tracer) get() trace.Tracer {
	if !t.global {
		return t.tracer
	}
	tp := otel.GetTracerProvider()
	if st := t.state.Load(); st != nil && st.tp == tp {
		if st.on {
			return t.tracer
		}
		return nil
	}
	on := !off(tp)
	if reflect.TypeOf(tp).Comparable() {
		t.state.Store(&providerState{tp, on})
	}
	if on {
		return t.tracer
	}
	return nil
}

// off reports whether tp never records: a no-op provider, or the global
// provider while no SDK is installed (it hands out non-recording spans
// then).
func off(tp trace.TracerProvider) bool {
	switch tp.(type) {
	case tracenoop.TracerProvider, *tracenoop.TracerProvider:
		return true
	}
	t := reflect.TypeOf(tp)
	return t != nil && t.Kind() == reflect.Pointer && t.Elem().Name() == "tracerProvider" &&
		t.Elem().PkgPath() == "go.opentelemetry.io/otel/internal/global"
}

// span is an OpenTelemetry span as the library's executors see it (a
// tracectx.Span): they start their client and producer spans as its
// children, with its tracer provider, and send its trace context on. mine
// marks the spans this package started for the Scheduler or the REST API,
// which it ends itself.
type span struct {
	trace.Span
	mine bool
}

func (s span) Start(ctx context.Context, scope, name string, kind tracectx.Kind, attrs []tracectx.Attr) (context.Context, tracectx.Span) {
	k := trace.SpanKindInternal
	switch kind {
	case tracectx.Client:
		k = trace.SpanKindClient
	case tracectx.Producer:
		k = trace.SpanKindProducer
	}
	ctx, child := s.Span.TracerProvider().Tracer(scope).Start(ctx, name, trace.WithSpanKind(k), trace.WithAttributes(convert(attrs)...))
	return ctx, span{Span: child}
}

func (s span) End(err error, errType string, attrs []tracectx.Attr) {
	if len(attrs) > 0 {
		s.Span.SetAttributes(convert(attrs)...)
	}
	if err != nil {
		s.Span.SetAttributes(attribute.String("error.type", errType))
		s.Span.SetStatus(codes.Error, err.Error())
	}
	s.Span.End()
}

func (s span) TraceContext() (traceparent, tracestate string) {
	return format(s.Span.SpanContext())
}

// convert returns attrs as OpenTelemetry attributes.
func convert(attrs []tracectx.Attr) []attribute.KeyValue {
	out := make([]attribute.KeyValue, len(attrs))
	for i, a := range attrs {
		if a.IsInt {
			out[i] = attribute.Int64(a.Key, a.Int)
		} else {
			out[i] = attribute.String(a.Key, a.Str)
		}
	}
	return out
}

// ExecutorContext returns ctx ready for calling one of the library's
// executors (action/http, action/servicebus, action/storagequeue) directly,
// outside a Scheduler: the executor then traces its request as a child of
// the span ctx carries, if any, made with that span's tracer provider, and
// sends that trace context on (also when the span records nothing, a trace
// context received from elsewhere). The Scheduler's attempts need no call:
// an Observer of this package gives their executors the attempt's span.
func ExecutorContext(ctx context.Context) context.Context {
	sp := trace.SpanFromContext(ctx)
	if !sp.SpanContext().IsValid() {
		return ctx
	}
	return tracectx.With(ctx, span{Span: sp})
}

// format returns the W3C traceparent and tracestate of sc, as
// propagation.TraceContext writes them (version 00, the sampled and random
// flags), in one allocation; both are empty when sc is not valid.
func format(sc trace.SpanContext) (traceparent, tracestate string) {
	if !sc.IsValid() {
		return "", ""
	}
	tid, sid := sc.TraceID(), sc.SpanID()
	flags := [1]byte{byte(sc.TraceFlags() & (trace.FlagsSampled | trace.FlagsRandom))}
	var b [55]byte
	copy(b[:3], "00-")
	hex.Encode(b[3:35], tid[:])
	b[35] = '-'
	hex.Encode(b[36:52], sid[:])
	b[52] = '-'
	hex.Encode(b[53:], flags[:])
	return string(b[:]), sc.TraceState().String()
}

// extract returns ctx with the remote span context of traceparent and
// tracestate; ctx unchanged when traceparent is empty or invalid.
func extract(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, &carrier{traceparent, tracestate})
}

// carrier carries one traceparent and one tracestate value for
// propagation.TraceContext.
type carrier struct{ parent, state string }

func (c *carrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.parent
	case "tracestate":
		return c.state
	}
	return ""
}

func (c *carrier) Set(key, value string) {
	switch key {
	case "traceparent":
		c.parent = value
	case "tracestate":
		c.state = value
	}
}

func (c *carrier) Keys() []string { return []string{"traceparent", "tracestate"} }

// TraceHandler returns a slog.Handler that adds the trace_id and span_id
// of the OpenTelemetry span in a record's context (as the *Context logging
// methods pass it) to the record, then hands it to h, so that log records
// written while a span is active join its trace. Records without a valid
// span context, or with a trace_id already, pass unchanged. The Scheduler
// and the REST API add them to their own records about traced attempts
// and requests; a host may wrap its own logger's handler.
func TraceHandler(h slog.Handler) slog.Handler {
	if th, ok := h.(*traceHandler); ok {
		return th
	}
	return &traceHandler{h}
}

type traceHandler struct{ h slog.Handler }

func (t *traceHandler) Enabled(ctx context.Context, l slog.Level) bool { return t.h.Enabled(ctx, l) }

func (t *traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && !tracectx.HasTraceID(r) {
			r = r.Clone()
			r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
		}
	}
	return t.h.Handle(ctx, r)
}

func (t *traceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &traceHandler{t.h.WithAttrs(as)}
}
func (t *traceHandler) WithGroup(name string) slog.Handler { return &traceHandler{t.h.WithGroup(name)} }
