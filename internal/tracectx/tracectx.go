// Package tracectx holds what the Scheduler and the executors share to
// trace an attempt and pass its trace context on: child spans made with
// the provider of the span in the context, and W3C traceparent and
// tracestate values. It uses the OpenTelemetry API only.
package tracectx

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Start starts a span as a child of the span in ctx, with the tracer
// provider of that span, when ctx carries a valid span context. Otherwise
// it returns ctx and a nil span, at the cost of one context lookup: an
// executor called without tracing makes no span and allocates nothing.
// When the span in ctx does not record (a trace context passed on without
// a tracer), the child carries the same span context, so the trace context
// is still passed on.
func Start(ctx context.Context, scope, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return ctx, nil
	}
	return parent.TracerProvider().Tracer(scope).Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// End ends span (which may be nil). A non-nil err sets the span's status
// to Error with err's text, and error.type to errType or, when that is
// empty, err's Go type.
func End(span trace.Span, err error, errType string) {
	if span == nil {
		return
	}
	if err != nil {
		if errType == "" {
			errType = fmt.Sprintf("%T", err)
		}
		span.SetAttributes(attribute.String("error.type", errType))
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// Parent returns the W3C traceparent and tracestate of the span context in
// ctx; both are empty when ctx carries no valid span context.
func Parent(ctx context.Context) (traceparent, tracestate string) {
	return Format(trace.SpanContextFromContext(ctx))
}

// Format returns the W3C traceparent and tracestate of sc; both are empty
// when sc is not valid.
func Format(sc trace.SpanContext) (traceparent, tracestate string) {
	if !sc.IsValid() {
		return "", ""
	}
	var c Carrier
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), &c)
	return c.Parent, c.State
}

// Extract returns ctx with the remote span context of traceparent and
// tracestate; ctx unchanged when traceparent is empty or invalid.
func Extract(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, &Carrier{traceparent, tracestate})
}

// Carrier carries one traceparent and one tracestate value for
// propagation.TraceContext.
type Carrier struct{ Parent, State string }

// Get implements propagation.TextMapCarrier.
func (c *Carrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.Parent
	case "tracestate":
		return c.State
	}
	return ""
}

// Set implements propagation.TextMapCarrier.
func (c *Carrier) Set(key, value string) {
	switch key {
	case "traceparent":
		c.Parent = value
	case "tracestate":
		c.State = value
	}
}

// Keys implements propagation.TextMapCarrier.
func (c *Carrier) Keys() []string { return []string{"traceparent", "tracestate"} }

// Tracer is the tracer of a component that takes an optional
// TracerProvider, where nil means the global one. Its Get tells whether
// spans would record, so that the component skips the work of describing
// them (and the allocations of starting a span) when nothing records: with
// the global provider while no SDK is installed, or a no-op provider.
type Tracer struct {
	tracer trace.Tracer // nil: a no-op provider was given
	global bool         // tracer is the global provider's: on only while one is installed
	state  atomic.Pointer[providerState]
}

// providerState caches whether a global provider records.
type providerState struct {
	tp trace.TracerProvider
	on bool
}

// NewTracer returns the tracer of scope from tp, or from the global
// provider when tp is nil.
func NewTracer(tp trace.TracerProvider, scope string) *Tracer {
	t := &Tracer{}
	if tp == nil {
		tp, t.global = otel.GetTracerProvider(), true
	}
	if t.global || !Off(tp) {
		t.tracer = tp.Tracer(scope)
	}
	return t
}

// Get returns the tracer to start spans with, or nil when spans would not
// record. With the global provider it costs two atomic loads.
func (t *Tracer) Get() trace.Tracer {
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
	on := !Off(tp)
	if reflect.TypeOf(tp).Comparable() {
		t.state.Store(&providerState{tp, on})
	}
	if on {
		return t.tracer
	}
	return nil
}

// Off reports whether tp never records: a no-op provider, or the global
// provider while no SDK is installed (it hands out non-recording spans
// then).
func Off(tp trace.TracerProvider) bool {
	switch tp.(type) {
	case tracenoop.TracerProvider, *tracenoop.TracerProvider:
		return true
	}
	t := reflect.TypeOf(tp)
	return t != nil && t.Kind() == reflect.Pointer && t.Elem().Name() == "tracerProvider" &&
		t.Elem().PkgPath() == "go.opentelemetry.io/otel/internal/global"
}
