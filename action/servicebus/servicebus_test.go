package servicebus_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/servicebus"
	"github.com/jobclock/scheduler/retry"
)

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

func topicRequest(namespace, topic, keyName, key, msg string) *action.Request {
	r := queueRequest(namespace, "", keyName, key, msg)
	r.Action = &action.Action{Type: action.ServiceBusTopic, ServiceBusTopicMessage: &action.ServiceBusTopicMessage{
		ServiceBusMessage: r.Action.ServiceBusQueueMessage.ServiceBusMessage,
		TopicPath:         topic,
	}}
	return r
}

// wantMetadata is the execution metadata of queueRequest's request.
var wantMetadata = map[string]any{
	"x-ms-scheduler-jobid":                   "nightly",
	"x-ms-scheduler-jobcollectionid":         "reports",
	"x-ms-scheduler-expected-execution-time": "2026-11-21T22:30:00Z", // 23:30 CET in UTC
	"x-ms-scheduler-execution-tag":           "c0ffee0123456789",
	"x-ms-client-request-id":                 "5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3",
}

func TestQueueMessageWithAllProperties(t *testing.T) {
	p := peer(t)
	keyName, key := p.newKey(t)
	e := servicebus.New(p.options())
	defer e.Close(context.Background())

	queue := "orders-" + randHex(3)
	const body = `{"order":42,"note":"ünïcode <&>"}`
	req := queueRequest("contoso-sb", queue, keyName, key, body)
	ttl := retry.Duration(90 * time.Second)
	sched := time.Date(2026, 11, 22, 6, 0, 0, 0, time.FixedZone("PST", -8*3600))
	req.Action.ServiceBusQueueMessage.BrokeredMessageProperties = &action.BrokeredMessageProperties{
		ContentType:             "application/json",
		CorrelationID:           "corr-1",
		ForcePersistence:        new(true),
		Label:                   "order-created",
		MessageID:               "msg-1",
		PartitionKey:            "session-9",
		ReplyTo:                 "replies",
		ReplyToSessionID:        "reply-session",
		ScheduledEnqueueTimeUtc: &sched,
		SessionID:               "session-9",
		TimeToLive:              &ttl,
		To:                      "warehouse",
		ViaPartitionKey:         "via-1",
	}
	req.Action.ServiceBusQueueMessage.CustomMessageProperties = map[string]string{
		"tenant":               "acme",
		"priority":             "high",
		"x-ms-scheduler-jobid": "spoofed", // the metadata wins
	}

	res, err := e.Execute(context.Background(), req)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if want := "ServiceBusQueue Action - Message sent to queue 'contoso-sb/" + queue + "' (message id msg-1, "; !strings.HasPrefix(res.Message, want) {
		t.Errorf("Result.Message = %q, want prefix %q", res.Message, want)
	}

	got := p.messages(t, queue)
	if len(got) != 1 {
		t.Fatalf("peer received %d messages on %s, want 1", len(got), queue)
	}
	m := got[0]
	ttlMS := int64(90000)
	want := received{
		Address: queue, MessageID: "msg-1", CorrelationID: "corr-1", ContentType: "application/json",
		Subject: "order-created", To: "warehouse", ReplyTo: "replies", GroupID: "session-9", ReplyToGroupID: "reply-session",
		TTL: &ttlMS, Body: body, BodySection: "data",
		ApplicationProperties: map[string]any{"tenant": "acme", "priority": "high"},
		MessageAnnotations: map[string]any{
			"x-opt-partition-key":          "session-9",
			"x-opt-scheduled-enqueue-time": "2026-11-22T14:00:00.000Z", // 06:00 PST
		},
	}
	want.ApplicationPropertyTypes = map[string]string{}
	for k, v := range wantMetadata {
		want.ApplicationProperties[k] = v
	}
	for k := range want.ApplicationProperties {
		want.ApplicationPropertyTypes[k] = "string"
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("message as received (-want +got):\n%s", diff)
	}
}

