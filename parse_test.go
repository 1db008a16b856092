package scheduler_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

func ptr[T any](v T) *T { return &v }

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestParseJobDocumentedExample parses the comprehensive example of the
// Azure Scheduler concepts page, copied as printed (comments, trailing
// commas, the odd indentation and the stray space in the status's
// nextExecutionTime included), and checks every field the page describes.
func TestParseJobDocumentedExample(t *testing.T) {
	data, err := os.ReadFile("testdata/azure-example.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := scheduler.ParseJob(data, nil)
	if err != nil {
		t.Fatalf("ParseJob: %v", err)
	}
	want := &scheduler.Job{
		StartTime: ptr(date("2012-08-04T00:00:00Z")),
		Action: action.Action{
			Type:        action.HTTP,
			RetryPolicy: &retry.Policy{Type: retry.None},
			Request: &action.HTTPRequest{
				URI:     "http://contoso.com/foo",
				Method:  "PUT",
				Body:    "Posting from a timer",
				Headers: map[string]string{"Content-Type": "application/json"},
			},
			ErrorAction: &action.Action{
				Type:    action.HTTP,
				Request: &action.HTTPRequest{URI: "http://contoso.com/notifyError", Method: "POST"},
			},
		},
		Recurrence: &recurrence.Recurrence{
			Frequency: recurrence.Week,
			Interval:  1,
			Schedule: &recurrence.Schedule{
				WeekDays: []recurrence.Weekday{recurrence.Monday, recurrence.Wednesday, recurrence.Friday},
				Hours:    []int{10, 22},
			},
			Count:   10,
			EndTime: ptr(date("2012-11-04T00:00:00Z")),
		},
		State: scheduler.JobDisabled,
		// Status is read-only and ignored on input.
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseJob(documented example) mismatch (-want +got):\n%s", diff)
	}
}

func TestParseJobStorageQueueExample(t *testing.T) {
	data, err := os.ReadFile("testdata/storagequeue-job.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := scheduler.ParseJob(data, nil)
	if err != nil {
		t.Fatalf("ParseJob: %v", err)
	}
	want := &scheduler.Job{Action: action.Action{
		Type: action.StorageQueue,
		QueueMessage: &action.StorageQueueMessage{
			StorageAccount: "myStorageAccount", QueueName: "myqueue", SASToken: "TOKEN", Message: "My message body",
		},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseJob mismatch (-want +got):\n%s", diff)
	}
}

// TestParseJobRoundTrip checks that marshalling a parsed job writes the
// canonical form, and that it parses back to an equal job.
func TestParseJobRoundTrip(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		if strings.Contains(f, "invalid") {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			first, err := scheduler.ParseJob(data, nil)
			if err != nil {
				t.Fatalf("ParseJob: %v", err)
			}
			out, err := json.Marshal(first)
			if err != nil {
				t.Fatal(err)
			}
			second, err := scheduler.ParseJob(out, nil)
			if err != nil {
				t.Fatalf("ParseJob(marshalled %s): %v", out, err)
			}
			if diff := cmp.Diff(first, second); diff != "" {
				t.Errorf("round trip mismatch (-first +second):\n%s", diff)
			}
			again, _ := json.Marshal(second)
			if string(again) != string(out) {
				t.Errorf("marshal not stable:\n%s\n%s", out, again)
			}
		})
	}
}

func TestParseJobCanonicalSpelling(t *testing.T) {
	in := `{
		"action": {"type": "HTTPS", "request": {"uri": "https://example.com/", "method": "patch"},
			"retryPolicy": {"retryType": "FIXED", "retryInterval": "00:01:00"}},
		"recurrence": {"frequency": "MONTH", "schedule": {"monthlyOccurrences": [
			{"day": "friday", "Occurrence": -1}, {"DAY": "MONDAY", "occurrence": 1}]}},
		"state": "ENABLED"
	}`
	j, err := scheduler.ParseJob([]byte(in), nil)
	if err != nil {
		t.Fatalf("ParseJob: %v", err)
	}
	out, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"action":{"type":"Https","request":{"uri":"https://example.com/","method":"PATCH"},` +
		`"retryPolicy":{"retryType":"Fixed","retryInterval":"PT1M"}},` +
		`"recurrence":{"frequency":"Month","schedule":{"monthlyOccurrences":[{"day":"Friday","Occurrence":-1},{"day":"Monday","Occurrence":1}]}},` +
		`"state":"Enabled"}`
	if string(out) != want {
		t.Errorf("Marshal(ParseJob) =\n%s\nwant\n%s", out, want)
	}
}

// TestParseJobExponentialRetry reads an Exponential retry policy written
// with Azure Logic Apps' member names and writes it back canonically.
func TestParseJobExponentialRetry(t *testing.T) {
	data, err := os.ReadFile("testdata/exponential-retry-job.json")
	if err != nil {
		t.Fatal(err)
	}
	j, err := scheduler.ParseJob(data, nil)
	if err != nil {
		t.Fatalf("ParseJob: %v", err)
	}
	want := &retry.Policy{Type: retry.Exponential, Count: ptr(6), Interval: retry.Duration(20 * time.Second),
		MinimumInterval: retry.Duration(15 * time.Second), MaximumInterval: retry.Duration(10 * time.Minute)}
	if diff := cmp.Diff(want, j.Action.RetryPolicy); diff != "" {
		t.Errorf("retryPolicy mismatch (-want +got):\n%s", diff)
	}
	out, err := json.Marshal(j.Action.RetryPolicy)
	if err != nil {
		t.Fatal(err)
	}
	if w := `{"retryType":"Exponential","retryInterval":"PT20S","retryCount":6,"minimumInterval":"PT15S","maximumInterval":"PT10M"}`; string(out) != w {
		t.Errorf("canonical retryPolicy = %s, want %s", out, w)
	}
}

func TestParseJobKeysAnyCase(t *testing.T) {
	in := `{"StartTime": "2030-01-01T00:00Z", "ACTION": {"Type": "http", "Request": {"URI": "http://example.com/", "Method": "get"}}}`
	j, err := scheduler.ParseJob([]byte(in), nil)
	if err != nil {
		t.Fatalf("ParseJob: %v", err)
	}
	if j.StartTime == nil || !j.StartTime.Equal(date("2030-01-01T00:00:00Z")) || j.Action.Request.URI != "http://example.com/" ||
		j.Action.Request.Method != "GET" {
		t.Errorf("ParseJob(any-case keys) = %+v", j)
	}
}

func TestParseJobEnvelope(t *testing.T) {
	in := `{"id": "/subscriptions/s/resourceGroups/g/providers/Microsoft.Scheduler/jobCollections/jc/jobs/j",
		"name": "jc/j", "type": "Microsoft.Scheduler/jobCollections/jobs",
		"properties": {"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}}}}`
	j, err := scheduler.ParseJob([]byte(in), nil)
	if err != nil {
		t.Fatalf("ParseJob(envelope): %v", err)
	}
	if j.Action.Request == nil || j.Action.Request.URI != "http://example.com/" {
		t.Errorf("ParseJob(envelope).Action = %+v", j.Action)
	}

	_, err = scheduler.ParseJob([]byte(`{"location": "x", "properties": {"action": {"type": "http",
		"request": {"uri": "http://example.com/", "method": "GET"}}, "recurrence": {"frequency": "fortnight"}}}`), nil)
	wantErrs(t, err,
		"location: unknown field",
		`properties.recurrence.frequency: "fortnight" is not a frequency (Second, Minute, Hour, Day, Week, Month or Year)`)

	_, err = scheduler.ParseJob([]byte(`{"properties": 5}`), nil)
	wantErrs(t, err, "properties: 5 is not an object")
}

func TestParseJobCommentsAndTrailingCommas(t *testing.T) {
	in := "/* a job */ {\"action\": {\"type\": \"https\", // the kind\n" +
		"\"request\": {\"uri\": \"https://example.com/\", \"method\": \"GET\",},},} // no newline at the end"
	j, err := scheduler.ParseJob([]byte(in), nil)
	if err != nil {
		t.Fatalf("ParseJob(%q) = %v", in, err)
	}
	if j.Action.Type != action.HTTPS || j.Action.Request.Method != "GET" {
		t.Errorf("ParseJob(%q).Action = %+v", in, j.Action)
	}
}

func TestParseJobStatusIgnored(t *testing.T) {
	in := `{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}},
		"status": {"executionCount": "many", "lastExecutionTime": "yesterday", "bogus": true}}`
	j, err := scheduler.ParseJob([]byte(in), nil)
	if err != nil {
		t.Fatalf("ParseJob: %v", err)
	}
	if j.Status != nil {
		t.Errorf("Status = %+v, want nil (ignored on input)", j.Status)
	}
}

func TestParseJobCustomActionType(t *testing.T) {
	opts := &scheduler.ParseOptions{ActionTypes: []action.Type{"Kafka"}}
	j, err := scheduler.ParseJob([]byte(`{"action": {"type": "kafka", "custom": {"topic": "t", "n": 1.50}}}`), opts)
	if err != nil {
		t.Fatalf("ParseJob: %v", err)
	}
	if j.Action.Type != "Kafka" || string(j.Action.Custom) != `{"n":1.50,"topic":"t"}` {
		t.Errorf("Action = %q %s, want Kafka {\"n\":1.50,\"topic\":\"t\"}", j.Action.Type, j.Action.Custom)
	}
	_, err = scheduler.ParseJob([]byte(`{"action": {"type": "kafka", "custom": {}}}`), nil)
	wantErrs(t, err, `action.type: "kafka" is not an action type (Http, Https, StorageQueue, ServiceBusQueue or ServiceBusTopic)`)
	_, err = scheduler.ParseJob([]byte(`{"action": {"type": "kafka", "request": {"uri": "http://example.com/", "method": "GET"}}}`), opts)
	wantErrs(t, err, "action.request: does not apply to type Kafka")
	_, err = scheduler.ParseJob([]byte(`{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}, "custom": 1}}`), opts)
	wantErrs(t, err, "action.custom: does not apply to type Http")
}

func TestParseTime(t *testing.T) {
	utc := time.UTC
	plus2 := time.FixedZone("", 2*3600)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2012-08-04T00:00Z", time.Date(2012, 8, 4, 0, 0, 0, 0, utc)},
		{"2012-08-04T00:00:00Z", time.Date(2012, 8, 4, 0, 0, 0, 0, utc)},
		{"2012-08-04T00:00:00.123+02:00", time.Date(2012, 8, 4, 0, 0, 0, 123e6, plus2)},
		{"2012-08-04T10:30+02:00", time.Date(2012, 8, 4, 10, 30, 0, 0, plus2)},
		{"2012-08-04T10:30:15+0200", time.Date(2012, 8, 4, 10, 30, 15, 0, plus2)},
		{"2012-08-04T10:30-05", time.Date(2012, 8, 4, 15, 30, 0, 0, utc)},
		{"2012-11-04", time.Date(2012, 11, 4, 0, 0, 0, 0, utc)},
		{"2012-08-04T10:30:00", time.Date(2012, 8, 4, 10, 30, 0, 0, utc)},
		{"2012-08-04T10:30", time.Date(2012, 8, 4, 10, 30, 0, 0, utc)},
		{"2012-08-04t10:30z", time.Date(2012, 8, 4, 10, 30, 0, 0, utc)},
		{"2013-01-09T09:30:00-08:00", time.Date(2013, 1, 9, 17, 30, 0, 0, utc)},
	}
	for _, tt := range tests {
		got, err := scheduler.ParseTime(tt.in)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		if !strings.ContainsAny(tt.in[10:], "Zz+-") && got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) location = %v, want UTC", tt.in, got.Location())
		}
	}
	for _, bad := range []string{"", "tomorrow", "2012-13-01", "2012-08-04T25:00Z", "2012-08-04 10:30Z", "2007-03-01T14:00:00Z ", "12:00"} {
		if got, err := scheduler.ParseTime(bad); err == nil {
			t.Errorf("ParseTime(%q) = %v, want error", bad, got)
		}
	}
}

