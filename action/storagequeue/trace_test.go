package storagequeue_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/jobclock/scheduler/action/storagequeue"
)

// TestEnvelopeTraceContext: an enqueue within a traced attempt is a
// producer span, a child of the attempt's, and the envelope carries that
// span's W3C trace context after the message.
func TestEnvelopeTraceContext(t *testing.T) {
	p := azurite(t)
	q := p.newQueue(t)
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base), Envelope: true})
	defer e.Close()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ts, _ := trace.ParseTraceState("vendor=abc")
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: [16]byte{9, 8, 7}, SpanID: [8]byte{6, 5, 4}, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true}))
	ctx, attempt := tp.Tracer("test").Start(ctx, "jobclock.attempt")
	if _, err := e.Execute(ctx, request(p.account, q, p.addSAS(t, q), "hello")); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	attempt.End()
	spans := rec.Ended()
	if len(spans) != 2 || spans[0].Name() != "send "+q {
		t.Fatalf("spans = %v, want the send span and the attempt", spans)
	}
	send := spans[0]
	if send.SpanKind() != trace.SpanKindProducer || send.Parent().SpanID() != attempt.SpanContext().SpanID() {
		t.Errorf("send span: kind %v parent %v; want a producer child of %v", send.SpanKind(), send.Parent().SpanID(), attempt.SpanContext().SpanID())
	}
	got := p.receive(t, q)
	if len(got) != 1 {
		t.Fatalf("queue has %d messages, want 1", len(got))
	}
	_, _, children := parseEnvelope(t, *got[0].MessageText)
	if len(children) != 9 {
		t.Fatalf("envelope elements = %v, want 9", children)
	}
	want := []element{
		{"Message", "hello"},
		{"TraceParent", "00-" + send.SpanContext().TraceID().String() + "-" + send.SpanContext().SpanID().String() + "-01"},
		{"TraceState", "vendor=abc"},
	}
	if diff := cmp.Diff(want, children[6:]); diff != "" {
		t.Errorf("envelope's last elements (-want +got):\n%s", diff)
	}
}

// TestEnvelopeTraceContextWithoutTracer: a trace context in the attempt's
// context with no tracer behind it (a remote parent, nothing recording) is
// still passed on in the envelope.
func TestEnvelopeTraceContextWithoutTracer(t *testing.T) {
	p := azurite(t)
	q := p.newQueue(t)
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base), Envelope: true})
	defer e.Close()
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: [16]byte{0xa, 0xb, 0xc}, SpanID: [8]byte{0xd, 0xe}, TraceFlags: trace.FlagsSampled, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), sc)
	if _, err := e.Execute(ctx, request(p.account, q, p.addSAS(t, q), "hello")); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	got := p.receive(t, q)
	if len(got) != 1 {
		t.Fatalf("queue has %d messages, want 1", len(got))
	}
	_, _, children := parseEnvelope(t, *got[0].MessageText)
	want := []element{{"Message", "hello"}, {"TraceParent", "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"}}
	if len(children) != 8 {
		t.Fatalf("envelope elements = %v, want 8", children)
	}
	if diff := cmp.Diff(want, children[6:]); diff != "" {
		t.Errorf("envelope's last elements (-want +got):\n%s", diff)
	}
}