func TestTopicMessage(t *testing.T) {
	p := peer(t)
	keyName, key := p.newKey(t)
	e := servicebus.New(p.options())
	defer e.Close(context.Background())

	topic := "events-" + randHex(3)
	req := topicRequest("contoso-sb", topic, keyName, key, "hello topic")
	req.Action.ServiceBusTopicMessage.BrokeredMessageProperties = &action.BrokeredMessageProperties{Label: "greeting"}
	req.Action.ServiceBusTopicMessage.CustomMessageProperties = map[string]string{"region": "westeurope"}
	res, err := e.Execute(context.Background(), req)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if want := "ServiceBusTopic Action - Message sent to topic 'contoso-sb/" + topic + "'"; !strings.HasPrefix(res.Message, want) {
		t.Errorf("Result.Message = %q, want prefix %q", res.Message, want)
	}
	got := p.messages(t, topic)
	if len(got) != 1 {
		t.Fatalf("peer received %d messages on %s, want 1", len(got), topic)
	}
	wantProps := map[string]any{"region": "westeurope"}
	for k, v := range wantMetadata {
		wantProps[k] = v
	}
	if diff := cmp.Diff(wantProps, got[0].ApplicationProperties); diff != "" {
		t.Errorf("application properties (-want +got):\n%s", diff)
	}
	// No messageId given: the attempt's client request id stands in.
	if got[0].Body != "hello topic" || got[0].Subject != "greeting" || got[0].MessageID != req.ClientRequestID() {
		t.Errorf("received body %q subject %q message id %q, want %q, %q, %q",
			got[0].Body, got[0].Subject, got[0].MessageID, "hello topic", "greeting", req.ClientRequestID())
	}
}

func TestTransportTypes(t *testing.T) {
	p := peer(t)
	keyName, key := p.newKey(t)
	e := servicebus.New(p.options())
	defer e.Close(context.Background())
	queue := "transport-" + randHex(3)
	for _, tt := range []action.TransportType{"", action.TransportNotSpecified, action.TransportNetMessaging, action.TransportAMQP, "amqp"} {
		req := queueRequest("contoso-sb", queue, keyName, key, "via "+string(tt))
		req.Action.ServiceBusQueueMessage.TransportType = tt
		if _, err := e.Execute(context.Background(), req); err != nil {
			t.Errorf("Execute with transportType %q: %v", tt, err)
		}
	}
	if n := len(p.messages(t, queue)); n != 5 {
		t.Errorf("peer received %d messages, want 5", n)
	}
}

func TestWrongKey(t *testing.T) {
	p := peer(t)
	keyName, _ := p.newKey(t)
	e := servicebus.New(p.options())
	defer e.Close(context.Background())
	queue := "secure-" + randHex(3)

	for _, tt := range []struct{ name, keyName, key string }{
		{"wrong key", keyName, "d3Jvbmcga2V5"},
		{"unknown key name", "no-such-policy", "d3Jvbmcga2V5"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res, err := e.Execute(context.Background(), queueRequest("contoso-sb", queue, tt.keyName, tt.key, "x"))
			if err == nil {
				t.Fatal("Execute succeeded with a wrong key")
			}
			t.Logf("error: %v", err)
			for _, w := range []string{"key '" + tt.keyName + "' refused", "401", "namespace 'contoso-sb'"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), tt.key) {
				t.Errorf("error %q shows the key", err)
			}
			var sbErr *azservicebus.Error
			if !errors.As(err, &sbErr) || sbErr.Code != azservicebus.CodeUnauthorizedAccess {
				t.Errorf("error does not wrap an azservicebus.Error with CodeUnauthorizedAccess: %v", err)
			}
			if !strings.HasPrefix(res.Message, "ServiceBusQueue Action - key '") {
				t.Errorf("Result.Message = %q", res.Message)
			}
			// Refused at once, not retried until the timeout.
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("Execute took %v to report a wrong key", d)
			}
		})
	}
	if n := len(p.messages(t, queue)); n != 0 {
		t.Errorf("peer received %d messages with a wrong key, want 0", n)
	}
}

func TestEntityNotFound(t *testing.T) {
	p := peer(t)
	keyName, key := p.newKey(t)
	e := servicebus.New(p.options())
	defer e.Close(context.Background())
	// The peer treats entities named missing-* as nonexistent.
	queue := "missing-" + randHex(3)
	start := time.Now()
	_, err := e.Execute(context.Background(), queueRequest("contoso-sb", queue, keyName, key, "x"))
	want := "queue '" + queue + "' in namespace 'contoso-sb' does not exist"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Execute error = %v, want it to say %q", err, want)
	}
	t.Logf("error: %v", err)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Execute took %v to report a missing queue", d)
	}

	_, err = e.Execute(context.Background(), topicRequest("contoso-sb", queue, keyName, key, "x"))
	if err == nil || !strings.Contains(err.Error(), "topic '"+queue+"'") {
		t.Fatalf("Execute (topic) error = %v, want a missing topic", err)
	}
}