func TestParseJobTimeAndDurationForms(t *testing.T) {
	in := `{"startTime": "2012-08-04T00:00:00.123+02:00",
		"action": {"type": "serviceBusQueue", "serviceBusQueueMessage": {"namespace": "ns", "queueName": "q",
			"message": "m", "transportType": "amqp",
			"authentication": {"type": "sharedaccesskey", "sasKeyName": "k", "sasKey": "s"},
			"brokeredMessageProperties": {"timeToLive": "1.00:00:00", "scheduledEnqueueTimeUtc": "2012-11-04"}},
			"retryPolicy": {"retryType": "fixed", "retryInterval": "PT1M30S", "retryCount": 0}},
		"recurrence": {"frequency": "day", "endTime": "2012-08-05T00:00"}}`
	j, err := scheduler.ParseJob([]byte(in), nil)
	if err != nil {
		t.Fatalf("ParseJob: %v", err)
	}
	m := j.Action.ServiceBusQueueMessage
	checks := []struct {
		name      string
		got, want any
	}{
		{"startTime", j.StartTime.UTC(), date("2012-08-03T22:00:00.123Z")},
		{"endTime", j.Recurrence.EndTime.UTC(), date("2012-08-05T00:00:00Z")},
		{"scheduledEnqueueTimeUtc", m.BrokeredMessageProperties.ScheduledEnqueueTimeUtc.UTC(), date("2012-11-04T00:00:00Z")},
		{"timeToLive", *m.BrokeredMessageProperties.TimeToLive, retry.Duration(24 * time.Hour)},
		{"retryInterval", j.Action.RetryPolicy.Interval, retry.Duration(90 * time.Second)},
		{"retryCount", *j.Action.RetryPolicy.Count, 0},
		{"transportType", m.TransportType, action.TransportAMQP},
		{"auth type", m.Authentication.Type, "SharedAccessKey"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// wantErrs checks that err lists exactly the given problems, in order,
// each as a *ValidationError matching ErrInvalid.
func wantErrs(t *testing.T, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want %q", want)
	}
	if !errors.Is(err, scheduler.ErrInvalid) {
		t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
	}
	var got []string
	for _, e := range scheduler.ValidationErrors(err) {
		if e.Path == "" || e.Reason == "" {
			t.Errorf("ValidationError %#v has an empty Path or Reason", e)
		}
		got = append(got, e.Error())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors mismatch (-want +got):\n%s\nfull error:\n%v", diff, err)
	}
	if strings.Join(got, "\n") != err.Error() {
		t.Errorf("err.Error() = %q, want the problems one per line", err.Error())
	}
}

func TestValidationErrorText(t *testing.T) {
	e := &scheduler.ValidationError{Path: "recurrence.schedule.hours[1]", Value: "25", Reason: "is not an hour (0-23)"}
	if got, want := e.Error(), "recurrence.schedule.hours[1]: 25 is not an hour (0-23)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e = &scheduler.ValidationError{Path: "action", Reason: "is required"}
	if got, want := e.Error(), "action: is required"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	var ve *scheduler.ValidationError
	wrapped := errors.Join(errors.New("other"), e)
	if !errors.As(wrapped, &ve) || ve != e || !errors.Is(wrapped, scheduler.ErrInvalid) {
		t.Errorf("errors.As/Is on a joined ValidationError failed")
	}
	if errors.Is(errors.New("x"), scheduler.ErrInvalid) {
		t.Errorf("unrelated error matches ErrInvalid")
	}
}

func TestParseJobSyntaxErrors(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		line, col  int
		msgContain string
	}{
		{"missing value", "{\n  \"action\": ,\n}", 2, 13, ""},
		{"unterminated", "{\n  \"action\": {\n", 3, 1, "EOF"},
		{"bad literal", "{\"state\": enabled}", 1, 11, "invalid"},
		{"two values", "{} {}", 1, 4, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scheduler.ParseJob([]byte(tt.in), nil)
			var se *scheduler.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("ParseJob(%q) = %v, want a *SyntaxError", tt.in, err)
			}
			if se.Line != tt.line || se.Column != tt.col || !strings.Contains(se.Msg, tt.msgContain) {
				t.Errorf("ParseJob(%q) = line %d col %d %q, want line %d col %d containing %q", tt.in, se.Line, se.Column, se.Msg, tt.line, tt.col, tt.msgContain)
			}
			if !errors.Is(err, scheduler.ErrInvalid) {
				t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
			}
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Errorf("Error() = %q, want it to start with the line", err.Error())
			}
		})
	}
}

