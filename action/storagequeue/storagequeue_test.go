package storagequeue_test

import (
	"context"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/sas"
	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/storagequeue"
)

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

func TestPlainTextArrivesExactly(t *testing.T) {
	p := azurite(t)
	q := p.newQueue(t)
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base)})
	defer e.Close()

	const msg = `{"report":"nightly"} <xml> & ünïcode "quotes" 'single' 🚀` + "\ttab\nline\r\nCRLF"
	res, err := e.Execute(context.Background(), request(p.account, q, p.addSAS(t, q), msg))
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	got := p.receive(t, q)
	if len(got) != 1 {
		t.Fatalf("queue has %d messages, want 1", len(got))
	}
	if *got[0].MessageText != msg {
		t.Errorf("message text = %q, want %q", *got[0].MessageText, msg)
	}
	wantPrefix := "StorageQueue Action - Message queued to '" + p.account + "/" + q + "' (id " + *got[0].MessageID + ","
	if !strings.HasPrefix(res.Message, wantPrefix) {
		t.Errorf("Result.Message = %q, want prefix %q", res.Message, wantPrefix)
	}
}

func TestSASWithoutLeadingQuestionMark(t *testing.T) {
	p := azurite(t)
	q := p.newQueue(t)
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base)})
	defer e.Close()
	tok := strings.TrimPrefix(p.addSAS(t, q), "?")
	if _, err := e.Execute(context.Background(), request(p.account, q, tok, "x")); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if got := p.receive(t, q); len(got) != 1 || *got[0].MessageText != "x" {
		t.Fatalf("queue content = %v, want one message \"x\"", got)
	}
}

// element is one child of the envelope, in document order.
type element struct{ Name, Text string }

// parseEnvelope reads the XML document back with a token walk, independent
// of the executor's own types, and returns the root name, its namespace
// attributes and its child elements in order.
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

func TestEnvelope(t *testing.T) {
	p := azurite(t)
	q := p.newQueue(t)
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base), Envelope: true, Region: "West Europe"})
	defer e.Close()

	const msg = "payload <with> & markup\r\n\"quoted\" ünïcode"
	req := request(p.account, q, p.addSAS(t, q), msg)
	if _, err := e.Execute(context.Background(), req); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	got := p.receive(t, q)
	if len(got) != 1 {
		t.Fatalf("queue has %d messages, want 1", len(got))
	}
	root, attrs, children := parseEnvelope(t, *got[0].MessageText)
	if root != "StorageQueueMessage" {
		t.Errorf("root element = %q, want StorageQueueMessage", root)
	}
	wantAttrs := map[string]string{
		"xmlns:xsd": "http://www.w3.org/2001/XMLSchema",
		"xmlns:xsi": "http://www.w3.org/2001/XMLSchema-instance",
	}
	if diff := cmp.Diff(wantAttrs, attrs); diff != "" {
		t.Errorf("root attributes (-want +got):\n%s", diff)
	}
	want := []element{
		{"ExecutionTag", "c0ffee0123456789"},
		{"ClientRequestId", "5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3"},
		{"ExpectedExecutionTime", "2026-11-21T22:30:00Z"}, // 23:30 CET in UTC
		{"SchedulerJobId", "nightly"},
		{"SchedulerJobCollectionId", "reports"},
		{"Region", "West Europe"},
		{"Message", msg},
	}
	if diff := cmp.Diff(want, children); diff != "" {
		t.Errorf("envelope elements (-want +got):\n%s", diff)
	}
}

