package jobdef_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/jobdef"
)

// TestDecodeMembersGivenTwice pins how one pass reads members given twice:
// every member given again, with the same name, in another case or by an
// alias, is a problem at its path; with the same name the first value
// counts, of two spellings the first in byte order counts and the other is
// its duplicate, the problems of a value that does not count are dropped,
// and at one path a problem with a name comes before one with a value.
func TestDecodeMembersGivenTwice(t *testing.T) {
	h := `{"type": "http", "request": {"uri": "http://x/", "method": "get"}}`
	tests := []struct {
		in   string
		want []string
	}{
		{`{"action": ` + h + `, "Action": {"type": 5}}`, []string{`action: is a duplicate of "Action"`, `action.type: 5 is not a string`}},
		{`{"action": {"type": 5}, "Action": ` + h + `}`, []string{`action: is a duplicate of "Action"`}},
		{`{"action": {"type": 5}, "action": ` + h + `}`, []string{`action: is given more than once`, `action.type: 5 is not a string`}},
		{`{"action": ` + h + `, "action": {"type": 5}}`, []string{`action: is given more than once`}},
		{`{"action": ` + h + `, "state": "Enabled", "state": "Disabled", "state": "x"}`, []string{`state: is given more than once`}},
		{`{"action": ` + h + `, "state": "Enabled", "State": "Disabled", "state": "Disabled"}`, []string{`state: is a duplicate of "State"`}},
		{`{"action": {"type": "http", "request": {"uri": "http://x/", "method": "get"}, "retryPolicy": {"retryType": "none", "type": "none"}}}`,
			[]string{`action.retryPolicy.type: is a duplicate of "retryType"`}},
		{`{"b": 1, "action": ` + h + `, "b": 2, "B": 3}`, []string{`B: unknown field`, `b: unknown field`}},
		{`{"action": {"type": "http", "request": {"uri": "http://x/", "method": "get", "headers": {"a": 1, "a": "x", "b": "y", "b": 2, "c": null}}}}`,
			[]string{`action.request.headers.a: is given more than once`, `action.request.headers.a: 1 is not a string`, `action.request.headers.b: is given more than once`}},
		{`{"action": {"type": "kafka", "custom": {"a": 1, "a": 2, "b": [{"x": 1, "x": null}, null]}}}`,
			[]string{`action.custom.a: is given more than once`, `action.custom.b[0].x: is given more than once`}},
		{`{"properties": {"action": ` + h + `, "state": "Enabled", "state": "Disabled"}}`, []string{`properties.state: is given more than once`}},
		{`{"properties": {"action": ` + h + `}, "properties": {"action": ` + h + `, "state": "Disabled"}}`, []string{`properties: is given more than once`}},
		{`{"id": "a", "properties": {"action": {"type": 5}}, "properties": {"action": ` + h + `}}`,
			[]string{`properties: is given more than once`, `properties.action.type: 5 is not a string`}},
		{`{"properties": {"action": ` + h + `}, "id": "a", "ID": "b", "id": "c", "tags": {"t": 1, "t": "2"}}`,
			[]string{`id: is given more than once`, `id: is a duplicate of "ID"`, `tags.t: is given more than once`, `tags.t: 1 is not a string`}},
		{`{"action": {"type": "http", "request": {"uri": "http://x/", "method": "get", "URI": 5, "Uri": "http://y/"}}}`,
			[]string{`action.request.Uri: is a duplicate of "URI"`, `action.request.uri: is a duplicate of "URI"`, `action.request.uri: 5 is not a string`}},
		{`{"action": ` + h + `, "recurrence": {"frequency": "hour", "interval": 0, "Interval": 2, "count": "3"}}`,
			[]string{`recurrence.count: "3" is not an integer`, `recurrence.interval: is a duplicate of "Interval"`}},
		{`{"action": ` + h + `, "properties": {"action": ` + h + `}}`, []string{`action: unknown field, it belongs in properties`}},
		{`{"properties": {"action": ` + h + `, "state": "disabled"}, "id": 1, "Properties": 2, "type": "x", "extra": [1]}`,
			[]string{`Properties: is a duplicate of "properties"`, `extra: unknown field`, `id: 1 is not a string`}},
		{`{"action": ` + h + `, "startTime": "yesterday", "state": "Completed"}`,
			[]string{`startTime: "yesterday" is not a time; use ISO 8601 such as "2012-08-04T00:00Z" or "2012-11-04"`,
				`state: "Completed" cannot be set; a job becomes Completed or Faulted when its last occurrence has run (use Enabled or Disabled)`}},
		{`{"action": {"type": "http", "request": {"uri": "http://x/", "method": "get", "authentication": {"type": "basic", "username": "u", "password": 5}}}}`,
			[]string{`action.request.authentication: requires an https uri, so that credentials are not sent in clear text`, `action.request.authentication.password: is not a string`}},
		{`{"action": {"type": "kafka", "custom": {"b": [1, "<&>"], "a": null}}, "status": [1, 2]}`, nil},
	}
	opts := &jobdef.ParseOptions{ActionTypes: []action.Type{"Kafka"}}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, problemLines(tt.in, opts)); diff != "" {
			t.Errorf("ParseJob(%s) (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestCustomPayloadKept: a custom payload is kept compact, its members in
// order, nulls and all.
func TestCustomPayloadKept(t *testing.T) {
	in := `{"action": {"type": "kafka", "custom": {"b": [null, {"y": [], "x": {}}], "a": null, "c": "<&>", "d": 1.50}}}`
	job, err := jobdef.ParseJob([]byte(in), &jobdef.ParseOptions{ActionTypes: []action.Type{"Kafka"}})
	if err != nil {
		t.Fatalf("ParseJob(%s): %v", in, err)
	}
	want := `{"a":null,"b":[null,{"x":{},"y":[]}],"c":"\u003c\u0026\u003e","d":1.50}`
	if got := string(job.Action.Custom); got != want {
		t.Errorf("ParseJob(%s).Action.Custom = %s, want %s", in, got, want)
	}
}

// problemLines returns the lines of ParseJob's error for in, nil for none.
func problemLines(in string, opts *jobdef.ParseOptions) []string {
	_, err := jobdef.ParseJob([]byte(in), opts)
	if err == nil {
		return nil
	}
	return strings.Split(fmt.Sprint(err), "\n")
}

// TestDidYouMean pins the suggestions that come with an unknown member or
// an enumeration value that is not one: only names valid at that place,
// and only those close to what was given; and what empty input is told.
func TestDidYouMean(t *testing.T) {
	h := `{"type": "http", "request": {"uri": "http://x/", "method": "get"}}`
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{name: "member typo", in: `{"action": {"type": "http", "request": {"urii": "http://x/", "method": "get"}}}`,
			want: []string{`action.request.uri: is required`, `action.request.urii: unknown field, did you mean "uri"?`}},
		{name: "top member typo", in: `{"action": ` + h + `, "recurence": {"frequency": "day"}}`,
			want: []string{`recurence: unknown field, did you mean "recurrence"?`}},
		{name: "member one level too high", in: `{"action": ` + h + `, "recurrence": {"frequency": "month", "monthDays": [1]}}`,
			want: []string{`recurrence.monthDays: unknown field, it belongs in recurrence.schedule`}},
		{name: "member of the properties beside them", in: `{"properties": {"action": ` + h + `}, "state": "Enabled"}`,
			want: []string{`state: unknown field, it belongs in properties`}},
		{name: "envelope member typo", in: `{"properties": {"action": ` + h + `}, "nmae": "x"}`,
			want: []string{`nmae: unknown field, did you mean "name"?`}},
		{name: "nothing close", in: `{"action": ` + h + `, "colour": 1}`,
			want: []string{`colour: unknown field`}},
		{name: "action type", in: `{"action": {"type": "Htp", "request": {"uri": "http://x/", "method": "get"}}}`,
			want: []string{`action.type: "Htp" is not an action type, did you mean "Http"?`}},
		{name: "action type of the host", in: `{"action": {"type": "Kafak", "custom": {}}}`,
			want: []string{`action.type: "Kafak" is not an action type, did you mean "Kafka"?`}},
		{name: "empty", in: " \n// nothing\n", want: []string{`job: is empty; a job definition is a JSON object such as {"action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}}}`}},
		{name: "enum values", in: `{"action": {"type": "http", "request": {"uri": "http://x/", "method": "GETT"},
			"retryPolicy": {"retryType": "Fixd"}}, "recurrence": {"frequency": "Minit"}, "state": "Enabld"}`,
			want: []string{`action.request.method: "GETT" is not an HTTP method, did you mean "GET"?`,
				`action.retryPolicy.retryType: "Fixd" is not a retry type, did you mean "Fixed"?`,
				`recurrence.frequency: "Minit" is not a frequency, did you mean "Minute"?`,
				`state: "Enabld" is not a job state, did you mean "Enabled"?`}},
		{name: "enum value with nothing close keeps the list", in: `{"action": ` + h + `, "recurrence": {"frequency": "Fortnight"}}`,
			want: []string{`recurrence.frequency: "Fortnight" is not a frequency (Second, Minute, Hour, Day, Week, Month or Year)`}},
		{name: "a time zone close to one of the Windows table's", in: `{"action": ` + h + `, "recurrence": {"frequency": "Day", "timeZone": "Europe/Pari"}}`,
			want: []string{`recurrence.timeZone: "Europe/Pari" is not a known time zone (an IANA name such as "Europe/Paris" or a Windows name such as "W. Europe Standard Time"), did you mean "Europe/Paris"?`}},
	}
	opts := &jobdef.ParseOptions{ActionTypes: []action.Type{"Kafka"}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, problemLines(tt.in, opts)); diff != "" {
				t.Errorf("ParseJob(%s) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestParseCollectionProblems pins that a collection is read as a job is:
// each problem at its path, with the suggestions of the job's reader, and
// the ARM envelope's own members accepted.
func TestParseCollectionProblems(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // nil: valid
	}{
		{name: "envelope", in: `{"id": "/subscriptions/s/x", "name": "c", "type": "Microsoft.Scheduler/jobCollections", "location": "West Europe",
			"properties": {"sku": {"name": "free"}, "state": "disabled"}}`},
		{name: "member typo", in: `{"properties": {"quota": {"maxJobCont": 3}}}`,
			want: []string{`properties.quota.maxJobCont: unknown field, did you mean "maxJobCount"?`}},
		{name: "member one level too high", in: `{"sku": {"name": "Free"}}`,
			want: []string{`sku: unknown field, it belongs in properties`}},
		{name: "nothing close", in: `{"properties": {"colour": 1}}`,
			want: []string{`properties.colour: unknown field`}},
		{name: "enum values", in: `{"properties": {"sku": {"name": "Fre"}, "state": "Disabld", "quota": {"maxRecurrence": {"frequency": "Minit"}}}}`,
			want: []string{`properties.sku.name: "Fre" is not a plan, did you mean "Free"?`,
				`properties.state: "Disabld" is not a settable state, did you mean "Disabled"?`,
				`properties.quota.maxRecurrence.frequency: "Minit" is not a frequency, did you mean "Minute"?`}},
		{name: "enum value with nothing close keeps the list", in: `{"properties": {"sku": {"name": "Cheap"}}}`,
			want: []string{`properties.sku.name: "Cheap" is not a plan (Free, Standard, P10Premium or P20Premium)`}},
		{name: "wrong type, reported once", in: `{"properties": {"quota": {"maxJobCount": "ten"}}}`,
			want: []string{`properties.quota.maxJobCount: "ten" is not an integer`}},
		{name: "reading, then rules", in: `{"properties": {"quota": {"maxJobCount": -1, "maxJobOccurence": 1}}}`,
			want: []string{`properties.quota.maxJobOccurence: unknown field, did you mean "maxJobOccurrence"?`,
				`properties.quota.maxJobCount: -1 is negative`}},
		{name: "limits", in: `{"properties": {"limits": [{"key": "HOST", "maxConcurrent": 5, "ratePerMinute": 120}, {"key": "job", "ratePerMinute": 1}]}}`},
		{name: "limit problems", in: `{"properties": {"limits": [{"key": "host", "maxConcurrent": 5}, {"key": "Host", "ratePerMinute": 60001},
			{"key": "target", "maxConcurrent": -1}, {"maxConcurent": 2}, {"key": "job", "maxConcurrent": 1001}]}}`,
			want: []string{`properties.limits[3].maxConcurent: unknown field, did you mean "maxConcurrent"?`,
				`properties.limits[1].key: "host" is also the key of properties.limits[0]: give one limit per key`,
				`properties.limits[1].ratePerMinute: 60001 is not between 1 and 60000`,
				`properties.limits[2].key: "target" is not a limit key (host, job or collection)`,
				`properties.limits[2].maxConcurrent: -1 is not between 1 and 1000`,
				`properties.limits[3].key: is required (host, job or collection)`,
				`properties.limits[3]: sets neither maxConcurrent nor ratePerMinute`,
				`properties.limits[4].maxConcurrent: 1001 is not between 1 and 1000`}},
		{name: "not an object", in: `[1]`, want: []string{`collection: [1] is not an object`}},
		{name: "empty", in: " // nothing\n",
			want: []string{`collection: is empty; a job collection is a JSON object such as {"properties": {"sku": {"name": "Standard"}}}`}},
		{name: "member given twice", in: `{"properties": {"sku": {"name": "free", "name": "standard"}, "state": "disabled", "State": "enabled"}}`,
			want: []string{`properties.sku.name: is given more than once`, `properties.state: is a duplicate of "State"`}},
		{name: "not JSON", in: `{"properties": {]}`, want: []string{`line 1, column 17: invalid character ']' at start of value`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := jobdef.ParseCollection([]byte(tt.in))
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseCollection(%s) (-want +got):\n%s", tt.in, diff)
			}
			if (c == nil) == (tt.want == nil) {
				t.Errorf("ParseCollection(%s) = %v, %v: want a collection exactly when there is no error", tt.in, c, err)
			}
		})
	}
	c, err := jobdef.ParseCollection([]byte(tests[0].in))
	if err != nil || c.Plan() != jobdef.SKUFree || c.State() != jobdef.CollectionDisabled || c.Location != "West Europe" {
		t.Errorf("ParseCollection(envelope) = %+v, %v; want plan Free, state Disabled, location West Europe", c, err)
	}
}