func TestParseJobSize(t *testing.T) {
	opts := &scheduler.ParseOptions{ActionTypes: []action.Type{"Blob"}}
	mk := func(n int) []byte {
		// {"action":{"type":"Blob","custom":"xxx"}} is 38 bytes plus n.
		return []byte(`{"action": {"type": "Blob", "custom": "` + strings.Repeat("x", n) + `"}}` + "\n// comments and spaces do not count " + strings.Repeat(" ", 20000))
	}
	if _, err := scheduler.ParseJob(mk(scheduler.MaxJobSize-38), opts); err != nil {
		t.Errorf("ParseJob(16,000 bytes) = %v, want nil", err)
	}
	_, err := scheduler.ParseJob(mk(scheduler.MaxJobSize-37), opts)
	wantErrs(t, err, "job: is 16001 bytes as compact JSON (without whitespace and comments), more than the limit of 16,000")

	// In an envelope, the limit is the definition's, its properties: the
	// envelope's other members do not count, whether properties comes
	// first or not.
	def := func(n int) string {
		return `{"action": {"type": "Blob", "custom": "` + strings.Repeat("x", n) + `"}}`
	}
	for _, wrap := range []func(string) string{
		func(d string) string { return `{"properties": ` + d + `, "name": "j", "tags": {"team": "ops"}}` },
		func(d string) string {
			return `{"name": "j", "tags": {"team": "ops"},` + "\n  " + `"properties": ` + d + `}`
		},
	} {
		if _, err := scheduler.ParseJob([]byte(wrap(def(scheduler.MaxJobSize-38))), opts); err != nil {
			t.Errorf("ParseJob(envelope of a definition of 16,000 bytes) = %v, want nil", err)
		}
		_, err := scheduler.ParseJob([]byte(wrap(def(scheduler.MaxJobSize-37))), opts)
		wantErrs(t, err, "properties: is 16001 bytes as compact JSON (without whitespace and comments), more than the limit of 16,000")
	}

	_, err = scheduler.ParseJob(make([]byte, scheduler.MaxInputSize+1), nil)
	if !errors.Is(err, scheduler.ErrInvalid) {
		t.Errorf("ParseJob(huge) = %v, want ErrInvalid", err)
	}
}