func TestBase64(t *testing.T) {
	p := azurite(t)
	// A control character XML cannot carry: only base64 gets it through.
	const msg = "bytes \x01\x02 and ünïcode <&>"
	t.Run("text", func(t *testing.T) {
		q := p.newQueue(t)
		e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base), Base64: true})
		defer e.Close()
		if _, err := e.Execute(context.Background(), request(p.account, q, p.addSAS(t, q), msg)); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		got := p.receive(t, q)
		if len(got) != 1 {
			t.Fatalf("queue has %d messages, want 1", len(got))
		}
		dec, err := base64.StdEncoding.DecodeString(*got[0].MessageText)
		if err != nil {
			t.Fatalf("message %q is not base64: %v", *got[0].MessageText, err)
		}
		if string(dec) != msg {
			t.Errorf("decoded message = %q, want %q", dec, msg)
		}
	})
	t.Run("envelope", func(t *testing.T) {
		q := p.newQueue(t)
		e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base), Base64: true, Envelope: true})
		defer e.Close()
		const msg = "enveloped & encoded"
		if _, err := e.Execute(context.Background(), request(p.account, q, p.addSAS(t, q), msg)); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		got := p.receive(t, q)
		if len(got) != 1 {
			t.Fatalf("queue has %d messages, want 1", len(got))
		}
		dec, err := base64.StdEncoding.DecodeString(*got[0].MessageText)
		if err != nil {
			t.Fatalf("message is not base64: %v", err)
		}
		_, _, children := parseEnvelope(t, string(dec))
		if len(children) != 7 || children[6] != (element{"Message", msg}) || children[0] != (element{"ExecutionTag", "c0ffee0123456789"}) {
			t.Errorf("decoded envelope elements = %v, want 7 with ExecutionTag first and Message %q last", children, msg)
		}
	})
}

func TestControlCharacterWithoutBase64IsRefused(t *testing.T) {
	p := azurite(t)
	q := p.newQueue(t)
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base)})
	defer e.Close()
	_, err := e.Execute(context.Background(), request(p.account, q, p.addSAS(t, q), "a\x01b"))
	var fe *storagequeue.FieldError
	if !errors.As(err, &fe) || fe.Path != "action.queueMessage.message" || !strings.Contains(fe.Reason, "U+0001") {
		t.Fatalf("Execute error = %v, want a FieldError on action.queueMessage.message naming U+0001", err)
	}
	if got := p.receive(t, q); len(got) != 0 {
		t.Errorf("queue has %d messages, want none", len(got))
	}
}

func TestControlCharacterInEnvelopeIsRefused(t *testing.T) {
	// Nothing is sent: the endpoint is never contacted.
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle("http://127.0.0.1:1"), Envelope: true, Base64: true})
	defer e.Close()
	_, err := e.Execute(context.Background(), request("acct1", "orders", "?se=2099-01-01&sp=a&sig=x", "a\x1bb"))
	var fe *storagequeue.FieldError
	if !errors.As(err, &fe) || fe.Path != "action.queueMessage.message" || !strings.Contains(fe.Reason, "envelope") {
		t.Fatalf("Execute error = %v, want a FieldError on action.queueMessage.message about the envelope", err)
	}
}

func TestSizeLimit(t *testing.T) {
	p := azurite(t)
	q := p.newQueue(t)
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base)})
	defer e.Close()
	tok := p.addSAS(t, q)

	// 65 536 bytes is the limit: 32 768 two-byte runes fill it exactly.
	full := strings.Repeat("é", 32768)
	if _, err := e.Execute(context.Background(), request(p.account, q, tok, full)); err != nil {
		t.Fatalf("Execute(64 KiB message): %v", err)
	}
	if got := p.receive(t, q); len(got) != 1 || *got[0].MessageText != full {
		t.Fatalf("64 KiB message did not arrive intact (%d messages)", len(got))
	}

	_, err := e.Execute(context.Background(), request(p.account, q, tok, full+"x"))
	var fe *storagequeue.FieldError
	if !errors.As(err, &fe) || fe.Path != "action.queueMessage.message" || !strings.Contains(fe.Reason, "65537 bytes") {
		t.Fatalf("Execute(64 KiB + 1) error = %v, want a FieldError saying 65537 bytes", err)
	}

	// Base64 grows 49 152 bytes to exactly 65 536; one more byte is too many.
	b64 := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base), Base64: true})
	defer b64.Close()
	if _, err := b64.Execute(context.Background(), request(p.account, q, tok, strings.Repeat("a", 49152))); err != nil {
		t.Fatalf("Execute(49152 bytes, base64): %v", err)
	}
	_, err = b64.Execute(context.Background(), request(p.account, q, tok, strings.Repeat("a", 49153)))
	if !errors.As(err, &fe) || !strings.Contains(fe.Reason, "base64") || !strings.Contains(fe.Reason, "65540 bytes") {
		t.Fatalf("Execute(49153 bytes, base64) error = %v, want a FieldError naming base64 and 65540 bytes", err)
	}
	if got := p.receive(t, q); len(got) != 1 {
		t.Errorf("queue has %d messages, want only the one that fit", len(got))
	}
}

