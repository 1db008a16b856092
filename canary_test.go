package scheduler_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"software.sslmate.com/src/go-pkcs12"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/azure"
	httpaction "github.com/jobclock/scheduler/action/http"
	"github.com/jobclock/scheduler/action/servicebus"
	"github.com/jobclock/scheduler/action/storagequeue"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// syncWriter is a log destination shared by goroutines.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestNoSecretInTelemetry puts a job of every kind of authentication over
// the REST API, each with a canary in its secrets (password, pfx, OAuth
// secret, SAS token, Service Bus key), runs them with the real executors
// (every attempt fails, as failures say most), and searches every span,
// metric and log record for the canaries.
func TestNoSecretInTelemetry(t *testing.T) {
	const canary = "CANARY7f3a9"
	target := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "oauth2") {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		http.Error(w, "nope", http.StatusInternalServerError)
	}))
	defer target.Close()
	pfxPassword := "pfx-" + canary
	pfx := canaryPfx(t, pfxPassword)
	basicHeader := base64.StdEncoding.EncodeToString([]byte("alice:pw-" + canary))
	secrets := []string{canary, pfx, basicHeader}

	o := newOtel()
	var logs syncWriter
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reg := &action.Registry{}
	web := httpaction.New(&httpaction.Options{Client: target.Client(), Timeout: 5 * time.Second})
	reg.Register(action.HTTP, web)
	reg.Register(action.HTTPS, web)
	azure.Register(reg, &azure.Options{
		StorageQueue: &storagequeue.Options{Endpoint: storagequeue.PathStyle("http://127.0.0.1:1"), Envelope: true, Timeout: 5 * time.Second},
		ServiceBus:   &servicebus.Options{Endpoint: func(string) string { return "127.0.0.1:1" }, UseDevelopmentEmulator: true, Timeout: 5 * time.Second},
	})
	defer reg.Close(context.Background())
	done := make(chan scheduler.HistoryEntry, 20)
	cfg := o.config(scheduler.Config{Logger: logger, Executors: reg, PollInterval: 50 * time.Millisecond,
		MetricsByJob: true, OnHistory: func(h scheduler.HistoryEntry) { done <- h }})
	s, err := scheduler.New(memory.New(), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	api := httptest.NewServer(httpapi.New(s, &httpapi.Options{Logger: logger, TracerProvider: o.tp, MeterProvider: o.mp}))
	defer api.Close()
	c := httpapi.NewClient(api.URL, nil)
	ref := httpapi.CollectionRef{Subscription: "sub", ResourceGroup: "rg", Collection: "jc"}
	if _, _, err := c.PutCollection(ctx, ref, nil, nil); err != nil {
		t.Fatal(err)
	}
	none := `"retryPolicy": {"retryType": "None"}`
	jobs := map[string]string{
		"basic": fmt.Sprintf(`{"type": "Https", "request": {"uri": %q, "method": "POST",
			"authentication": {"type": "Basic", "username": "alice", "password": "pw-%s"}}, %s}`, target.URL+"/basic", canary, none),
		"cert": fmt.Sprintf(`{"type": "Https", "request": {"uri": %q, "method": "GET",
			"authentication": {"type": "ClientCertificate", "pfx": %q, "password": %q}}, %s}`, target.URL+"/cert", pfx, pfxPassword, none),
		"oauth": fmt.Sprintf(`{"type": "Https", "request": {"uri": %q, "method": "GET",
			"authentication": {"type": "ActiveDirectoryOAuth", "tenant": "t1", "audience": "https://api", "clientId": "app",
			"secret": "oauth-%s", "authority": %q}}, %s}`, target.URL+"/oauth", canary, target.URL+"/", none),
		"queue": fmt.Sprintf(`{"type": "StorageQueue", "queueMessage": {"storageAccount": "acct", "queueName": "jobs",
			"sasToken": "?sv=2019-02-02&sp=a&sig=%s", "message": "hi"}, %s}`, canary, none),
		"bus": fmt.Sprintf(`{"type": "ServiceBusQueue", "serviceBusQueueMessage": {"namespace": "contoso-sb", "queueName": "jobs",
			"authentication": {"type": "SharedAccessKey", "sasKeyName": "send", "sasKey": "key-%s"}, "message": "hi"}, %s}`, canary, none),
	}
	for name, act := range jobs {
		body := `{"properties": {"action": ` + act + `}}`
		if _, _, err := c.PutJobJSON(ctx, ref, name, []byte(body), nil); err != nil {
			t.Fatalf("PutJob %s: %v", name, err)
		}
	}
	// A refused request is logged (at Debug) with its span's trace id; this
	// one has a password and is refused for sending it over http.
	insecure := fmt.Sprintf(`{"properties": {"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:1/", "method": "GET",
		"authentication": {"type": "Basic", "username": "alice", "password": "pw-%s"}}}}}`, canary)
	if _, _, err := c.PutJobJSON(ctx, ref, "insecure", []byte(insecure), nil); err == nil {
		t.Fatal("PutJob with a password over http succeeded, want 400")
	}
	failed := 0
	for range jobs {
		select {
		case h := <-done:
			if h.Status == scheduler.StatusFailed {
				failed++
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the jobs did not run within 20s")
		}
	}
	if failed != len(jobs) {
		t.Errorf("%d of %d attempts failed, want all (failures describe the most)", failed, len(jobs))
	}
	// Something is recorded for each job, or the search proves nothing.
	var everything strings.Builder
	for _, sp := range o.spans.Ended() {
		fmt.Fprintf(&everything, "%s %v %v %v %v %v\n", sp.Name(), sp.Attributes(), sp.Events(), sp.Status(), sp.Links(), sp.Resource())
	}
	var rm metricdata.ResourceMetrics
	if err := o.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&everything, "%+v\n", rm)
	everything.WriteString(logs.String())
	all := everything.String()
	traced := map[string]bool{}
	for _, sp := range o.ended("jobclock.attempt") {
		traced[fmt.Sprint(attrMap(sp.Attributes())["jobclock.job"])] = true
	}
	for name := range jobs {
		if !traced[name] {
			t.Errorf("no attempt span of job %s was recorded (attempts of %v)", name, traced)
		}
	}
	if !strings.Contains(all, "PUT /subscriptions/{subscriptionId}") || !strings.Contains(logs.String(), "trace_id=") {
		t.Errorf("the REST API's spans or the log's trace ids are missing from what was recorded")
	}
	for _, secret := range secrets {
		if i := strings.Index(all, secret); i >= 0 {
			t.Errorf("secret %.20q... found in the telemetry: ...%s...", secret, all[max(i-200, 0):min(i+len(secret)+50, len(all))])
		}
	}
}

// canaryPfx returns a base64 PKCS#12 file with a self-signed client
// certificate, sealed with password.
func canaryPfx(t *testing.T, password string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "canary"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	data, err := pkcs12.Modern.Encode(key, cert, nil, password)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(data)
}