func BenchmarkParseJob(b *testing.B) {
	data, err := os.ReadFile("testdata/azure-example.json")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := scheduler.ParseJob(data, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestForcePersistenceRoundTrip: brokeredMessageProperties.forcePersistence
// false is kept as false, not dropped, and an absent one stays absent.
func TestForcePersistenceRoundTrip(t *testing.T) {
	for _, tt := range []struct{ given, want string }{
		{`"forcePersistence": false, `, `"forcePersistence":false`},
		{`"forcePersistence": true, `, `"forcePersistence":true`},
		{``, ``},
	} {
		in := `{"action": {"type": "serviceBusQueue", "serviceBusQueueMessage": {"namespace": "ns", "queueName": "q", "message": "m",
			"authentication": {"type": "SharedAccessKey", "sasKeyName": "k", "sasKey": "s"},
			"brokeredMessageProperties": {` + tt.given + `"label": "x"}}}}`
		j, err := scheduler.ParseJob([]byte(in), nil)
		if err != nil {
			t.Fatalf("ParseJob(%s): %v", in, err)
		}
		out, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(out); tt.want != "" && !strings.Contains(got, tt.want) || tt.want == "" && strings.Contains(got, "forcePersistence") {
			t.Errorf("given %q, marshalled %s, want %q in it", tt.given, got, tt.want)
		}
	}
}
