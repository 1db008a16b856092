package scheduler_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// httpAction is a valid action to build jobs around.
const httpAction = `{"type": "https", "request": {"uri": "https://example.com/hook", "method": "POST"}}`

func withAction(a string) string { return `{"action": ` + a + `}` }

func withRequest(r string) string { return withAction(`{"type": "https", "request": ` + r + `}`) }

func TestParseJobRules(t *testing.T) {
	manyHeaders := make([]string, 51)
	for i := range manyHeaders {
		manyHeaders[i] = fmt.Sprintf(`"X-H%d": "v"`, i)
	}
	tests := []struct {
		name string
		in   string
		opts *scheduler.ParseOptions
		want []string // nil: valid
	}{
		// Job level.
		{name: "minimal", in: withAction(httpAction)},
		{name: "action missing", in: `{"state": "enabled"}`, want: []string{"action: is required"}},
		{name: "action null", in: `{"action": null}`, want: []string{"action: is required"}},
		{name: "action not object", in: `{"action": "http"}`, want: []string{`action: "http" is not an object`}},
		{name: "state disabled", in: `{"action": ` + httpAction + `, "state": "DISABLED"}`},
		{name: "state completed", in: `{"action": ` + httpAction + `, "state": "completed"}`,
			want: []string{`state: "completed" cannot be set; a job becomes Completed or Faulted when its last occurrence has run (use Enabled or Disabled)`}},
		{name: "state faulted", in: `{"action": ` + httpAction + `, "state": "Faulted"}`,
			want: []string{`state: "Faulted" cannot be set; a job becomes Completed or Faulted when its last occurrence has run (use Enabled or Disabled)`}},
		{name: "state unknown", in: `{"action": ` + httpAction + `, "state": "running"}`,
			want: []string{`state: "running" is not a job state (Enabled or Disabled)`}},
		{name: "state not string", in: `{"action": ` + httpAction + `, "state": true}`,
			want: []string{`state: true is not a string`}},
		{name: "top level not object", in: `[1, 2]`, want: []string{"job: [1,2] is not an object"}},
		{name: "start time bad", in: `{"action": ` + httpAction + `, "startTime": "tomorrow"}`,
			want: []string{`startTime: "tomorrow" is not a time; use ISO 8601 such as "2012-08-04T00:00Z" or "2012-11-04"`}},
		{name: "start time number", in: `{"action": ` + httpAction + `, "startTime": 1344038400}`,
			want: []string{`startTime: 1344038400 is not a time; use an ISO 8601 string such as "2012-08-04T00:00Z"`}},
		{name: "start time far ahead", in: `{"action": ` + httpAction + `, "startTime": "2027-06-01T00:00Z"}`,
			opts: &scheduler.ParseOptions{Now: time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC)},
			want: []string{`startTime: "2027-06-01T00:00Z" is more than 18 months (548 days) from now`}},
		{name: "start time 18 months ahead", in: `{"action": ` + httpAction + `, "startTime": "2027-05-01T00:00Z"}`,
			opts: &scheduler.ParseOptions{Now: time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC)}},
		{name: "start time far ahead without now", in: `{"action": ` + httpAction + `, "startTime": "2099-06-01T00:00Z"}`},
		{name: "end time in the past", in: `{"action": ` + httpAction + `, "recurrence": {"frequency": "day", "endTime": "2001-01-01"}}`,
			opts: &scheduler.ParseOptions{Now: time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC)}},

		// Retry deadline and permanent status codes.
		{name: "retry deadline and permanent codes", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/hook", "method": "POST"},
			"retryPolicy": {"retryType": "fixed", "maxRetryDuration": "PT1H", "permanentStatusCodes": [400, 404]}}`)},
		{name: "retry deadline and permanent codes bad", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/hook", "method": "POST"},
			"retryPolicy": {"retryType": "fixed", "maxRetryDuration": "PT0.5S", "permanentStatusCodes": [404, 99, 600]}}`),
			want: []string{
				`action.retryPolicy.maxRetryDuration: "PT0.5S" is shorter than PT1S`,
				`action.retryPolicy.permanentStatusCodes[1]: 99 is not an HTTP status code (100-599)`,
				`action.retryPolicy.permanentStatusCodes[2]: 600 is not an HTTP status code (100-599)`,
			}},
		{name: "permanent codes on a queue", in: withAction(`{"type": "storageQueue", "queueMessage": {"storageAccount": "acct", "queueName": "q", "sasToken": "sig=x", "message": "m"},
			"retryPolicy": {"retryType": "fixed", "permanentStatusCodes": [404]}}`),
			want: []string{`action.retryPolicy.permanentStatusCodes: applies to Http and Https actions only`}},

		// A dead-letter errorAction: no message of its own.
		{name: "errorAction queue without message", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/hook", "method": "POST"},
			"errorAction": {"type": "storageQueue", "queueMessage": {"storageAccount": "acct", "queueName": "dead", "sasToken": "sig=x"}}}`)},
		{name: "main queue without message", in: withAction(`{"type": "storageQueue", "queueMessage": {"storageAccount": "acct", "queueName": "q", "sasToken": "sig=x"}}`),
			want: []string{`action.queueMessage.message: is required`}},

		// Run policy and pause.
		{name: "run policy", in: `{"action": ` + httpAction + `, "runPolicy": {"missed": "runall", "catchUpWindow": "PT2H", "overlap": "bufferall", "pauseAfterFaults": 3}}`},
		{name: "run policy empty", in: `{"action": ` + httpAction + `, "runPolicy": {}}`},
		{name: "run policy bad members", in: `{"action": ` + httpAction + `, "runPolicy": {"missed": "later", "catchUpWindow": "PT0.5S", "overlap": "Queue", "pauseAfterFaults": -1}}`,
			want: []string{
				`runPolicy.catchUpWindow: "PT0.5S" is shorter than one second (PT1S)`,
				`runPolicy.missed: "later" is not a missed policy (RunOnce, Skip or RunAll)`,
				`runPolicy.overlap: "Queue" is not an overlap policy (Postpone, Skip, BufferAll, AllowAll or CancelRunning)`,
				`runPolicy.pauseAfterFaults: -1 is not between 1 and 1000 (0 or absent: never)`,
			}},
		{name: "run policy allow all", in: `{"action": ` + httpAction + `, "runPolicy": {"overlap": "allowAll"}}`},
		{name: "run policy bad duration", in: `{"action": ` + httpAction + `, "runPolicy": {"catchUpWindow": "2 hours"}}`,
			want: []string{`runPolicy.catchUpWindow: "2 hours" is not a duration (missing P); use ISO 8601 such as "PT30S" or "P1D"`}},
		{name: "run policy unknown member", in: `{"action": ` + httpAction + `, "runPolicy": {"misfire": "Skip"}}`,
			want: []string{`runPolicy.misfire: unknown field`}},
		{name: "pause", in: `{"action": ` + httpAction + `, "state": "disabled", "stateReason": "until the API resets", "resumeTime": "2025-11-02T00:00Z"}`,
			opts: &scheduler.ParseOptions{Now: time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC)}},
		{name: "pause without disabled", in: `{"action": ` + httpAction + `, "stateReason": "why", "resumeTime": "2025-11-02T00:00Z"}`,
			want: []string{`resumeTime: "2025-11-02T00:00Z" is only allowed with state Disabled`, `stateReason: "why" is only allowed with state Disabled`}},
		{name: "resume time in the past", in: `{"action": ` + httpAction + `, "state": "Disabled", "resumeTime": "2025-10-31T00:00Z"}`,
			opts: &scheduler.ParseOptions{Now: time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC)},
			want: []string{`resumeTime: "2025-10-31T00:00Z" is not in the future`}},
		{name: "resume time far ahead", in: `{"action": ` + httpAction + `, "state": "Disabled", "resumeTime": "2027-06-01T00:00Z"}`,
			opts: &scheduler.ParseOptions{Now: time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC)},
			want: []string{`resumeTime: "2027-06-01T00:00Z" is more than 18 months (548 days) from now`}},
		{name: "state reason too long", in: `{"action": ` + httpAction + `, "state": "Disabled", "stateReason": "` + strings.Repeat("é", 257) + `"}`,
			want: []string{`stateReason: is 257 characters long, more than 256`}},
		{name: "state reason 256 characters", in: `{"action": ` + httpAction + `, "state": "Disabled", "stateReason": "` + strings.Repeat("é", 256) + `"}`},

		// Unknown fields and duplicates.
		{name: "unknown field", in: withRequest(`{"urii": "https://example.com/", "method": "GET"}`),
			want: []string{"action.request.uri: is required", `action.request.urii: unknown field, did you mean "uri"?`}},
		{name: "unknown top field", in: `{"action": ` + httpAction + `, "recurence": {"frequency": "day"}}`,
			want: []string{`recurence: unknown field, did you mean "recurrence"?`}},
		{name: "unknown odd key", in: `{"action": ` + httpAction + `, "a b": 1}`,
			want: []string{`["a b"]: unknown field`}},
		{name: "unknown schedule field", in: `{"action": ` + httpAction + `, "recurrence": {"frequency": "day", "schedule": {"minute": [30], "hour": [8]}}}`,
			want: []string{`recurrence.schedule.hour: unknown field, did you mean "hours"?`, `recurrence.schedule.minute: unknown field, did you mean "minutes"?`}},
		{name: "duplicate key in other case", in: `{"action": ` + httpAction + `, "startTime": "2012-08-04", "StartTime": "2012-08-05"}`,
			want: []string{`startTime: is a duplicate of "StartTime"`}},
		{name: "old names accepted", in: withRequest(`{"uri": "https://example.com/", "method": "GET",
			"httpAuthentication": {"type": "clientCertificate", "pfx": "AAEC", "password": "p", "certificateExpiration": "2030-01-01"}}`)},

		// Types.
		{name: "interval string", in: `{"action": ` + httpAction + `, "recurrence": {"frequency": "day", "interval": "two"}}`,
			want: []string{`recurrence.interval: "two" is not an integer`}},
		{name: "interval fraction", in: `{"action": ` + httpAction + `, "recurrence": {"frequency": "day", "interval": 1.5}}`,
			want: []string{`recurrence.interval: 1.5 is not an integer`}},
		{name: "interval huge", in: `{"action": ` + httpAction + `, "recurrence": {"frequency": "day", "interval": 99999999999999999999}}`,
			want: []string{`recurrence.interval: 99999999999999999999 is out of range`}},
		{name: "interval zero", in: `{"action": ` + httpAction + `, "recurrence": {"frequency": "day", "interval": 0}}`,
			want: []string{`recurrence.interval: 0 must be at least 1`}},
		{name: "count zero", in: `{"action": ` + httpAction + `, "recurrence": {"frequency": "day", "count": 0}}`,
			want: []string{`recurrence.count: 0 must be at least 1`}},
		{name: "hours not array", in: `{"action": ` + httpAction + `, "recurrence": {"frequency": "day", "schedule": {"hours": 10}}}`,
			want: []string{`recurrence.schedule.hours: 10 is not an array`}},
		{name: "hour element wrong type keeps indexes", in: `{"action": ` + httpAction + `, "recurrence": {"frequency": "day", "schedule": {"hours": ["ten", 10, 25]}}}`,
			want: []string{`recurrence.schedule.hours[0]: "ten" is not an integer`, "recurrence.schedule.hours[2]: 25 is not an hour (0-23)"}},
		{name: "required field wrong type reported once", in: withRequest(`{"uri": 5, "method": "GET"}`),
			want: []string{"action.request.uri: 5 is not a string"}},
		{name: "payload wrong type reported once", in: withAction(`{"type": "http", "request": []}`),
			want: []string{"action.request: [] is not an object"}},
		{name: "header value not string", in: withRequest(`{"uri": "https://example.com/", "method": "GET", "headers": {"X-N": 1}}`),
			want: []string{"action.request.headers.X-N: 1 is not a string"}},
		{name: "bool wrong type", in: withAction(`{"type": "serviceBusTopic", "serviceBusTopicMessage": {"namespace": "n", "topicPath": "t",
			"message": "m", "brokeredMessageProperties": {"forcePersistence": "yes"}}}`),
			want: []string{`action.serviceBusTopicMessage.brokeredMessageProperties.forcePersistence: "yes" is not a boolean (true or false)`}},
		{name: "long value abbreviated", in: `{"action": ` + httpAction + `, "state": "` + strings.Repeat("a", 100) + `"}`,
			want: []string{`state: "` + strings.Repeat("a", 60) + `... is not a job state (Enabled or Disabled)`}},

		// Action type and payload.
		{name: "type missing", in: withAction(`{"request": {"uri": "https://example.com/", "method": "GET"}}`),
			want: []string{"action.type: is required (Http, Https, StorageQueue, ServiceBusQueue or ServiceBusTopic)"}},
		{name: "type unknown", in: withAction(`{"type": "ftp"}`),
			want: []string{`action.type: "ftp" is not an action type (Http, Https, StorageQueue, ServiceBusQueue or ServiceBusTopic)`}},
		{name: "type unknown lists host types", in: withAction(`{"type": "ftp"}`), opts: &scheduler.ParseOptions{ActionTypes: []action.Type{"Kafka"}},
			want: []string{`action.type: "ftp" is not an action type (Http, Https, StorageQueue, ServiceBusQueue, ServiceBusTopic or Kafka)`}},
		{name: "type unknown, request still checked", in: withAction(`{"type": "Htp", "request": {"method": "GETT"}}`),
			want: []string{`action.request.method: "GETT" is not an HTTP method, did you mean "GET"?`, "action.request.uri: is required",
				`action.type: "Htp" is not an action type, did you mean "Http"?`}},
		{name: "type unknown, queue message still checked", in: withAction(`{"type": "ftp", "queueMessage": {"queueName": "q"}}`),
			want: []string{"action.queueMessage.message: is required", "action.queueMessage.sasToken: is required",
				"action.queueMessage.storageAccount: is required",
				`action.type: "ftp" is not an action type (Http, Https, StorageQueue, ServiceBusQueue or ServiceBusTopic)`}},
		{name: "type unknown, service bus messages still checked", in: withAction(`{"type": "ftp",
			"serviceBusQueueMessage": {"namespace": "n", "message": "m"}, "serviceBusTopicMessage": {"namespace": "n", "message": "m"}}`),
			want: []string{"action.serviceBusQueueMessage.queueName: is required", "action.serviceBusTopicMessage.topicPath: is required",
				`action.type: "ftp" is not an action type (Http, Https, StorageQueue, ServiceBusQueue or ServiceBusTopic)`}},
		{name: "type unknown, valid payloads", in: withAction(`{"type": "ftp", "request": {"uri": "http://example.com/", "method": "GET"},
			"queueMessage": {"storageAccount": "a", "queueName": "q", "sasToken": "t", "message": "m"}}`),
			want: []string{`action.type: "ftp" is not an action type (Http, Https, StorageQueue, ServiceBusQueue or ServiceBusTopic)`}},
		{name: "type missing, request still checked", in: withAction(`{"request": {"method": "GET"}}`),
			want: []string{"action.request.uri: is required",
				"action.type: is required (Http, Https, StorageQueue, ServiceBusQueue or ServiceBusTopic)"}},
		{name: "payload missing and foreign", in: withAction(`{"type": "http", "queueMessage": {"storageAccount": "a", "queueName": "q", "sasToken": "t", "message": "m"}}`),
			want: []string{"action.queueMessage: does not apply to type Http", "action.request: is required for type Http"}},

		// HTTP.
		{name: "http with https uri", in: withAction(`{"type": "http", "request": {"uri": "https://example.com/", "method": "GET"}}`)},
		{name: "https with http uri", in: withRequest(`{"uri": "http://example.com/", "method": "GET"}`),
			want: []string{`action.request.uri: "http://example.com/" is not an https URL, as an Https action requires`}},
		{name: "uri missing", in: withRequest(`{"method": "GET"}`), want: []string{"action.request.uri: is required"}},
		{name: "uri relative", in: withRequest(`{"uri": "/foo", "method": "GET"}`),
			want: []string{`action.request.uri: "/foo" is not an absolute http or https URL`}},
		{name: "uri ftp", in: withRequest(`{"uri": "ftp://example.com/", "method": "GET"}`),
			want: []string{`action.request.uri: "ftp://example.com/" is not an absolute http or https URL`}},
		{name: "uri no host", in: withRequest(`{"uri": "https:///path", "method": "GET"}`),
			want: []string{`action.request.uri: "https:///path" has no host`}},
		{name: "uri unparsable", in: withRequest(`{"uri": "https://example.com/%zz", "method": "GET"}`),
			want: []string{`action.request.uri: "https://example.com/%zz" is not a URL`}},
		{name: "uri 2048", in: withRequest(`{"uri": "https://example.com/` + strings.Repeat("a", 2048-20) + `", "method": "GET"}`)},
		{name: "uri 2049", in: withRequest(`{"uri": "https://example.com/` + strings.Repeat("a", 2049-20) + `", "method": "GET"}`),
			want: []string{`action.request.uri: "https://example.com/` + strings.Repeat("a", 40) + `... is 2,049 characters long, more than the limit of 2,048`}},
		{name: "method missing", in: withRequest(`{"uri": "https://example.com/"}`),
			want: []string{"action.request.method: is required (GET, PUT, POST, DELETE, PATCH, HEAD or OPTIONS)"}},
		{name: "method unknown", in: withRequest(`{"uri": "https://example.com/", "method": "FETCH"}`),
			want: []string{`action.request.method: "FETCH" is not an HTTP method (GET, PUT, POST, DELETE, PATCH, HEAD or OPTIONS)`}},
		{name: "method options lower", in: withRequest(`{"uri": "https://example.com/", "method": "options"}`)},
		{name: "50 headers", in: withRequest(`{"uri": "https://example.com/", "method": "GET", "headers": {` + strings.Join(manyHeaders[:50], ",") + `}}`)},
		{name: "51 headers", in: withRequest(`{"uri": "https://example.com/", "method": "GET", "headers": {` + strings.Join(manyHeaders, ",") + `}}`),
			want: []string{"action.request.headers: has 51 headers, more than the limit of 50"}},
		{name: "header name", in: withRequest(`{"uri": "https://example.com/", "method": "GET", "headers": {"bad name": "v", "": "v"}}`),
			want: []string{`action.request.headers[""]: is not a valid header name`, `action.request.headers["bad name"]: is not a valid header name`}},
		{name: "header value newline", in: withRequest(`{"uri": "https://example.com/", "method": "GET", "headers": {"X-A": "a\r\nX-B: b"}}`),
			want: []string{`action.request.headers.X-A: contains a line break or NUL, which a header value may not`}},
		{name: "secret not shown", in: withRequest(`{"uri": "https://example.com/", "method": "GET", "authentication": {"type": "Basic", "username": "u", "password": 12345}}`),
			want: []string{"action.request.authentication.password: is not a string"}},
		{name: "body 8192 characters", in: withRequest(`{"uri": "https://example.com/", "method": "POST", "body": "` + strings.Repeat("é", 4100) + strings.Repeat("a", 4092) + `"}`)},
		{name: "body 8193 characters", in: withRequest(`{"uri": "https://example.com/", "method": "POST", "body": "` + strings.Repeat("b", 8193) + `"}`),
			want: []string{"action.request.body: is 8,193 characters long, more than the limit of 8,192"}},

		// Authentication.
		{name: "basic", in: withRequest(`{"uri": "https://example.com/", "method": "GET", "authentication": {"type": "basic", "username": "u", "password": "p"}}`)},
		{name: "basic missing password", in: withRequest(`{"uri": "https://example.com/", "method": "GET", "authentication": {"type": "Basic", "username": "u"}}`),
			want: []string{"action.request.authentication.password: is required for Basic authentication"}},
		{name: "basic foreign field", in: withRequest(`{"uri": "https://example.com/", "method": "GET", "authentication": {"type": "Basic", "username": "u", "password": "p", "secret": "s"}}`),
			want: []string{"action.request.authentication.secret: does not apply to Basic authentication"}},
		{name: "auth over http", in: withAction(`{"type": "http", "request": {"uri": "http://example.com/", "method": "GET", "authentication": {"type": "Basic", "username": "u", "password": "p"}}}`),
			want: []string{"action.request.authentication: requires an https uri, so that credentials are not sent in clear text"}},
		{name: "auth over http allowed", in: withAction(`{"type": "http", "request": {"uri": "http://127.0.0.1:8080/", "method": "GET", "authentication": {"type": "Basic", "username": "u", "password": "p"}}}`),
			opts: &scheduler.ParseOptions{AllowInsecureAuthentication: true}},
		{name: "auth type missing", in: withRequest(`{"uri": "https://example.com/", "method": "GET", "authentication": {"username": "u"}}`),
			want: []string{"action.request.authentication.type: is required (Basic, ClientCertificate or ActiveDirectoryOAuth)"}},
		{name: "auth type unknown", in: withRequest(`{"uri": "https://example.com/", "method": "GET", "authentication": {"type": "Digest"}}`),
			want: []string{`action.request.authentication.type: "Digest" is not an authentication type (Basic, ClientCertificate or ActiveDirectoryOAuth)`}},
		{name: "client certificate bad base64", in: withRequest(`{"uri": "https://example.com/", "method": "GET", "authentication": {"type": "ClientCertificate", "pfx": "not base64!", "password": "p"}}`),
			want: []string{"action.request.authentication.pfx: is not valid base64"}},
		// A PKCS#12 file whose MAC asks for 2^40 key-derivation iterations.
		{name: "client certificate too costly", in: withRequest(`{"uri": "https://example.com/", "method": "GET", "authentication": {"type": "ClientCertificate", "password": "p",
			"pfx": "ME0CAQMwEQYJKoZIhvcNAQcBoAQEAjAAMDUwITAJBgUrDgMCGgUABBQAAAAAAAAAAAAAAAAAAAAAAAAAAAQIc2FsdHNhbHQCBgEAAAAAAA=="}}`),
			want: []string{"action.request.authentication.pfx: asks for more than 1000000 key-derivation iterations; at most 1000000 are allowed (export the certificate with fewer iterations)"}},
		{name: "client certificate missing", in: withRequest(`{"uri": "https://example.com/", "method": "GET", "authentication": {"type": "ClientCertificate"}}`),
			want: []string{"action.request.authentication.password: is required for ClientCertificate authentication",
				"action.request.authentication.pfx: is required for ClientCertificate authentication"}},
		{name: "oauth missing everything", in: withRequest(`{"uri": "https://example.com/", "method": "GET", "authentication": {"type": "activeDirectoryOAuth"}}`),
			want: []string{"action.request.authentication.audience: is required for ActiveDirectoryOAuth authentication",
				"action.request.authentication.clientId: is required for ActiveDirectoryOAuth authentication",
				"action.request.authentication.secret: is required for ActiveDirectoryOAuth authentication",
				"action.request.authentication.tenant: is required for ActiveDirectoryOAuth authentication"}},
		{name: "oauth bad authority", in: withRequest(`{"uri": "https://example.com/", "method": "GET", "authentication": {"type": "ActiveDirectoryOAuth",
			"tenant": "t", "audience": "https://management.core.windows.net/", "clientId": "c", "secret": "s", "authority": "http://login.example/"}}`),
			want: []string{`action.request.authentication.authority: "http://login.example/" is not an absolute https URL`}},

		// Queues.
		{name: "storage queue missing", in: withAction(`{"type": "storageQueue", "queueMessage": {"storageAccount": "a"}}`),
			want: []string{"action.queueMessage.message: is required", "action.queueMessage.queueName: is required", "action.queueMessage.sasToken: is required"}},
		{name: "service bus queue missing", in: withAction(`{"type": "serviceBusQueue", "serviceBusQueueMessage": {"transportType": "tcp", "authentication": {"type": "key"}}}`),
			want: []string{
				`action.serviceBusQueueMessage.authentication.type: "key" is not a Service Bus authentication type (SharedAccessKey or NotSpecified)`,
				"action.serviceBusQueueMessage.message: is required",
				"action.serviceBusQueueMessage.namespace: is required",
				"action.serviceBusQueueMessage.queueName: is required",
				`action.serviceBusQueueMessage.transportType: "tcp" is not a transport type (NotSpecified, NetMessaging or AMQP)`}},
		{name: "service bus topic sas", in: withAction(`{"type": "serviceBusTopic", "serviceBusTopicMessage": {"namespace": "n", "topicPath": "t", "message": "m",
			"authentication": {"type": "sharedAccessKey", "sasKeyName": "RootManageSharedAccessKey"}}}`),
			want: []string{"action.serviceBusTopicMessage.authentication.sasKey: is required"}},
		{name: "time to live zero", in: withAction(`{"type": "serviceBusTopic", "serviceBusTopicMessage": {"namespace": "n", "topicPath": "t", "message": "m",
			"brokeredMessageProperties": {"timeToLive": "PT0S"}}}`),
			want: []string{`action.serviceBusTopicMessage.brokeredMessageProperties.timeToLive: "PT0S" is not longer than zero`}},

		// Retry policy.
		{name: "retry bounds", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"retryPolicy": {"retryType": "fixed", "retryCount": 21, "retryInterval": "PT5S"}}`),
			want: []string{"action.retryPolicy.retryCount: 21 is out of range (0-20)",
				`action.retryPolicy.retryInterval: "PT5S" is shorter than the minimum of PT15S`}},
		{name: "retry floor lowered", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"retryPolicy": {"retryType": "fixed", "retryInterval": "PT1S"}}`), opts: &scheduler.ParseOptions{MinRetryInterval: time.Second}},
		{name: "retry interval too long", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"retryPolicy": {"retryType": "fixed", "retryInterval": "P19M"}}`),
			want: []string{`action.retryPolicy.retryInterval: "P19M" is longer than the maximum of P548D`}},
		{name: "retry interval 18 months", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"retryPolicy": {"retryType": "fixed", "retryInterval": "P18M"}}`)},
		{name: "retry interval garbage", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"retryPolicy": {"retryType": "fixed", "retryInterval": "soon"}}`),
			want: []string{`action.retryPolicy.retryInterval: "soon" is not a duration (missing P); use ISO 8601 such as "PT30S" or "P1D"`}},
		{name: "retry interval zero", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"retryPolicy": {"retryType": "fixed", "retryInterval": "PT0S"}}`),
			want: []string{`action.retryPolicy.retryInterval: "PT0S" is not longer than zero`}},
		{name: "retry type missing and unknown", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"retryPolicy": {"retryCount": 2}, "errorAction": {"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"retryPolicy": {"retryType": "linear"}}}`),
			want: []string{`action.errorAction.retryPolicy.retryType: "linear" is not a retry type (None, Fixed or Exponential)`,
				"action.retryPolicy.retryType: is required (None, Fixed or Exponential)"}},
		{name: "exponential", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"retryPolicy": {"retryType": "exponential", "retryCount": 5, "retryInterval": "PT20S", "minimumInterval": "PT15S", "maximumInterval": "PT10M"}}`)},
		{name: "exponential with Logic Apps names", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"retryPolicy": {"type": "Exponential", "count": 5, "interval": "PT20S", "maximumInterval": "PT10M"}}`)},
		{name: "exponential bounds", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"retryPolicy": {"retryType": "exponential", "retryCount": 21, "minimumInterval": "PT1S", "maximumInterval": "P600D"},
			"errorAction": {"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"retryPolicy": {"retryType": "exponential", "minimumInterval": "PT2M", "maximumInterval": "PT1M"}}}`),
			want: []string{`action.errorAction.retryPolicy.minimumInterval: "PT2M" is longer than maximumInterval (PT1M)`,
				`action.retryPolicy.maximumInterval: "P600D" is longer than the maximum of P548D`,
				`action.retryPolicy.minimumInterval: "PT1S" is shorter than the minimum of PT15S`,
				"action.retryPolicy.retryCount: 21 is out of range (0-20)"}},
		{name: "exponential maximum below default minimum", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"retryPolicy": {"retryType": "exponential", "maximumInterval": "PT10S"}}`), opts: &scheduler.ParseOptions{MinRetryInterval: time.Second},
			want: []string{`action.retryPolicy.maximumInterval: "PT10S" is shorter than minimumInterval, which defaults to PT15S`}},
		{name: "exponential bounds on fixed", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"retryPolicy": {"retryType": "fixed", "minimumInterval": "PT20S", "maximumInterval": "PT1M"}}`),
			want: []string{`action.retryPolicy.maximumInterval: "PT1M" does not apply to retryType Fixed (only to Exponential)`,
				`action.retryPolicy.minimumInterval: "PT20S" does not apply to retryType Fixed (only to Exponential)`}},
		{name: "retry type given twice", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"retryPolicy": {"retryType": "fixed", "type": "none"}}`),
			want: []string{`action.retryPolicy.type: is a duplicate of "retryType"`}},

		// Error action.
		{name: "error action nested", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"errorAction": {"type": "https", "request": {"uri": "https://example.com/e", "method": "POST"},
			"errorAction": {"type": "https", "request": {"uri": "https://example.com/e2", "method": "POST"}}}}`),
			want: []string{"action.errorAction.errorAction: is not allowed: an errorAction cannot have an errorAction of its own"}},
		// An errorAction may leave its message out (it then carries the
		// failure document); its other members are still required.
		{name: "error action invalid", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/", "method": "GET"},
			"errorAction": {"type": "storageQueue", "queueMessage": {"storageAccount": "a", "sasToken": "t"}}}`),
			want: []string{"action.errorAction.queueMessage.queueName: is required"}},
		{name: "error action empty", in: withAction(`{"type": "https", "request": {"uri": "https://example.com/", "method": "GET"}, "errorAction": {}}`),
			want: []string{"action.errorAction.type: is required (Http, Https, StorageQueue, ServiceBusQueue or ServiceBusTopic)"}},

		// Recurrence (rules owned by package recurrence; paths prefixed here).
		{name: "hour out of range", in: `{"action": ` + httpAction + `, "recurrence": {"frequency": "day", "schedule": {"hours": [1, 25]}}}`,
			want: []string{"recurrence.schedule.hours[1]: 25 is not an hour (0-23)"}},
		{name: "ordered by index", in: `{"action": ` + httpAction + `, "recurrence": {"frequency": "day", "schedule": {"hours": [0, 1, 24, 3, 4, 5, 6, 7, 8, 9, 25]}}}`,
			want: []string{"recurrence.schedule.hours[2]: 24 is not an hour (0-23)", "recurrence.schedule.hours[10]: 25 is not an hour (0-23)"}},
		{name: "frequency missing", in: `{"action": ` + httpAction + `, "recurrence": {}}`,
			want: []string{"recurrence.frequency: is required (Second, Minute, Hour, Day, Week, Month or Year)"}},
		{name: "occurrence key any case", in: `{"action": ` + httpAction + `, "recurrence": {"frequency": "month",
			"schedule": {"monthlyOccurrences": [{"day": "friday", "Occurrence": 9}, {"day": "monday", "occurrence": -9}]}}}`,
			want: []string{"recurrence.schedule.monthlyOccurrences[0].Occurrence: 9 is not an occurrence in a month (-5 to 5; 0 or absent means every such day)",
				"recurrence.schedule.monthlyOccurrences[1].Occurrence: -9 is not an occurrence in a month (-5 to 5; 0 or absent means every such day)"}},

		// Cron specs (an extension; the spec's own rules are package recurrence's).
		{name: "cron alone", in: `{"action": ` + httpAction + `, "recurrence": {"cron": "0 9 * * 1-5"}}`},
		{name: "cron with equal fields", in: `{"action": ` + httpAction + `, "recurrence": {"Cron": "0 9 * * 1-5", "frequency": "WEEK",
			"interval": 1, "timeZone": "Europe/Berlin", "schedule": {"weekDays": ["friday", "monday", "tuesday", "wednesday", "thursday"], "hours": [9]}}}`},
		{name: "cron zone by prefix and the same zone", in: `{"action": ` + httpAction + `, "recurrence": {"cron": "CRON_TZ=Europe/Berlin 30 2 * * *", "timeZone": "W. Europe Standard Time"}}`},
		{name: "cron field out of range", in: `{"action": ` + httpAction + `, "recurrence": {"cron": "0 24 * * *"}}`,
			want: []string{"recurrence.cron: field 2 (hours): 24 is out of range 0-23"}},
		{name: "cron refused extension", in: `{"action": ` + httpAction + `, "recurrence": {"cron": "0 9 15W * *"}}`,
			want: []string{"recurrence.cron: field 3 (day of month): 15W (the weekday nearest a day) cannot be expressed exactly as a recurrence"}},
		{name: "cron February 30th", in: `{"action": ` + httpAction + `, "recurrence": {"cron": "0 0 30 2 *"}}`,
			want: []string{"recurrence.cron: field 3 (day of month): no day it names occurs in February (field 4), so the spec never runs"}},
		{name: "cron with conflicting fields", in: `{"action": ` + httpAction + `, "recurrence": {"cron": "0 9 * * 1-5", "frequency": "day", "interval": 2,
			"schedule": {"hours": [10], "minutes": [0]}}}`,
			want: []string{
				`recurrence.frequency: "day" differs from the cron spec, which gives Week`,
				"recurrence.interval: 2 differs from the cron spec, which gives 1",
				"recurrence.schedule.hours: [10] differs from the cron spec, which gives [9]",
			}},
		{name: "cron zone conflicts with timeZone", in: `{"action": ` + httpAction + `, "recurrence": {"cron": "TZ=Europe/Berlin 0 9 * * *", "timeZone": "America/New_York"}}`,
			want: []string{`recurrence.timeZone: "America/New_York" differs from the cron spec, which gives "Europe/Berlin"`}},
		{name: "cron and other problems", in: `{"action": ` + httpAction + `, "recurrence": {"cron": "0 9 * * MON-FUN", "count": 0, "timeZone": "Mars/Olympus"}}`,
			want: []string{
				`recurrence.count: 0 must be at least 1`,
				`recurrence.cron: field 5 (day of week): "FUN" in "MON-FUN" is not a day of the week (0-7 or SUN-SAT)`,
				`recurrence.timeZone: "Mars/Olympus" is not a known time zone (an IANA name such as "Europe/Paris" or a Windows name such as "W. Europe Standard Time")`,
			}},
		{name: "cron not a string", in: `{"action": ` + httpAction + `, "recurrence": {"cron": 5}}`,
			want: []string{"recurrence.cron: 5 is not a string"}},
		{name: "cron empty means no spec", in: `{"action": ` + httpAction + `, "recurrence": {"cron": ""}}`,
			want: []string{"recurrence.frequency: is required (Second, Minute, Hour, Day, Week, Month or Year)"}},
		{name: "cron in an envelope", in: `{"properties": {"action": ` + httpAction + `, "recurrence": {"cron": "0 9 * 13 *"}}}`,
			want: []string{"properties.recurrence.cron: field 4 (month): 13 is out of range 1-12"}},

		// Several problems at once, in different parts of the job.
		{name: "several at once", in: `{
			"startTime": "2012-08-04T00:00",
			"action": {"type": "https", "request": {"uri": "http://example.com/", "method": "FETCH", "bdy": "x"},
				"retryPolicy": {"retryType": "fixed", "retryCount": -1}},
			"recurrence": {"frequency": "week", "interval": "2", "schedule": {"weekDays": ["monday", "someday"], "hours": [24]}},
			"state": "paused",
		}`,
			want: []string{
				`action.request.bdy: unknown field, did you mean "body"?`,
				`action.request.method: "FETCH" is not an HTTP method (GET, PUT, POST, DELETE, PATCH, HEAD or OPTIONS)`,
				`action.request.uri: "http://example.com/" is not an https URL, as an Https action requires`,
				"action.retryPolicy.retryCount: -1 is out of range (0-20)",
				`recurrence.interval: "2" is not an integer`,
				"recurrence.schedule.hours[0]: 24 is not an hour (0-23)",
				`recurrence.schedule.weekDays[1]: "someday" is not a day of the week (Monday to Sunday)`,
				`state: "paused" is not a job state (Enabled or Disabled)`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := scheduler.ParseJob([]byte(tt.in), tt.opts)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("ParseJob = %v, want no error", err)
				}
				if j == nil {
					t.Fatal("ParseJob returned a nil job and no error")
				}
				if err := j.Validate(tt.opts); err != nil {
					t.Errorf("Validate(parsed job) = %v, want nil", err)
				}
				return
			}
			if j != nil {
				t.Errorf("ParseJob returned a job along with errors")
			}
			wantErrs(t, err, tt.want...)
		})
	}
}

func TestJobValidate(t *testing.T) {
	var j scheduler.Job
	if err := j.Validate(nil); err == nil || err.Error() != "action: is required" {
		t.Errorf("Validate(zero job) = %v, want action: is required", err)
	}
	j.Action = action.Action{Type: action.HTTPS, Request: &action.HTTPRequest{URI: "https://example.com/", Method: "get"}}
	if err := j.Validate(nil); err != nil {
		t.Errorf("Validate(valid job) = %v", err)
	}
	if j.Action.Request.Method != "get" {
		t.Errorf("Validate modified the job: method = %q", j.Action.Request.Method)
	}
	j.State = scheduler.JobCompleted
	wantErrs(t, j.Validate(nil), `state: "Completed" cannot be set; a job becomes Completed or Faulted when its last occurrence has run (use Enabled or Disabled)`)
}

func TestParseJobScheduleNeverMatches(t *testing.T) {
	_, err := scheduler.ParseJob([]byte(`{"action": `+httpAction+`, "recurrence": {"frequency": "month", "schedule": {"months": [2], "monthDays": [30]}}}`), nil)
	if err == nil {
		t.Fatal("ParseJob(February 30th every year) succeeded, want error")
	}
	errs := scheduler.ValidationErrors(err)
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Path, "recurrence") {
		t.Errorf("ParseJob(February 30th) = %v, want one problem under recurrence", err)
	}
	if !strings.Contains(err.Error(), "recurrence.schedule") {
		t.Errorf("error %q does not name recurrence.schedule", err)
	}
}