func TestMessageTooLarge(t *testing.T) {
	p := peer(t)
	keyName, key := p.newKey(t)
	e := servicebus.New(p.options())
	defer e.Close(context.Background())
	queue := "big-" + randHex(3)
	// The peer advertises the Standard tier's 256 KiB maximum.
	_, err := e.Execute(context.Background(), queueRequest("contoso-sb", queue, keyName, key, strings.Repeat("x", 300<<10)))
	if err == nil || !strings.Contains(err.Error(), "is too large for queue '"+queue+"'") {
		t.Fatalf("Execute error = %v, want a message-too-large error", err)
	}
	t.Logf("error: %v", err)
	if !errors.Is(err, azservicebus.ErrMessageTooLarge) {
		t.Errorf("error does not wrap azservicebus.ErrMessageTooLarge: %v", err)
	}
	// The same sender still works for a message that fits.
	if _, err := e.Execute(context.Background(), queueRequest("contoso-sb", queue, keyName, key, strings.Repeat("x", 200<<10))); err != nil {
		t.Fatalf("Execute(200 KiB) after a too-large message: %v", err)
	}
	if got := p.messages(t, queue); len(got) != 1 || len(got[0].Body) != 200<<10 {
		t.Errorf("peer received %d messages, want the 200 KiB one only", len(got))
	}
}

