package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TestFormatAsPropagator: format writes a span context's traceparent and
// tracestate as OpenTelemetry's W3C propagator does.
func TestFormatAsPropagator(t *testing.T) {
	ts, err := trace.ParseTraceState("vendor=abc,other=x")
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []trace.SpanContext{
		{},
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: [16]byte{1, 2, 3}, SpanID: [8]byte{4, 5}}),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: [16]byte{0xab}, SpanID: [8]byte{0xcd}, TraceFlags: trace.FlagsSampled, TraceState: ts}),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: [16]byte{15: 1}, SpanID: [8]byte{7: 1}, TraceFlags: 0xff, Remote: true}),
	} {
		var want carrier
		propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), &want)
		if p, s := format(sc); p != want.parent || s != want.state {
			t.Errorf("format(%v) = %q, %q; want %q, %q", sc, p, s, want.parent, want.state)
		}
	}
}
