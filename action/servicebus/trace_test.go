package servicebus_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/jobclock/scheduler/action/servicebus"
)

// TestTraceContextProperties: a send within a traced attempt is a producer
// span, a child of the attempt's, and the message the peer receives
// carries that span's W3C trace context in Diagnostic-Id, traceparent and
// tracestate.
func TestTraceContextProperties(t *testing.T) {
	p := peer(t)
	keyName, key := p.newKey(t)
	e := servicebus.New(p.options())
	defer e.Close(context.Background())
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ts, _ := trace.ParseTraceState("vendor=abc")
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: [16]byte{1, 2, 3}, SpanID: [8]byte{4, 5, 6}, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true}))
	ctx, attempt := tp.Tracer("test").Start(ctx, "jobclock.attempt")

	queue := "traced-" + randHex(3)
	req := queueRequest("contoso-sb", queue, keyName, key, "hello")
	req.Action.ServiceBusQueueMessage.CustomMessageProperties = map[string]string{"traceparent": "00-ffffffffffffffffffffffffffffffff-ffffffffffffffff-01"}
	if _, err := e.Execute(ctx, req); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	attempt.End()

	spans := rec.Ended()
	if len(spans) != 2 || spans[0].Name() != "send "+queue {
		t.Fatalf("spans = %v, want the send span and the attempt", spans)
	}
	send := spans[0]
	if send.SpanKind() != trace.SpanKindProducer || send.Parent().SpanID() != attempt.SpanContext().SpanID() ||
		send.SpanContext().TraceID() != attempt.SpanContext().TraceID() {
		t.Errorf("send span: kind %v parent %v trace %v; want a producer child of the attempt %v in trace %v",
			send.SpanKind(), send.Parent().SpanID(), send.SpanContext().TraceID(), attempt.SpanContext().SpanID(), attempt.SpanContext().TraceID())
	}
	attrs := map[string]any{}
	for _, kv := range send.Attributes() {
		attrs[string(kv.Key)] = kv.Value.AsInterface()
	}
	for k, v := range map[string]any{"messaging.system": "servicebus", "messaging.operation.type": "send",
		"messaging.destination.name": queue, "messaging.message.id": req.ClientRequestID} {
		if attrs[k] != v {
			t.Errorf("send span attribute %s = %v, want %v", k, attrs[k], v)
		}
	}

	got := p.messages(t, queue)
	if len(got) != 1 {
		t.Fatalf("peer received %d messages, want 1", len(got))
	}
	parent := "00-" + send.SpanContext().TraceID().String() + "-" + send.SpanContext().SpanID().String() + "-01"
	want := map[string]any{"Diagnostic-Id": parent, "traceparent": parent, "tracestate": "vendor=abc"}
	gotTrace := map[string]any{}
	for k := range want {
		gotTrace[k] = got[0].ApplicationProperties[k]
	}
	if diff := cmp.Diff(want, gotTrace); diff != "" {
		t.Errorf("trace context properties (-want +got):\n%s", diff)
	}
}

// TestNoTraceContextWithoutSpan: without a span in the context, no trace
// properties are added.
func TestNoTraceContextWithoutSpan(t *testing.T) {
	p := peer(t)
	keyName, key := p.newKey(t)
	e := servicebus.New(p.options())
	defer e.Close(context.Background())
	queue := "untraced-" + randHex(3)
	if _, err := e.Execute(context.Background(), queueRequest("contoso-sb", queue, keyName, key, "hello")); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	got := p.messages(t, queue)
	if len(got) != 1 {
		t.Fatalf("peer received %d messages, want 1", len(got))
	}
	for _, k := range []string{"Diagnostic-Id", "traceparent", "tracestate"} {
		if v, ok := got[0].ApplicationProperties[k]; ok {
			t.Errorf("application property %s = %v without a span, want none", k, v)
		}
	}
}

// TestTraceContextPassedOnWithoutTracer: a trace context in the attempt's
// context with no tracer behind it (a remote parent, nothing recording) is
// still passed on in the message's properties.
func TestTraceContextPassedOnWithoutTracer(t *testing.T) {
	p := peer(t)
	keyName, key := p.newKey(t)
	e := servicebus.New(p.options())
	defer e.Close(context.Background())
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: [16]byte{0xa, 0xb, 0xc}, SpanID: [8]byte{0xd, 0xe}, TraceFlags: trace.FlagsSampled, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), sc)
	queue := "passed-on-" + randHex(3)
	if _, err := e.Execute(ctx, queueRequest("contoso-sb", queue, keyName, key, "hello")); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	got := p.messages(t, queue)
	if len(got) != 1 {
		t.Fatalf("peer received %d messages, want 1", len(got))
	}
	parent := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
	for _, k := range []string{"Diagnostic-Id", "traceparent"} {
		if v := got[0].ApplicationProperties[k]; v != parent {
			t.Errorf("application property %s = %v, want %s", k, v, parent)
		}
	}
}