func TestClientReuse(t *testing.T) {
	p := peer(t)
	keyA, secretA := p.newKey(t)
	keyB, secretB := p.newKey(t)
	e := servicebus.New(p.options())
	defer e.Close(context.Background())
	q1, q2, topic := "reuse-"+randHex(3), "reuse-"+randHex(3), "reuse-"+randHex(3)

	for i := range 5 {
		if _, err := e.Execute(context.Background(), queueRequest("contoso-sb", q1, keyA, secretA, "occurrence")); err != nil {
			t.Fatalf("Execute #%d: %v", i, err)
		}
	}
	if _, err := e.Execute(context.Background(), queueRequest("contoso-sb", q2, keyA, secretA, "other queue")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Execute(context.Background(), topicRequest("contoso-sb", topic, keyA, secretA, "topic")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Execute(context.Background(), queueRequest("contoso-sb", q1, keyB, secretB, "other key")); err != nil {
		t.Fatal(err)
	}
	s := p.stats(t)
	if s.ConnectionsByKey[keyA] != 1 || s.ConnectionsByKey[keyB] != 1 {
		t.Errorf("connections by key = %v, want 1 for %s (7 sends) and 1 for %s", s.ConnectionsByKey, keyA, keyB)
	}
	// One sender link per entity and key: q1 twice (keys A and B), the others once.
	want := map[string]int{q1: 2, q2: 1, topic: 1}
	for addr, n := range want {
		if s.Attaches[addr] != n {
			t.Errorf("sender attaches on %s = %d, want %d", addr, s.Attaches[addr], n)
		}
	}
	if n := len(p.messages(t, q1)); n != 6 {
		t.Errorf("peer received %d messages on %s, want 6", n, q1)
	}
}

func TestClientEvictionAndClose(t *testing.T) {
	p := peer(t)
	keyA, secretA := p.newKey(t)
	keyB, secretB := p.newKey(t)
	opts := p.options()
	opts.MaxClients = 1
	e := servicebus.New(opts)
	queue := "evict-" + randHex(3)
	send := func(k, s string) {
		t.Helper()
		if _, err := e.Execute(context.Background(), queueRequest("contoso-sb", queue, k, s, "x")); err != nil {
			t.Fatal(err)
		}
	}
	send(keyA, secretA)
	send(keyB, secretB) // evicts A's client
	send(keyA, secretA) // reconnects with A, evicts B's client
	if got := p.stats(t).ConnectionsByKey[keyA]; got != 2 {
		t.Errorf("connections for %s = %d, want 2 (its client was evicted by MaxClients 1)", keyA, got)
	}
	if err := e.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	// Every connection of the executor is closed (other tests have closed
	// theirs before this one ends).
	deadline := time.Now().Add(2 * time.Second)
	for p.stats(t).ConnectionsOpen != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := p.stats(t).ConnectionsOpen; n != 0 {
		t.Errorf("peer has %d open connections after Close, want 0", n)
	}
	if _, err := e.Execute(context.Background(), queueRequest("contoso-sb", queue, keyA, secretA, "x")); !errors.Is(err, servicebus.ErrClosed) {
		t.Errorf("Execute after Close = %v, want ErrClosed", err)
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	e := servicebus.New(&servicebus.Options{Endpoint: func(string) string { return addr }, UseDevelopmentEmulator: true})
	defer e.Close(context.Background())
	start := time.Now()
	_, err = e.Execute(context.Background(), queueRequest("contoso-sb", "orders", "policy", "c2VjcmV0", "x"))
	if err == nil || !strings.Contains(err.Error(), "namespace 'contoso-sb' unreachable at "+addr) {
		t.Fatalf("Execute error = %v, want unreachable at %s", err, addr)
	}
	t.Logf("error: %v", err)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Execute took %v to give up on a refused connection", d)
	}
}

func TestTimeout(t *testing.T) {
	// Accepts connections and never answers the AMQP handshake.
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
	e := servicebus.New(&servicebus.Options{Endpoint: func(string) string { return l.Addr().String() }, UseDevelopmentEmulator: true, Timeout: 300 * time.Millisecond})
	defer e.Close(context.Background())
	start := time.Now()
	_, err = e.Execute(context.Background(), queueRequest("contoso-sb", "orders", "policy", "c2VjcmV0", "x"))
	if err == nil || !strings.Contains(err.Error(), "no answer from namespace 'contoso-sb'") {
		t.Fatalf("Execute error = %v, want no answer", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Execute took %v with a 300ms timeout", d)
	}
}

func TestValidation(t *testing.T) {
	// Nothing listens on port 1: a request that got past validation would
	// fail as unreachable instead of with a FieldError.
	e := servicebus.New(&servicebus.Options{Endpoint: func(string) string { return "127.0.0.1:1" }, UseDevelopmentEmulator: true})
	defer e.Close(context.Background())
	ttl0 := retry.Duration(0)
	tests := []struct {
		name       string
		edit       func(r *action.Request)
		wantPath   string
		wantReason string
	}{
		{"namespace missing", func(r *action.Request) { r.Action.ServiceBusQueueMessage.Namespace = "" },
			"action.serviceBusQueueMessage.namespace", "required"},
		{"namespace host name", func(r *action.Request) { r.Action.ServiceBusQueueMessage.Namespace = "contoso.servicebus.windows.net" },
			"action.serviceBusQueueMessage.namespace", "host name"},
		{"namespace short", func(r *action.Request) { r.Action.ServiceBusQueueMessage.Namespace = "abc" },
			"action.serviceBusQueueMessage.namespace", "6 to 50"},
		{"namespace digit first", func(r *action.Request) { r.Action.ServiceBusQueueMessage.Namespace = "1contoso" },
			"action.serviceBusQueueMessage.namespace", "start with a letter"},
		{"queue missing", func(r *action.Request) { r.Action.ServiceBusQueueMessage.QueueName = "" },
			"action.serviceBusQueueMessage.queueName", "required"},
		{"queue bad char", func(r *action.Request) { r.Action.ServiceBusQueueMessage.QueueName = "my queue" },
			"action.serviceBusQueueMessage.queueName", `' '`},
		{"transport", func(r *action.Request) { r.Action.ServiceBusQueueMessage.TransportType = "Http" },
			"action.serviceBusQueueMessage.transportType", "NotSpecified, NetMessaging or AMQP"},
		{"no authentication", func(r *action.Request) { r.Action.ServiceBusQueueMessage.Authentication = nil },
			"action.serviceBusQueueMessage.authentication", "required"},
		{"auth type", func(r *action.Request) { r.Action.ServiceBusQueueMessage.Authentication.Type = "Basic" },
			"action.serviceBusQueueMessage.authentication.type", "SharedAccessKey"},
		{"no key name", func(r *action.Request) { r.Action.ServiceBusQueueMessage.Authentication.SASKeyName = "" },
			"action.serviceBusQueueMessage.authentication.sasKeyName", "required"},
		{"no key", func(r *action.Request) { r.Action.ServiceBusQueueMessage.Authentication.SASKey = "" },
			"action.serviceBusQueueMessage.authentication.sasKey", "required"},
		{"key with semicolon", func(r *action.Request) { r.Action.ServiceBusQueueMessage.Authentication.SASKey = "a;b" },
			"action.serviceBusQueueMessage.authentication.sasKey", "';'"},
		{"session and partition differ", func(r *action.Request) {
			r.Action.ServiceBusQueueMessage.BrokeredMessageProperties = &action.BrokeredMessageProperties{SessionID: "s1", PartitionKey: "p1"}
		}, "action.serviceBusQueueMessage.brokeredMessageProperties.partitionKey", "equal"},
		{"message id too long", func(r *action.Request) {
			r.Action.ServiceBusQueueMessage.BrokeredMessageProperties = &action.BrokeredMessageProperties{MessageID: strings.Repeat("m", 129)}
		}, "action.serviceBusQueueMessage.brokeredMessageProperties.messageId", "at most 128"},
		{"zero ttl", func(r *action.Request) {
			r.Action.ServiceBusQueueMessage.BrokeredMessageProperties = &action.BrokeredMessageProperties{TimeToLive: &ttl0}
		}, "action.serviceBusQueueMessage.brokeredMessageProperties.timeToLive", "positive"},
		{"error action path", func(r *action.Request) { r.ErrorAction = true; r.Action.ServiceBusQueueMessage.QueueName = "" },
			"action.errorAction.serviceBusQueueMessage.queueName", "required"},
		{"queue type without payload", func(r *action.Request) { r.Action.ServiceBusQueueMessage = nil },
			"action.serviceBusQueueMessage", "required"},
		{"topic type without payload", func(r *action.Request) { r.Action.Type = action.ServiceBusTopic },
			"action.serviceBusTopicMessage", "required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := queueRequest("contoso-sb", "orders", "policy", "c2VjcmV0", "x")
			tt.edit(req)
			_, err := e.Execute(context.Background(), req)
			var fe *servicebus.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Execute error = %v, want a *FieldError", err)
			}
			if fe.Path != tt.wantPath || !strings.Contains(fe.Reason, tt.wantReason) {
				t.Errorf("FieldError = %q, want path %s and reason containing %q", fe, tt.wantPath, tt.wantReason)
			}
			if strings.Contains(err.Error(), "c2VjcmV0") {
				t.Errorf("error %q shows the key", err)
			}
		})
	}
	t.Run("topic path", func(t *testing.T) {
		_, err := e.Execute(context.Background(), topicRequest("contoso-sb", "", "policy", "k", "x"))
		var fe *servicebus.FieldError
		if !errors.As(err, &fe) || fe.Path != "action.serviceBusTopicMessage.topicPath" {
			t.Fatalf("Execute error = %v, want a FieldError on action.serviceBusTopicMessage.topicPath", err)
		}
	})
}

func TestRegister(t *testing.T) {
	var reg action.Registry
	e := servicebus.Register(&reg, nil)
	defer e.Close(context.Background())
	for _, typ := range []action.Type{action.ServiceBusQueue, action.ServiceBusTopic} {
		if got, ok := reg.Lookup(typ); !ok || got != e {
			t.Errorf("Lookup(%s) = %v, %v; want the registered executor", typ, got, ok)
		}
	}
	if got := servicebus.DefaultEndpoint("contoso-sb"); got != "contoso-sb.servicebus.windows.net" {
		t.Errorf("DefaultEndpoint = %q", got)
	}
}

func TestConcurrentSendsWithEviction(t *testing.T) {
	p := peer(t)
	type cred struct{ name, key string }
	var creds []cred
	for range 4 {
		n, k := p.newKey(t)
		creds = append(creds, cred{n, k})
	}
	opts := p.options()
	opts.MaxClients = 2 // fewer than the keys: clients are evicted while others send
	e := servicebus.New(opts)
	queue := "concurrent-" + randHex(3)
	errs := make(chan error, 40)
	for i := range 40 {
		go func() {
			c := creds[i%len(creds)]
			_, err := e.Execute(context.Background(), queueRequest("contoso-sb", queue, c.name, c.key, "x"))
			errs <- err
		}()
	}
	for range 40 {
		if err := <-errs; err != nil {
			t.Errorf("Execute: %v", err)
		}
	}
	if err := e.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	if n := len(p.messages(t, queue)); n != 40 {
		t.Errorf("peer received %d messages, want 40", n)
	}
}
