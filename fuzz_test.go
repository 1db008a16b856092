package scheduler_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// FuzzParseJob checks that ParseJob never panics, that every failure is
// either one *SyntaxError that says where or a joined list of
// *ValidationError each with a path, and that every job it accepts
// marshals to JSON that parses back.
func FuzzParseJob(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		withAction(httpAction),
		`{"action": {"type": "kafka", "custom": [1, {"a": null}]}}`,
		`{"properties": {"action": ` + httpAction + `, "state": "disabled"}, "id": "x"}`,
		`{"action": ` + httpAction + `, "recurrence": {"frequency": "month", "interval": 2, "count": 3,
			"schedule": {"monthlyOccurrences": [{"day": "friday", "Occurrence": -1}], "monthDays": [-1, 15]}}}`,
		`{"action": {"type": "serviceBusTopic", "serviceBusTopicMessage": {"namespace": "n", "topicPath": "t",
			"message": "m", "brokeredMessageProperties": {"timeToLive": "P1D", "scheduledEnqueueTimeUtc": "2012-11-04"}},
			"retryPolicy": {"retryType": "fixed", "retryInterval": "00:01:00", "retryCount": 3}}}`,
		`{"action": {"type": "https", "request": {"uri": "http://x/", "method": "FETCH", "headers": {"a b": 1}}}, "state": 3}`,
		`[`, `{"a": /* */ 1,}`, `"x"`, `null`,
	} {
		f.Add([]byte(s))
	}
	opts := &scheduler.ParseOptions{ActionTypes: []action.Type{"Kafka"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := scheduler.ParseJob(data, opts)
		if err != nil {
			if j != nil {
				t.Fatalf("ParseJob returned a job and an error %v", err)
			}
			if !errors.Is(err, scheduler.ErrInvalid) {
				t.Fatalf("error %v does not match ErrInvalid", err)
			}
			var se *scheduler.SyntaxError
			if errors.As(err, &se) {
				if se.Line < 1 || se.Column < 1 || !strings.HasPrefix(err.Error(), "line ") {
					t.Fatalf("syntax error %q does not say where", err)
				}
				return
			}
			errs := scheduler.ValidationErrors(err)
			if len(errs) == 0 {
				t.Fatalf("error %v holds no *ValidationError", err)
			}
			if _, joined := err.(interface{ Unwrap() []error }); !joined && len(errs) != 1 {
				t.Fatalf("error %v is neither joined nor a single *ValidationError", err)
			}
			for _, e := range errs {
				if e.Path == "" || e.Reason == "" {
					t.Fatalf("ValidationError %#v lacks a path or reason", e)
				}
			}
			return
		}
		out, err := json.Marshal(j)
		if err != nil {
			t.Fatalf("Marshal(parsed job): %v", err)
		}
		if _, err := scheduler.ParseJob(out, opts); err != nil {
			t.Fatalf("ParseJob(Marshal(job) = %s) = %v", out, err)
		}
		// A valid job has a timing whose occurrences increase.
		created := time.Date(2026, 3, 29, 0, 30, 0, 0, time.UTC)
		tm, err := j.Timing("fuzz", "job", created)
		if err != nil {
			if j.StartTime != nil && j.StartTime.IsZero() {
				return
			}
			t.Fatalf("Timing(%s): %v", out, err)
		}
		var prev time.Time
		n := 0
		for at := range tm.Occurrences() {
			if !at.After(prev) || at.Before(created) || j.StartTime != nil && at.Before(*j.StartTime) {
				t.Fatalf("Timing(%s): occurrence %v after %v", out, at, prev)
			}
			prev = at
			if n++; n == 5 {
				break
			}
		}
	})
}