func TestSASRefused(t *testing.T) {
	p := azurite(t)
	q := p.newQueue(t)
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base)})
	defer e.Close()

	otherKey, _ := azqueue.NewSharedKeyCredential(p.account, base64.StdEncoding.EncodeToString([]byte("not the account key, 32 bytes!!!")))
	httpsOnly, err := sas.QueueSignatureValues{
		Protocol: sas.ProtocolHTTPS, ExpiryTime: time.Now().Add(time.Hour).UTC(),
		Permissions: (&sas.QueuePermissions{Add: true}).String(), QueueName: q,
	}.SignWithSharedKey(p.cred)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		sasToken string
		want     []string
	}{
		{"wrong key", p.sas(t, q, sas.QueuePermissions{Add: true}, time.Now().Add(time.Hour), otherKey),
			[]string{"SAS token refused", "AuthenticationFailed", "signature does not match", "'" + p.account + "/" + q + "'"}},
		{"for another queue", p.addSAS(t, "someotherqueue"),
			[]string{"SAS token refused", "AuthenticationFailed"}},
		{"https only", "?" + httpsOnly.Encode(),
			[]string{"SAS token refused", "AuthorizationProtocolMismatch", "spr"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := e.Execute(context.Background(), request(p.account, q, tt.sasToken, "x"))
			if err == nil {
				t.Fatal("Execute succeeded, want a refused SAS token")
			}
			t.Logf("error: %v", err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "sig=") {
				t.Errorf("error %q shows the signature", err)
			}
			var re *azcore.ResponseError
			if !errors.As(err, &re) || re.StatusCode != http.StatusForbidden {
				t.Errorf("error does not wrap a 403 *azcore.ResponseError: %v", err)
			}
			if res == nil || !strings.HasPrefix(res.Message, "StorageQueue Action - SAS token refused") {
				t.Errorf("Result = %+v, want a message about the refused token", res)
			}
		})
	}
	if got := p.receive(t, q); len(got) != 0 {
		t.Errorf("queue has %d messages, want none", len(got))
	}
}

func TestSASCheckedBeforeSending(t *testing.T) {
	p := azurite(t)
	q := p.newQueue(t)
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base)})
	defer e.Close()
	expired := p.sas(t, q, sas.QueuePermissions{Add: true}, time.Now().Add(-time.Minute), nil)
	readOnly := p.sas(t, q, sas.QueuePermissions{Read: true, Process: true}, time.Now().Add(time.Hour), nil)

	for _, tt := range []struct{ name, tok, want string }{
		{"expired", expired, "expired at"},
		{"no add permission", readOnly, "add permission (sp=rp)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.Execute(context.Background(), request(p.account, q, tt.tok, "x"))
			var fe *storagequeue.FieldError
			if !errors.As(err, &fe) || fe.Path != "action.queueMessage.sasToken" || !strings.Contains(fe.Reason, tt.want) {
				t.Fatalf("Execute error = %v, want a FieldError on action.queueMessage.sasToken containing %q", err, tt.want)
			}
		})
	}
}

