package scheduler

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jobclock/scheduler/action"
)

const fastHTTP = `{"type": "http", "request": {"uri": "http://example.com/", "method": "get"}}`

// fastCases are inputs of every shape the fast path meets, valid and not.
// The ones marked fast must take the fast path.
var fastCases = []struct {
	in   string
	fast bool
}{
	{`{"action": ` + fastHTTP + `}`, true},
	{`{"Action": {"TYPE": "HTTPS", "Request": {"URI": "https://example.com/a?b=c", "Method": "Post", "Body": "x",
		"headers": {"X-A": "1", "x-a": "2", "X-Null": null}}}}`, true},
	{`{"properties": {"action": ` + fastHTTP + `, "state": "disabled"}, "id": "x", "name": null, "type": "t"}`, true},
	{`{"id": "x", "PROPERTIES": {"action": ` + fastHTTP + `}}`, true},
	{"// leading\n{ /* a */ \"action\" /* b */ : " + fastHTTP + " , // c\n \"state\" : \"ENABLED\" , } // end", true},
	{`{"action": ` + fastHTTP + `, "status": {"executionCount": 3, "x": [1, {"y": "\u00e9"}]}}`, true},
	{`{"startTime": "2012-08-04T00:00+02:00", "action": ` + fastHTTP + `}`, true},
	{`{"startTime": "2012-08-04t10:11:12.123456789z", "action": ` + fastHTTP + `}`, true},
	{`{"startTime": "2012-08-04", "action": ` + fastHTTP + `}`, true},
	{`{"startTime": "2012-08-04T00:00:00-0530", "action": ` + fastHTTP + `}`, true},
	{`{"action": {"type": "http", "request": {"uri": "http://example.com/\u00e9", "method": "GET", "body": "caf\u00e9 \"q\" \ud83d\ude00 ` + "é" + `"}}}`, true},
	{`{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"},
		"retryPolicy": {"type": "fixed", "count": 3, "interval": "PT1M"}}}`, true},
	{`{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"},
		"retryPolicy": {"retryType": "Exponential", "retryCount": 4, "retryInterval": "00:00:30", "minimumInterval": "PT20S", "maximumInterval": "PT1H"}}}`, true},
	{`{"action": {"type": "kafka", "custom": {"b": [1, 2.5, -3e2, true, null, "x<y>&"], "a": {"z": {}, "y": []}}}}`, true},
	{`{"action": {"type": "Kafka", "custom": "just a string"}}`, true},
	{`{"action": {"type": "Kafka", "custom": null}}`, true},
	{`{"action": {"type": "storageQueue", "queueMessage": {"storageAccount": "a", "queueName": "q", "sasToken": "s", "message": "m"}}}`, true},
	{`{"action": {"type": "serviceBusTopic", "serviceBusTopicMessage": {"namespace": "n", "topicPath": "t", "message": "m",
		"transportType": "amqp", "authentication": {"type": "sharedaccesskey", "sasKeyName": "k", "sasKey": "v"},
		"brokeredMessageProperties": {"timeToLive": "P1D", "scheduledEnqueueTimeUtc": "2012-11-04"}, "customMessageProperties": {"a": "b"}}}}`, true},
	{`{"action": {"type": "serviceBusQueue", "serviceBusQueueMessage": {"namespace": "n", "queueName": "q", "message": "m"}}}`, true},
	{`{"action": {"type": "https", "request": {"uri": "https://example.com/", "method": "GET",
		"authentication": {"type": "basic", "username": "u", "password": "p"}}}}`, true},
	{`{"action": {"type": "https", "request": {"uri": "https://example.com/", "method": "GET",
		"httpAuthentication": {"type": "ActiveDirectoryOAuth", "tenant": "t", "audience": "a", "clientId": "c", "secret": "s", "authority": "https://login.example.com"}}}}`, true},
	{`{"action": ` + fastHTTP + `, "recurrence": {"frequency": "minute", "interval": 15, "count": 10, "endTime": "2030-01-01T00:00Z"}}`, true},
	{`{"action": ` + fastHTTP + `, "recurrence": {"frequency": "Week", "schedule": {"weekDays": ["monday", "FRIDAY"], "hours": [10, 22], "minutes": [0, 30]}}}`, true},
	{`{"action": ` + fastHTTP + `, "recurrence": {"frequency": "month", "interval": 2, "count": 3,
		"schedule": {"monthlyOccurrences": [{"day": "friday", "Occurrence": -1}], "minutes": [null, 30], "monthDays": [-1, 15]}}}`, true},
	{`{"action": ` + fastHTTP + `, "recurrence": {"frequency": "year", "timeZone": "Europe/Berlin", "schedule": {"months": [1, 7], "hours": [9], "minutes": [0]}}}`, true},
	{`{"action": ` + fastHTTP + `, "recurrence": {"cron": "*/15 9-16 * * 1-5"}}`, true},
	{`{"action": ` + fastHTTP + `, "recurrence": {"frequency": "day", "schedule": {}}}`, true},
	{`{"action": ` + fastHTTP + `, "recurrence": {"frequency": "day", "schedule": {"hours": []}}}`, true},

	// Valid, but for the general path.
	{`{"action": ` + fastHTTP + `, "state": "Enabled", "state": "Disabled"}`, false},
	{`{"action": ` + fastHTTP + `, "\u0073tate": "Disabled"}`, false},
	{"{\"action\": " + fastHTTP + "} // caf\u00e9", false},
	{`{"action": ` + fastHTTP + `, "recurrence": {"frequency": "day", "interval": null}}`, false},

	// Invalid.
	{`{"action": ` + fastHTTP + `, "State": "Enabled", "state": "Disabled"}`, false},
	{`{"action": ` + fastHTTP + `, "bogus": 1}`, false},
	{`{"action": ` + fastHTTP + `, "state": 3}`, false},
	{`{"action": ` + fastHTTP + `, "recurrence": {"frequency": "day", "interval": 0}}`, false},
	{`{"action": ` + fastHTTP + `, "recurrence": {"frequency": "day", "interval": -0}}`, false},
	{`{"action": ` + fastHTTP + `, "recurrence": {"frequency": "day", "interval": 1.0}}`, false},
	{`{"action": ` + fastHTTP + `, "recurrence": {"frequency": "day", "count": 99999999999999999999}}`, false},
	{`{"action": ` + fastHTTP + `, "recurrence": {"frequency": "day", "schedule": {"hours": [25]}}}`, false},
	{`{"action": ` + fastHTTP + `, "startTime": "yesterday"}`, false},
	{`{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET"}, "retryPolicy": {"retryType": "fixed", "retryInterval": "PT0S"}}}`, false},
	{`{"action": {"type": "http", "request": {"uri": "ftp://example.com/", "method": "GET"}}}`, false},
	{`{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET", "body": "\x01"}}}`, false},
	{`{"action": {"type": "http", "request": {"uri": "http://example.com/", "method": "GET", "body": "\q"}}}`, false},
	{"{\"action\": {\"type\": \"http\", \"request\": {\"uri\": \"http://example.com/\", \"method\": \"GET\", \"body\": \"\xff\"}}}", false},
	{`{"properties": {"action": ` + fastHTTP + `}, "id": 3}`, false},
	{`{"properties": {"action": ` + fastHTTP + `}, "extra": "x"}`, false},
	{`{"properties": {"action": ` + fastHTTP + `}, "Properties": {}}`, false},
	{`{"properties": [], "id": "x"}`, false},
	{`{"action": ` + fastHTTP + `,,}`, false},
	{`{"action": ` + fastHTTP + `} x`, false},
	{`{"action": ` + fastHTTP + `} /* open`, false},
	{`{"action": ` + fastHTTP + `, "recurrence": {"frequency": "day", "count": 01}}`, false},
	{`{"action": ` + fastHTTP + `, "recurrence": {"frequency": "day", "count": 1e}}`, false},
	{`{"action": ` + fastHTTP + `, "recurrence": {"frequency": "day", "count": 1x}}`, false},
	{`{"action": ` + fastHTTP + `, "recurrence": {"frequency": "day", "count": truex}}`, false},
	{`{"action": {"type": "Kafka", "custom": {"a": 1, "a": 2}}}`, true},
	{`{"action": {"type": "Kafka", "custom": [,]}}`, false},
	{`{"action": ` + fastHTTP + `, "status": [1,]}`, true},
	{`[]`, false}, {`null`, false}, {`"x"`, false}, {``, false}, {`{`, false}, {`{}`, false},
	{`{"action": {"type": "Kafka", "custom": "` + strings.Repeat("x", MaxJobSize) + `"}}`, false},
	{`{"action": {"type": "Kafka", "custom": ` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}}`, false},
}

// fastOpts are the options the cases are parsed with.
var fastOpts = &ParseOptions{ActionTypes: []action.Type{"Kafka"}, Now: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}

// checkFastAgrees fails when the fast path accepts in but the general
// path does not, or returns another job.
func checkFastAgrees(t *testing.T, in []byte, opts *ParseOptions) (fast bool) {
	t.Helper()
	fj, ok := parseFast(in, opts)
	gj, err := parseGeneral(in, opts)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("parseFast(%q) accepted what the general path refuses: %v", in, err)
	}
	if !reflect.DeepEqual(fj, gj) {
		t.Fatalf("parseFast(%q) =\n%#v\nthe general path gives\n%#v", in, fj, gj)
	}
	return true
}

func TestParseFastAgrees(t *testing.T) {
	for _, tt := range fastCases {
		if got := checkFastAgrees(t, []byte(tt.in), fastOpts); got != tt.fast {
			_, err := parseGeneral([]byte(tt.in), fastOpts)
			t.Errorf("parseFast(%q) took the fast path: %v, want %v (general path: %v)", tt.in, got, tt.fast, err)
		}
	}
	files, _ := filepath.Glob("testdata/*.json")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !checkFastAgrees(t, data, fastOpts) {
			t.Errorf("%s did not take the fast path", name)
		}
	}
}

// FuzzParseFastAgrees checks on any input that the fast path accepts only
// what the general path accepts, with the same result.
func FuzzParseFastAgrees(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, tt := range fastCases {
		f.Add([]byte(tt.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastAgrees(t, data, fastOpts)
	})
}
