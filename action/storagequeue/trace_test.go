package storagequeue_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/action/storagequeue"
	"github.com/jobclock/scheduler/internal/tracectx"
)

// TestEnvelopeTraceContextWithoutTracer: a trace context in the attempt's
// context with no tracer behind it (a remote parent, nothing recording) is
// still passed on in the envelope.
func TestEnvelopeTraceContextWithoutTracer(t *testing.T) {
	p := azurite(t)
	q := p.newQueue(t)
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base), Envelope: true})
	defer e.Close()
	sc := remoteParent{TraceID: "0a0b0c00000000000000000000000000", SpanID: "0d0e000000000000"}
	ctx := tracectx.WithRemote(context.Background(), "00-"+sc.TraceID+"-"+sc.SpanID+"-01", "")
	if _, err := e.Execute(ctx, request(p.account, q, p.addSAS(t, q), "hello")); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	got := p.receive(t, q)
	if len(got) != 1 {
		t.Fatalf("queue has %d messages, want 1", len(got))
	}
	_, _, children := parseEnvelope(t, *got[0].MessageText)
	want := []element{{"Message", "hello"}, {"TraceParent", "00-" + sc.TraceID + "-" + sc.SpanID + "-01"}}
	if len(children) != 8 {
		t.Fatalf("envelope elements = %v, want 8", children)
	}
	if diff := cmp.Diff(want, children[6:]); diff != "" {
		t.Errorf("envelope's last elements (-want +got):\n%s", diff)
	}
}

// remoteParent is the trace context an occurrence keeps (Occurrence.Trace),
// as the Scheduler passes it to an executor when nothing traces the attempt.
type remoteParent struct{ TraceID, SpanID string }
