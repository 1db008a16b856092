package httpapi_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/internal/testcert"
)

// TestRoundTrip puts jobs that use every field and checks that GET returns
// them field for field, without their secrets.
func TestRoundTrip(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.open)
	defer srv.Close()
	ctx := context.Background()
	c := httpapi.NewClient(srv.URL, nil)
	ref := httpapi.CollectionRef{Subscription: "sub1", ResourceGroup: "rg1", Collection: "full"}
	if _, _, err := c.PutCollection(ctx, ref, nil, nil); err != nil {
		t.Fatal(err)
	}
	pfx, cert := testcert.Pfx(t, "reports-client", "pfx-password")
	start := time.Now().UTC().AddDate(0, 1, 0).Truncate(time.Hour).Format(time.RFC3339)
	end := time.Now().UTC().AddDate(1, 0, 0).Truncate(time.Hour).Format(time.RFC3339)
	secrets := []string{"pfx-password", pfx, "basic-password", "oauth-secret", "sas-token-secret", "sas-key-secret"}
	fill := strings.NewReplacer("{{start}}", start, "{{end}}", end, "{{pfx}}", pfx).Replace

	bodies := map[string]string{
		"certificate": `{"properties": {
  "startTime": "{{start}}",
  "action": {
    "type": "Https",
    "request": {
      "uri": "https://example.com/reports?day=1", "method": "PUT",
      "headers": {"Content-Type": "text/plain", "X-Team": "reports"},
      "body": "run the report",
      "authentication": {"type": "ClientCertificate", "pfx": "{{pfx}}", "password": "pfx-password"}
    },
    "retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 3},
    "errorAction": {
      "type": "ServiceBusQueue",
      "serviceBusQueueMessage": {
        "namespace": "contoso-ns1", "queueName": "errors", "transportType": "AMQP", "message": "report failed",
        "authentication": {"sasKeyName": "RootManageSharedAccessKey", "sasKey": "sas-key-secret", "type": "SharedAccessKey"},
        "brokeredMessageProperties": {
          "contentType": "text/plain", "correlationId": "c1", "forcePersistence": true, "label": "l1",
          "messageId": "m1", "partitionKey": "s1", "replyTo": "r1", "replyToSessionId": "rs1",
          "scheduledEnqueueTimeUtc": "{{start}}", "sessionId": "s1", "timeToLive": "PT1H", "to": "t1",
          "viaPartitionKey": "v1"
        },
        "customMessageProperties": {"source": "jobclock"}
      },
      "retryPolicy": {"retryType": "None"}
    }
  },
  "recurrence": {
    "frequency": "Month", "interval": 1, "count": 5, "endTime": "{{end}}", "timeZone": "Europe/Paris",
    "schedule": {"hours": [8, 17], "minutes": [0, 30], "monthDays": [1, -1], "months": [2, 8],
                 "monthlyOccurrences": [{"day": "Friday", "occurrence": -1}]}
  },
  "state": "Disabled"
}}`,
		"basic": `{"properties": {
  "startTime": "{{start}}",
  "action": {
    "type": "Https",
    "request": {"uri": "https://example.com/b", "method": "POST", "body": "{}",
      "authentication": {"type": "Basic", "username": "svc", "password": "basic-password"}},
    "errorAction": {
      "type": "StorageQueue",
      "queueMessage": {"storageAccount": "acct", "queueName": "errors", "sasToken": "sas-token-secret", "message": "failed"}
    }
  },
  "recurrence": {"frequency": "Week", "interval": 1, "schedule": {"weekDays": ["Monday", "Thursday"], "hours": [6], "minutes": [15]}}
}}`,
		"oauth": `{"properties": {
  "startTime": "{{start}}",
  "action": {
    "type": "Https",
    "request": {"uri": "https://example.com/o", "method": "GET",
      "authentication": {"type": "ActiveDirectoryOAuth", "tenant": "contoso.onmicrosoft.com", "audience": "https://management.core.windows.net/",
                         "clientId": "client-1", "secret": "oauth-secret", "authority": "https://login.example.com/"}},
    "errorAction": {
      "type": "ServiceBusTopic",
      "serviceBusTopicMessage": {"namespace": "contoso-ns1", "topicPath": "alerts", "message": "failed", "transportType": "NetMessaging",
        "authentication": {"sasKeyName": "send", "sasKey": "sas-key-secret", "type": "SharedAccessKey"}}
    }
  },
  "recurrence": {"frequency": "Hour", "interval": 6, "count": 100}
}}`,
		"cron": `{"properties": {
  "startTime": "{{start}}",
  "action": {"type": "Http", "request": {"uri": "http://example.com/c", "method": "GET"}},
  "recurrence": {"cron": "CRON_TZ=Europe/Berlin */15 9-16 * * 1-5", "count": 20, "endTime": "{{end}}"}
}}`,
		"queue": `{"properties": {
  "startTime": "{{start}}",
  "action": {
    "type": "StorageQueue",
    "queueMessage": {"storageAccount": "acct", "queueName": "work", "sasToken": "sas-token-secret", "message": "go"},
    "retryPolicy": {"retryType": "Fixed", "retryInterval": "00:00:30", "retryCount": 0}
  },
  "recurrence": {"frequency": "Day", "schedule": {"hours": [0, 12], "minutes": [0]}}
}}`,
		"exponential": `{"properties": {
  "action": {
    "type": "Http",
    "request": {"uri": "http://example.com/sync", "method": "POST"},
    "retryPolicy": {"retryType": "Exponential", "retryInterval": "PT20S", "retryCount": 6, "minimumInterval": "PT15S", "maximumInterval": "PT10M"},
    "errorAction": {
      "type": "Http",
      "request": {"uri": "http://example.com/alert", "method": "POST"},
      "retryPolicy": {"type": "exponential", "count": 2, "maximumInterval": "PT1H"}
    }
  },
  "recurrence": {"frequency": "Hour", "interval": 1}
}}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			body := fill(body)
			want, err := scheduler.ParseJob([]byte(body), nil)
			if err != nil {
				t.Fatalf("ParseJob: %v", err)
			}
			// What GET must show: no secrets, the certificate described.
			blank(&want.Action)
			if name == "certificate" {
				sum := sha1.Sum(cert.Raw)
				exp := cert.NotAfter.UTC()
				a := want.Action.Request.Authentication
				a.CertificateThumbprint = strings.ToUpper(hex.EncodeToString(sum[:]))
				a.CertificateSubjectName = "CN=reports-client"
				a.CertificateExpirationDate = &exp
			}
			if want.State == "" {
				want.State = scheduler.JobEnabled
			}

			put, created, err := c.PutJobJSON(ctx, ref, name, json.RawMessage(body), nil)
			if err != nil || !created {
				t.Fatalf("PUT = created %v, %v", created, err)
			}
			got, err := c.GetJob(ctx, ref, name)
			if err != nil {
				t.Fatal(err)
			}
			for what, j := range map[string]*httpapi.JobDefinition{"PUT": put, "GET": got} {
				if j.Properties.Status == nil {
					t.Errorf("%s: no status", what)
				}
				p := *j.Properties
				p.Status = nil
				if diff := cmp.Diff(want, &p); diff != "" {
					t.Errorf("%s response differs from the definition (-want +got):\n%s", what, diff)
				}
			}
			if got.ETag == "" || got.ETag != put.ETag {
				t.Errorf("GET ETag %q, PUT ETag %q: want the same non-empty tag", got.ETag, put.ETag)
			}
			// No secret appears anywhere in the raw response.
			raw := rawGet(t, srv.URL+"/subscriptions/sub1/resourceGroups/rg1/providers/Microsoft.Scheduler/jobCollections/full/jobs/"+name+"?api-version=2016-03-01")
			for _, s := range secrets {
				if strings.Contains(raw, s) {
					t.Errorf("GET response contains the secret %.20q", s)
				}
			}
		})
	}

	// A PATCH that leaves the secrets out keeps them in the store.
	if _, err := c.PatchJob(ctx, ref, "basic", json.RawMessage(`{"properties": {"action": {"request": {"uri": "https://example.com/b2"}}}}`), nil); err != nil {
		t.Fatal(err)
	}
	rec, err := e.s.GetJob(ctx, "sub1/rg1/full", "basic")
	if err != nil {
		t.Fatal(err)
	}
	r := rec.Job.Action.Request
	if r.URI != "https://example.com/b2" || r.Authentication.Password != "basic-password" || rec.Job.Action.ErrorAction.QueueMessage.SASToken != "sas-token-secret" {
		t.Errorf("after PATCH: uri %q, password kept %v, sasToken kept %v; want the new URI and both secrets kept",
			r.URI, r.Authentication.Password == "basic-password", rec.Job.Action.ErrorAction.QueueMessage.SASToken == "sas-token-secret")
	}
}

// blank removes the secrets of a, as the API must.
func blank(a *action.Action) {
	if a == nil {
		return
	}
	if a.Request != nil && a.Request.Authentication != nil {
		a.Request.Authentication.Password, a.Request.Authentication.Pfx, a.Request.Authentication.Secret = "", "", ""
	}
	if a.QueueMessage != nil {
		a.QueueMessage.SASToken = ""
	}
	if m := a.ServiceBusQueueMessage; m != nil && m.Authentication != nil {
		m.Authentication.SASKey = ""
	}
	if m := a.ServiceBusTopicMessage; m != nil && m.Authentication != nil {
		m.Authentication.SASKey = ""
	}
	blank(a.ErrorAction)
}

func rawGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}