func TestQueueNotFound(t *testing.T) {
	p := azurite(t)
	q := p.queueName(t) // never created
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base)})
	defer e.Close()
	_, err := e.Execute(context.Background(), request(p.account, q, p.addSAS(t, q), "x"))
	want := "queue '" + q + "' does not exist in account '" + p.account + "'"
	t.Logf("error: %v", err)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Execute error = %v, want it to say %q", err, want)
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusNotFound || re.ErrorCode != "QueueNotFound" {
		t.Errorf("error does not wrap a 404 QueueNotFound: %v", err)
	}
}

func TestClientRequestIDHeader(t *testing.T) {
	p := azurite(t)
	q := p.newQueue(t)
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle(p.base)})
	defer e.Close()
	var resp *http.Response
	ctx := policy.WithCaptureResponse(context.Background(), &resp)
	req := request(p.account, q, p.addSAS(t, q), "x")
	if _, err := e.Execute(ctx, req); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	// The queue service echoes the request's x-ms-client-request-id.
	if got := resp.Header.Get("x-ms-client-request-id"); got != req.ClientRequestID() {
		t.Errorf("x-ms-client-request-id = %q, want %q", got, req.ClientRequestID())
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle("http://" + addr)})
	defer e.Close()
	tok := "?sv=2020-02-10&se=2099-01-01T00%3A00%3A00Z&sp=a&sig=c2VjcmV0c2lnbmF0dXJl"
	start := time.Now()
	_, err = e.Execute(context.Background(), request("devstoreaccount1", "q-1", tok, "x"))
	if err == nil || !strings.Contains(err.Error(), "unreachable") || !strings.Contains(err.Error(), addr) {
		t.Fatalf("Execute error = %v, want an unreachable error naming %s", err, addr)
	}
	t.Logf("error: %v", err)
	if strings.Contains(err.Error(), "c2VjcmV0c2lnbmF0dXJl") {
		t.Errorf("error %q shows the SAS signature", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Execute took %v to give up on a refused connection, want well under 5s", d)
	}
}

func TestTimeout(t *testing.T) {
	// A server that accepts connections and never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle("http://" + l.Addr().String()), Timeout: 300 * time.Millisecond})
	defer e.Close()
	tok := "?se=2099-01-01&sp=a&sig=abc"
	start := time.Now()
	_, err = e.Execute(context.Background(), request("devstoreaccount1", "q-1", tok, "x"))
	if err == nil || !strings.Contains(err.Error(), "no answer from the queue service") {
		t.Fatalf("Execute error = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Execute took %v with a 300ms timeout", d)
	}
}

