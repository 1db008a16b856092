package jobdef_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/jobdef"
)

// parseProblems returns the problems ParseJob finds with in, as strings.
func parseProblems(t *testing.T, in string) []string {
	t.Helper()
	_, err := jobdef.ParseJob([]byte(in), nil)
	var got []string
	for _, e := range jobdef.ValidationErrors(err) {
		got = append(got, e.Error())
	}
	if err != nil && got == nil {
		t.Fatalf("ParseJob(%s) = %v, want validation errors", in, err)
	}
	return got
}

// TestParseJobURIUserInfo checks that a request's uri may hold neither a
// user name nor a password, in the action and in its errorAction, in the
// properties object and in the envelope, and that the error does not show
// the uri (which holds the password).
func TestParseJobURIUserInfo(t *testing.T) {
	const get = `"method": "GET"`
	tests := []struct {
		name, in string
		want     []string
	}{
		{"user and password", `{"action": {"type": "Http", "request": {"uri": "http://alice:s3cret@127.0.0.1:8080/x", ` + get + `}}}`,
			[]string{"action.request.uri: must not hold a user name or password; put them in action.request.authentication (type Basic)"}},
		{"user alone, https", `{"action": {"type": "Https", "request": {"uri": "https://alice@example.com/", ` + get + `}}}`,
			[]string{"action.request.uri: must not hold a user name or password; put them in action.request.authentication (type Basic)"}},
		{"error action", `{"action": {"type": "Http", "request": {"uri": "http://example.com/", ` + get + `},
			"errorAction": {"type": "Http", "request": {"uri": "http://bob:pw@example.com/err", ` + get + `}}}}`,
			[]string{"action.errorAction.request.uri: must not hold a user name or password; put them in action.errorAction.request.authentication (type Basic)"}},
		{"envelope", `{"properties": {"action": {"type": "Http", "request": {"uri": "http://alice:s3cret@example.com/", ` + get + `}}}}`,
			[]string{"properties.action.request.uri: must not hold a user name or password; put them in properties.action.request.authentication (type Basic)"}},
		{"port too large", `{"action": {"type": "Http", "request": {"uri": "http://example.com:99999/", ` + get + `}}}`,
			[]string{`action.request.uri: "http://example.com:99999/" has port 99999, more than 65535`}},
		{"port too large, not plain", `{"action": {"type": "Http", "request": {"uri": "http://example.com:65536/a%20b", ` + get + `}}}`,
			[]string{`action.request.uri: "http://example.com:65536/a%20b" has port 65536, more than 65535`}},
		{"port 65535", `{"action": {"type": "Http", "request": {"uri": "http://example.com:65535/", ` + get + `}}}`, nil},
		{"at sign in the path", `{"action": {"type": "Http", "request": {"uri": "http://example.com/a@b", ` + get + `}}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, parseProblems(t, tt.in)); diff != "" {
				t.Errorf("ParseJob(%s) problems (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}
