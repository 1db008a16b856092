package http

import (
	"context"
	nethttp "net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/tracectx"
)

func TestRedactedURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://h/p": "https://h/p",
		"https://user:pw@h:8443/p?sig=s3cret&x=1&flag": "https://REDACTED:REDACTED@h:8443/p?sig=REDACTED&x=REDACTED&flag",
		"http://h/p#frag": "http://h/p",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := redactedURL(u); got != want {
			t.Errorf("redactedURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNoTraceHeadersWithoutSpan: without a span in the context the request
// carries no trace context of the executor's; the action's own traceparent
// header goes out unchanged.
func TestNoTraceHeadersWithoutSpan(t *testing.T) {
	got := make(chan nethttp.Header, 2)
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) { got <- r.Header }))
	defer srv.Close()
	e := New(nil)
	defer e.Close()
	for _, headers := range []map[string]string{nil, {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}} {
		req := &action.Request{Action: &action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: srv.URL, Method: "GET", Headers: headers}}}
		if _, err := e.Execute(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		h := <-got
		if h.Get("traceparent") != headers["traceparent"] || h.Get("tracestate") != "" {
			t.Errorf("with action headers %v: traceparent %q tracestate %q; want the action's own", headers, h.Get("traceparent"), h.Get("tracestate"))
		}
	}
}

// TestTraceHeadersWithoutTracer: a trace context in the context with no
// tracer behind it (a remote parent, nothing recording) is still passed on
// in the traceparent header, replacing the action's own.
func TestTraceHeadersWithoutTracer(t *testing.T) {
	got := make(chan nethttp.Header, 1)
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) { got <- r.Header }))
	defer srv.Close()
	e := New(nil)
	defer e.Close()
	sc := remoteParent{TraceID: "0a0b0c00000000000000000000000000", SpanID: "0d0e000000000000"}
	ctx := tracectx.WithRemote(context.Background(), "00-"+sc.TraceID+"-"+sc.SpanID+"-01", "")
	headers := map[string]string{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	req := &action.Request{Action: &action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: srv.URL, Method: "GET", Headers: headers}}}
	if _, err := e.Execute(ctx, req); err != nil {
		t.Fatal(err)
	}
	want := "00-" + sc.TraceID + "-" + sc.SpanID + "-01"
	if h := <-got; h.Get("traceparent") != want {
		t.Errorf("traceparent %q, want %q", h.Get("traceparent"), want)
	}
}

// remoteParent is the trace context an occurrence keeps (Occurrence.Trace),
// as the Scheduler passes it to an executor when nothing traces the attempt.
type remoteParent struct{ TraceID, SpanID string }