func TestValidation(t *testing.T) {
	// Nothing listens on port 1: any request that got past validation would
	// fail as unreachable instead of with a FieldError.
	e := storagequeue.New(&storagequeue.Options{Endpoint: storagequeue.PathStyle("http://127.0.0.1:1")})
	defer e.Close()
	const tok = "?se=2099-01-01T00:00:00Z&sp=a&sig=abc"
	tests := []struct {
		name                  string
		account, queue, token string
		errorAction           bool
		wantPath, wantReason  string
	}{
		{"queue too short", "acct1", "ab", tok, false, "action.queueMessage.queueName", "3 to 63"},
		{"queue too long", "acct1", strings.Repeat("a", 64), tok, false, "action.queueMessage.queueName", "3 to 63"},
		{"queue uppercase", "acct1", "Orders", tok, false, "action.queueMessage.queueName", "lowercase"},
		{"queue underscore", "acct1", "my_queue", tok, false, "action.queueMessage.queueName", `'_'`},
		{"queue leading hyphen", "acct1", "-orders", tok, false, "action.queueMessage.queueName", "hyphen"},
		{"queue trailing hyphen", "acct1", "orders-", tok, false, "action.queueMessage.queueName", "hyphen"},
		{"queue double hyphen", "acct1", "my--orders", tok, false, "action.queueMessage.queueName", "consecutive"},
		{"queue missing", "acct1", "", tok, false, "action.queueMessage.queueName", "required"},
		{"account missing", "", "orders", tok, false, "action.queueMessage.storageAccount", "required"},
		{"account uppercase", "MyAcct", "orders", tok, false, "action.queueMessage.storageAccount", "lowercase"},
		{"sas missing", "acct1", "orders", "", false, "action.queueMessage.sasToken", "required"},
		{"sas without sig", "acct1", "orders", "?sv=2020-02-10&sp=a", false, "action.queueMessage.sasToken", "no sig"},
		{"sas is a URL", "acct1", "orders", "https://acct1.queue.core.windows.net/orders?sp=a&sig=x", false, "action.queueMessage.sasToken", "URL"},
		{"sas unparseable", "acct1", "orders", "?sig=%zz", false, "action.queueMessage.sasToken", "query string"},
		{"sas bad expiry", "acct1", "orders", "?se=tomorrow&sig=x", false, "action.queueMessage.sasToken", "not a date"},
		{"sas expired", "acct1", "orders", "?se=2020-01-01T00:00:00Z&sig=x", false, "action.queueMessage.sasToken", "expired at 2020-01-01T00:00:00Z"},
		{"error action path", "acct1", "ab", tok, true, "action.errorAction.queueMessage.queueName", "3 to 63"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request(tt.account, tt.queue, tt.token, "x")
			req.ErrorAction = tt.errorAction
			_, err := e.Execute(context.Background(), req)
			var fe *storagequeue.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Execute error = %v, want a *FieldError", err)
			}
			if fe.Path != tt.wantPath || !strings.Contains(fe.Reason, tt.wantReason) {
				t.Errorf("FieldError = %q, want path %s and reason containing %q", fe, tt.wantPath, tt.wantReason)
			}
			if strings.Contains(err.Error(), "sig=abc") || strings.Contains(err.Error(), "sig=x") {
				t.Errorf("error %q shows the SAS token", err)
			}
		})
	}

	t.Run("all problems at once", func(t *testing.T) {
		_, err := e.Execute(context.Background(), request("A", "B", "", "x"))
		for _, p := range []string{"storageAccount", "queueName", "sasToken"} {
			if err == nil || !strings.Contains(err.Error(), "action.queueMessage."+p) {
				t.Errorf("error %v does not name %s", err, p)
			}
		}
	})
	t.Run("no queueMessage", func(t *testing.T) {
		_, err := e.Execute(context.Background(), &action.Request{Action: &action.Action{Type: action.StorageQueue}})
		var fe *storagequeue.FieldError
		if !errors.As(err, &fe) || fe.Path != "action.queueMessage" {
			t.Fatalf("Execute error = %v, want a FieldError on action.queueMessage", err)
		}
	})
}

func TestCloseAndRegister(t *testing.T) {
	var reg action.Registry
	e := storagequeue.Register(&reg, nil)
	if got, ok := reg.Lookup(action.StorageQueue); !ok || got != e {
		t.Fatalf("Lookup(StorageQueue) = %v, %v; want the registered executor", got, ok)
	}
	e.Close()
	_, err := e.Execute(context.Background(), request("acct1", "orders", "?se=2099-01-01&sp=a&sig=x", "x"))
	if !errors.Is(err, storagequeue.ErrClosed) {
		t.Fatalf("Execute after Close = %v, want ErrClosed", err)
	}
}

func TestDefaultEndpoint(t *testing.T) {
	if got, want := storagequeue.DefaultEndpoint("acct1"), "https://acct1.queue.core.windows.net/"; got != want {
		t.Errorf("DefaultEndpoint = %q, want %q", got, want)
	}
	if got, want := storagequeue.HostSuffix("queue.core.chinacloudapi.cn")("acct1"), "https://acct1.queue.core.chinacloudapi.cn/"; got != want {
		t.Errorf("HostSuffix = %q, want %q", got, want)
	}
	if got, want := storagequeue.PathStyle("http://127.0.0.1:10001/")("devstoreaccount1"), "http://127.0.0.1:10001/devstoreaccount1/"; got != want {
		t.Errorf("PathStyle = %q, want %q", got, want)
	}
}
