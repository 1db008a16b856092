package telemetry_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"
	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/servicebus"
	"github.com/jobclock/scheduler/action/storagequeue"
	"github.com/jobclock/scheduler/telemetry"
)

// The executors' tests of their spans, with the attempt span made by the
// OpenTelemetry SDK. The peers they send to are those scripts/test.sh
// starts (Azurite, the Service Bus peer of testenv/node); the helpers that
// reach them are small copies of those of action/storagequeue's and
// action/servicebus's tests, as test files are not shared across modules.

// TestTraceContextProperties: a send within a traced attempt is a producer
// span, a child of the attempt's, and the message the peer receives
// carries that span's W3C trace context in Diagnostic-Id, traceparent and
// tracestate.
func TestTraceContextProperties(t *testing.T) {
	p := serviceBusPeer(t)
	keyName, key := p.newKey(t)
	e := servicebus.New(p.options())
	defer e.Close(context.Background())
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ts, _ := trace.ParseTraceState("vendor=abc")
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: [16]byte{1, 2, 3}, SpanID: [8]byte{4, 5, 6}, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true}))
	ctx, attempt := tp.Tracer("test").Start(ctx, "jobclock.attempt")
	ctx = telemetry.ExecutorContext(ctx)

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
		"messaging.destination.name": queue, "messaging.message.id": req.ClientRequestID()} {
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
	ctx = telemetry.ExecutorContext(ctx)
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

// sbPeer is the local AMQP peer (testenv/node/sbpeer.js).
type sbPeer struct {
	addr string // host:port of the AMQP listener
	http string // base URL of its HTTP API
}

// serviceBusPeer returns the peer named by JOBCLOCK_SBPEER_ADDR and
// JOBCLOCK_SBPEER_HTTP (set by scripts/start-sbpeer.sh). Without them the
// test is skipped, or fails when CI=true.
func serviceBusPeer(tb testing.TB) *sbPeer {
	tb.Helper()
	addr, api := os.Getenv("JOBCLOCK_SBPEER_ADDR"), os.Getenv("JOBCLOCK_SBPEER_HTTP")
	if addr == "" || api == "" {
		missingPeer(tb, `JOBCLOCK_SBPEER_ADDR or JOBCLOCK_SBPEER_HTTP is not set; start the Service Bus peer with: eval "$(scripts/start-sbpeer.sh)"`)
	}
	return &sbPeer{addr: addr, http: api}
}

func missingPeer(tb testing.TB, msg string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
}

// options are executor options that reach the peer for every namespace.
func (p *sbPeer) options() *servicebus.Options {
	return &servicebus.Options{Endpoint: func(string) string { return p.addr }, UseDevelopmentEmulator: true, Timeout: 10 * time.Second}
}

// newKey registers a shared access key under a fresh name and returns the
// name and key.
func (p *sbPeer) newKey(tb testing.TB) (name, key string) {
	tb.Helper()
	name = "policy-" + randHex(4)
	var k [32]byte
	_, _ = rand.Read(k[:])
	key = base64.StdEncoding.EncodeToString(k[:])
	body, _ := json.Marshal(map[string]string{"name": name, "key": key})
	resp, err := http.Post(p.http+"/keys", "application/json", bytes.NewReader(body))
	if err != nil {
		tb.Fatalf("register key with the peer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("register key with the peer: %s", resp.Status)
	}
	return name, key
}

// received is one message as the peer recorded it (the part these tests
// read).
type received struct {
	ApplicationProperties map[string]any `json:"application_properties"`
}

// messages returns what the peer received on address.
func (p *sbPeer) messages(tb testing.TB, address string) []received {
	tb.Helper()
	resp, err := http.Get(p.http + "/messages?address=" + address)
	if err != nil {
		tb.Fatalf("peer GET messages: %v", err)
	}
	defer resp.Body.Close()
	var out []received
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		tb.Fatalf("peer GET messages: %v", err)
	}
	return out
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func queueRequest(namespace, queue, keyName, key, msg string) *action.Request {
	return &action.Request{
		Action: &action.Action{Type: action.ServiceBusQueue, ServiceBusQueueMessage: &action.ServiceBusQueueMessage{
			ServiceBusMessage: action.ServiceBusMessage{
				Namespace:      namespace,
				TransportType:  action.TransportNetMessaging,
				Authentication: &action.ServiceBusAuthentication{SASKeyName: keyName, SASKey: key, Type: "SharedAccessKey"},
				Message:        msg,
			},
			QueueName: queue,
		}},
		IDs:          action.StaticIDs{Job: "nightly", Tag: "c0ffee0123456789", ClientRequest: "5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3"},
		CollectionID: "reports",
		ExpectedTime: time.Date(2026, 11, 21, 23, 30, 0, 0, time.FixedZone("CET", 3600)),
	}
}

// devKey is the well-known key of Azurite's devstoreaccount1 (public, not a
// secret).
const devKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

// azuritePeer is the Azurite queue service.
type azuritePeer struct {
	base    string // "http://127.0.0.1:PORT/"
	account string // "devstoreaccount1"
	svc     *azqueue.ServiceClient
	cred    *azqueue.SharedKeyCredential
}

// azurite returns the Azurite instance named by
// JOBCLOCK_AZURITE_QUEUE_ENDPOINT (set by scripts/start-azurite.sh).
// Without it the test is skipped, or fails when CI=true.
func azurite(tb testing.TB) *azuritePeer {
	tb.Helper()
	ep := os.Getenv("JOBCLOCK_AZURITE_QUEUE_ENDPOINT")
	if ep == "" {
		missingPeer(tb, `JOBCLOCK_AZURITE_QUEUE_ENDPOINT is not set; start Azurite with: eval "$(scripts/start-azurite.sh)"`)
	}
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" {
		tb.Fatalf("JOBCLOCK_AZURITE_QUEUE_ENDPOINT=%q is not a URL like http://127.0.0.1:10001/devstoreaccount1/", ep)
	}
	account := strings.Trim(u.Path, "/")
	cred, err := azqueue.NewSharedKeyCredential(account, devKey)
	if err != nil {
		tb.Fatal(err)
	}
	svc, err := azqueue.NewServiceClientWithSharedKeyCredential(ep, cred, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return &azuritePeer{base: u.Scheme + "://" + u.Host + "/", account: account, svc: svc, cred: cred}
}

// newQueue creates a queue with a unique name and deletes it when the test
// ends.
func (p *azuritePeer) newQueue(tb testing.TB) string {
	tb.Helper()
	name := "jc-" + randHex(4)
	if _, err := p.svc.CreateQueue(context.Background(), name, nil); err != nil {
		tb.Fatalf("create queue %s: %v", name, err)
	}
	tb.Cleanup(func() { _, _ = p.svc.DeleteQueue(context.Background(), name, nil) })
	return name
}

// addSAS is a SAS with the add permission, valid for an hour, over http
// and https.
func (p *azuritePeer) addSAS(tb testing.TB, queue string) string {
	tb.Helper()
	qp, err := sas.QueueSignatureValues{
		Protocol:    sas.ProtocolHTTPSandHTTP,
		ExpiryTime:  time.Now().Add(time.Hour).UTC(),
		Permissions: (&sas.QueuePermissions{Add: true}).String(),
		QueueName:   queue,
	}.SignWithSharedKey(p.cred)
	if err != nil {
		tb.Fatal(err)
	}
	return "?" + qp.Encode()
}

// receive dequeues and deletes every message of queue.
func (p *azuritePeer) receive(tb testing.TB, queue string) []*azqueue.DequeuedMessage {
	tb.Helper()
	q := p.svc.NewQueueClient(queue)
	n := int32(32)
	resp, err := q.DequeueMessages(context.Background(), &azqueue.DequeueMessagesOptions{NumberOfMessages: &n})
	if err != nil {
		tb.Fatalf("dequeue from %s: %v", queue, err)
	}
	for _, m := range resp.Messages {
		if _, err := q.DeleteMessage(context.Background(), *m.MessageID, *m.PopReceipt, nil); err != nil {
			tb.Fatalf("delete message: %v", err)
		}
	}
	return resp.Messages
}

func request(account, queue, sasToken, msg string) *action.Request {
	return &action.Request{
		Action: &action.Action{Type: action.StorageQueue, QueueMessage: &action.StorageQueueMessage{
			StorageAccount: account, QueueName: queue, SASToken: sasToken, Message: msg,
		}},
		IDs:          action.StaticIDs{Job: "nightly", Tag: "c0ffee0123456789", ClientRequest: "5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3"},
		CollectionID: "reports",
		ExpectedTime: time.Date(2026, 11, 21, 23, 30, 0, 0, time.FixedZone("CET", 3600)),
		Occurrence:   3,
	}
}

type element struct{ Name, Text string }

// parseEnvelope reads the XML document back with a token walk and returns
// the root name, its namespace attributes and its child elements in order.
func parseEnvelope(t *testing.T, doc string) (root string, attrs map[string]string, children []element) {
	t.Helper()
	if !strings.HasPrefix(doc, `<?xml version="1.0" encoding="utf-8"?>`) {
		t.Errorf("envelope does not start with a UTF-8 XML declaration: %.60q", doc)
	}
	d := xml.NewDecoder(strings.NewReader(doc))
	attrs = map[string]string{}
	depth := 0
	var cur *element
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("envelope is not well-formed XML: %v\n%s", err, doc)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
			switch depth {
			case 1:
				root = tok.Name.Local
				for _, a := range tok.Attr {
					attrs[a.Name.Space+":"+a.Name.Local] = a.Value
				}
			case 2:
				children = append(children, element{Name: tok.Name.Local})
				cur = &children[len(children)-1]
			default:
				t.Fatalf("unexpected nested element %s", tok.Name.Local)
			}
		case xml.CharData:
			if depth == 2 {
				cur.Text += string(tok)
			}
		case xml.EndElement:
			depth--
		}
	}
	return root, attrs, children
}
