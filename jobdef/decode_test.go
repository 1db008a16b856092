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
// with the same name the later value counts, of two spellings the first in
// byte order counts and the other is its duplicate, the problems of a
// value that does not count are dropped, and at one path a problem with a
// name comes before one with a value. These are the answers of the parser
// that read a whole document into a tree before checking it.
func TestDecodeMembersGivenTwice(t *testing.T) {
	h := `{"type": "http", "request": {"uri": "http://x/", "method": "get"}}`
	tests := []struct {
		in   string
		want []string
	}{
		{`{"action": ` + h + `, "Action": {"type": 5}}`, []string{`action: is a duplicate of "Action"`, `action.type: 5 is not a string`}},
		{`{"action": {"type": 5}, "Action": ` + h + `}`, []string{`action: is a duplicate of "Action"`}},
		{`{"action": {"type": 5}, "action": ` + h + `}`, nil},
		{`{"action": ` + h + `, "action": {"type": 5}}`, []string{`action: is required`, `action.type: 5 is not a string`}},
		{`{"b": 1, "action": ` + h + `, "b": 2, "B": 3}`, []string{`B: unknown field`, `b: unknown field`}},
		{`{"action": {"type": "http", "request": {"uri": "http://x/", "method": "get", "headers": {"a": 1, "a": "x", "b": "y", "b": 2, "c": null}}}}`,
			[]string{`action.request.headers.b: 2 is not a string`}},
		{`{"action": {"type": "http", "request": {"uri": "http://x/", "method": "get", "URI": 5, "Uri": "http://y/"}}}`,
			[]string{`action.request.Uri: is a duplicate of "URI"`, `action.request.uri: is a duplicate of "URI"`, `action.request.uri: 5 is not a string`}},
		{`{"action": ` + h + `, "recurrence": {"frequency": "hour", "interval": 0, "Interval": 2, "count": "3"}}`,
			[]string{`recurrence.count: "3" is not an integer`, `recurrence.interval: is a duplicate of "Interval"`}},
		{`{"action": ` + h + `, "properties": {"action": ` + h + `}}`, []string{`action: unknown field`}},
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
		_, err := jobdef.ParseJob([]byte(tt.in), opts)
		var got []string
		if err != nil {
			got = strings.Split(fmt.Sprint(err), "\n")
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseJob(%s) (-want +got):\n%s", tt.in, diff)
		}
	}
}
