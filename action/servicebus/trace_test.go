package servicebus_test

import (
	"context"
	"testing"

	"github.com/jobclock/scheduler/action/servicebus"
	"github.com/jobclock/scheduler/internal/tracectx"
)

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
	sc := remoteParent{TraceID: "0a0b0c00000000000000000000000000", SpanID: "0d0e000000000000"}
	ctx := tracectx.WithRemote(context.Background(), "00-"+sc.TraceID+"-"+sc.SpanID+"-01", "")
	queue := "passed-on-" + randHex(3)
	if _, err := e.Execute(ctx, queueRequest("contoso-sb", queue, keyName, key, "hello")); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	got := p.messages(t, queue)
	if len(got) != 1 {
		t.Fatalf("peer received %d messages, want 1", len(got))
	}
	parent := "00-" + sc.TraceID + "-" + sc.SpanID + "-01"
	for _, k := range []string{"Diagnostic-Id", "traceparent"} {
		if v := got[0].ApplicationProperties[k]; v != parent {
			t.Errorf("application property %s = %v, want %s", k, v, parent)
		}
	}
}

// remoteParent is the trace context an occurrence keeps (Occurrence.Trace),
// as the Scheduler passes it to an executor when nothing traces the attempt.
type remoteParent struct{ TraceID, SpanID string }
