package jobdef_test

import (
	"encoding/json"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/jobdef"
	"github.com/jobclock/scheduler/retry"
)

// TestSizes pins the size of a job definition: every job a store keeps in
// memory holds one, and the Go allocator rounds 176 bytes to 176 but 184
// to 192, so 8 bytes more cost 16 per job (16 MB at a million jobs). The
// Action is embedded in the Job.
func TestSizes(t *testing.T) {
	if n := unsafe.Sizeof(jobdef.Job{}); n > 176 {
		t.Errorf("jobdef.Job takes %d bytes, want at most 176", n)
	}
	if n := unsafe.Sizeof(action.Action{}); n > 96 {
		t.Errorf("action.Action takes %d bytes, want at most 96", n)
	}
}

// TestActionTimeout: "timeout" on an action and on its errorAction is
// kept as given, written back as ISO 8601, and out of its bounds is an
// error at its path.
func TestActionTimeout(t *testing.T) {
	const req = `"request": {"uri": "http://example.com/", "method": "GET"}`
	def := func(timeout, errorTimeout string) []byte {
		return []byte(`{"action": {"type": "Http", "timeout": ` + timeout + `, ` + req +
			`, "errorAction": {"type": "Http", "timeout": ` + errorTimeout + `, ` + req + `}}}`)
	}
	j, err := jobdef.ParseJob(def(`"PT30S"`, `"PT1H"`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if j.Action.Timeout != retry.Duration(30*time.Second) || j.Action.ErrorAction.Timeout != retry.Duration(time.Hour) {
		t.Errorf("timeouts = %v and %v, want PT30S and PT1H", j.Action.Timeout, j.Action.ErrorAction.Timeout)
	}
	data, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	back, err := jobdef.ParseJob(data, nil)
	if err != nil || back.Action.Timeout != j.Action.Timeout || back.Action.ErrorAction.Timeout != j.Action.ErrorAction.Timeout {
		t.Errorf("round trip of %s = %+v, %v", data, back, err)
	}

	for _, tt := range []struct {
		name          string
		timeout, errT string
		want          []string
	}{
		{"too short", `"PT0.5S"`, `"PT1S"`, []string{`action.timeout: "PT0.5S" is out of range (PT1S to PT1H)`}},
		{"too long", `"PT1S"`, `"PT1H1S"`, []string{`action.errorAction.timeout: "PT1H1S" is out of range (PT1S to PT1H)`}},
		{"zero", `"PT0S"`, `"P1D"`, []string{`action.errorAction.timeout: "P1D" is out of range (PT1S to PT1H)`,
			`action.timeout: "PT0S" is not longer than zero`}},
		{"not a duration", `30`, `"soon"`, []string{
			`action.errorAction.timeout: "soon" is not a duration (missing P); use ISO 8601 such as "PT30S" or "P1D"`,
			`action.timeout: 30 is not a duration; use an ISO 8601 string such as "PT30S"`}},
	} {
		_, err := jobdef.ParseJob(def(tt.timeout, tt.errT), nil)
		if diff := cmp.Diff(tt.want, paths(err)); diff != "" {
			t.Errorf("%s: errors (-want +got):\n%s", tt.name, diff)
		}
	}

	// From Go, the same check.
	bad := &jobdef.Job{Action: action.Action{Type: action.HTTP, Timeout: retry.Duration(-time.Second),
		Request: &action.HTTPRequest{URI: "http://example.com/", Method: "GET"}}}
	if diff := cmp.Diff([]string{`action.timeout: "-PT1S" is out of range (PT1S to PT1H)`}, paths(bad.Validate(nil))); diff != "" {
		t.Errorf("Validate of a negative timeout: errors (-want +got):\n%s", diff)
	}
}

// paths returns the text of each problem err reports, sorted as the
// validator sorts them.
func paths(err error) []string {
	var out []string
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		if e != nil {
			out = append(out, e.Error())
		}
	}
	walk(err)
	return out
}
