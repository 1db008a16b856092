package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/action/azure"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
)

// TestResponsesLeaveStoredSecrets checks that answering with a job whose
// secrets are blanked changes nothing in the stored definition, which
// responses share: the secrets are still there for the next attempt, and
// for the next response to blank again.
func TestResponsesLeaveStoredSecrets(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.PutCollection(ctx, "sub1/rg1/jc1", nil, nil); err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(s, &httpapi.Options{Logger: log})
	body := `{"properties": {"action": {"type": "Https",
		"request": {"uri": "https://example.com/", "method": "GET", "authentication": {"type": "Basic", "username": "u", "password": "secret-1"}},
		"errorAction": {"type": "Https", "request": {"uri": "https://example.com/e", "method": "POST", "authentication": {"type": "Basic", "username": "u", "password": "secret-2"}}}},
		"state": "Disabled"}}`
	for i, method := range []string{"PUT", "GET", "GET"} {
		rec := sendJob(h, method, body)
		if rec.Code/100 != 2 {
			t.Fatalf("%s: status %d: %s", method, rec.Code, rec.Body)
		}
		if strings.Contains(rec.Body.String(), "secret-") {
			t.Errorf("response %d shows a secret: %s", i, rec.Body)
		}
		if !strings.Contains(rec.Body.String(), `"username":"u"`) {
			t.Errorf("response %d lacks the username: %s", i, rec.Body)
		}
		r, err := s.GetJob(ctx, "sub1/rg1/jc1", "j1")
		if err != nil {
			t.Fatal(err)
		}
		stored, _ := json.Marshal(r.Job)
		for _, secret := range []string{"secret-1", "secret-2"} {
			if !strings.Contains(string(stored), secret) {
				t.Errorf("after response %d the stored job lost %s: %s", i, secret, stored)
			}
		}
	}
}

// TestResponsesBlankTheOnlySecret puts jobs whose one secret sits in each
// place a job can hold one, the error action included, and checks that no
// response shows it: a job without secrets is answered as it is stored, so
// the check for secrets must find every one.
func TestResponsesBlankTheOnlySecret(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := new(action.Registry)
	reg.Register(action.HTTP, fakeHTTP)
	reg.Register(action.HTTPS, fakeHTTP)
	azure.Register(reg, nil)
	s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(context.Background(), "sub1/rg1/jc1", nil, nil); err != nil {
		t.Fatal(err)
	}
	h := httpapi.New(s, &httpapi.Options{Logger: log})
	const plain = `{"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}}`
	secretActions := map[string]string{
		"request": `{"type": "Https", "request": {"uri": "https://example.com/", "method": "GET",
			"authentication": {"type": "Basic", "username": "u", "password": "the-secret"}}}`,
		"queue": `{"type": "StorageQueue", "queueMessage": {"storageAccount": "acct", "queueName": "queue",
			"sasToken": "sv=the-secret", "message": "m"}}`,
		"serviceBusQueue": `{"type": "ServiceBusQueue", "serviceBusQueueMessage": {"namespace": "contoso-ns1", "queueName": "q",
			"message": "m", "transportType": "AMQP", "authentication": {"sasKeyName": "send", "sasKey": "the-secret", "type": "SharedAccessKey"}}}`,
		"serviceBusTopic": `{"type": "ServiceBusTopic", "serviceBusTopicMessage": {"namespace": "contoso-ns1", "topicPath": "t",
			"message": "m", "transportType": "AMQP", "authentication": {"sasKeyName": "send", "sasKey": "the-secret", "type": "SharedAccessKey"}}}`,
	}
	for where, secret := range secretActions {
		for _, errorAction := range []bool{false, true} {
			a := secret[:len(secret)-1] + `, "errorAction": ` + plain + `}`
			if errorAction {
				a = plain[:len(plain)-1] + `, "errorAction": ` + secret + `}`
			}
			body := `{"properties": {"action": ` + a + `, "state": "Disabled"}}`
			for _, method := range []string{"PUT", "GET"} {
				rec := sendJob(h, method, body)
				if rec.Code/100 != 2 {
					t.Fatalf("%s in %s (error action %v): status %d: %s", method, where, errorAction, rec.Code, rec.Body)
				}
				if strings.Contains(rec.Body.String(), "the-secret") {
					t.Errorf("%s response with a secret in %s (error action %v) shows it: %s", method, where, errorAction, rec.Body)
				}
			}
		}
	}
}

// sendJob sends a PUT of body, or a GET, for job j1 of jc1 and returns the
// response.
func sendJob(h http.Handler, method, body string) *httptest.ResponseRecorder {
	var rd io.Reader
	if method == "PUT" {
		rd = strings.NewReader(body)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, jc1+"/jobs/j1"+v, rd))
	return rec
}
