package jobdef

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/fill"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

// roundTrip is what Canonical must give for j: j encoded as JSON, without
// its status, decoded into a new Job, its
// cron spec expanded and its spellings made canonical.
func roundTrip(j *Job, opts *ParseOptions) (*Job, error) {
	if opts == nil {
		opts = &ParseOptions{}
	}
	c := j.Clone()
	c.Status = nil
	data, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	if len(data) > MaxJobSize {
		return nil, &ValidationError{Path: rootPath, Reason: "too long"}
	}
	out := new(Job)
	if err := json.Unmarshal(data, out); err != nil {
		return nil, err
	}
	expandCron(out)
	canonicalize(out, opts)
	return out, nil
}

// sameAsRoundTrip checks Canonical(j) against roundTrip(j): the same
// value, or an error from both.
func sameAsRoundTrip(t *testing.T, j *Job, opts *ParseOptions) {
	t.Helper()
	want, wantErr := roundTrip(j, opts)
	got, err := Canonical(j, opts)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("Canonical error %v, through JSON %v", err, wantErr)
	}
	if err != nil {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Canonical =\n%#v\nthrough JSON\n%#v\n(-want +got):\n%s", got, want, cmp.Diff(want, got))
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Errorf("Canonical encodes as %s, want %s", gj, wj)
	}
}

// canonicalCases are definitions as Go values, of every shape Canonical
// meets.
func canonicalCases() []struct {
	name string
	job  *Job
} {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		panic(err)
	}
	now := time.Now() // a monotonic reading, in time.Local
	utc := time.Date(2026, 3, 1, 10, 0, 0, 123, time.UTC)
	summer := time.Date(2026, 7, 1, 10, 0, 0, 0, berlin)
	ancient := time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)
	httpAct := action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://example.com/", Method: "GET"}}
	return []struct {
		name string
		job  *Job
	}{
		{"custom, now", &Job{StartTime: &now, Action: action.Action{Type: "Noop", Custom: json.RawMessage(`{}`)}}},
		{"custom with spaces and HTML", &Job{Action: action.Action{Type: "Noop", Custom: json.RawMessage(" {\"b\" : [1, \"<&>\"],\n \"a\": null} ")}}},
		{"http, UTC", &Job{StartTime: &utc, Action: httpAct, State: JobDisabled}},
		{"zone with an offset", &Job{StartTime: &summer, Action: httpAct}},
		{"everything", &Job{
			Action: action.Action{Type: action.HTTPS, Request: &action.HTTPRequest{URI: "https://example.com/\u2028", Method: "post",
				Headers: map[string]string{"A": "<1>", "B": ""}, Body: "caf\u00e9 \"\n\"",
				Authentication: &action.Authentication{Type: action.AuthBasic, Username: "u", Password: "p", CertificateExpirationDate: &summer}},
				RetryPolicy: &retry.Policy{Type: retry.Fixed, Interval: retry.Duration(time.Minute), Count: new(3)},
				ErrorAction: &action.Action{Type: action.StorageQueue, QueueMessage: &action.StorageQueueMessage{StorageAccount: "a", QueueName: "q", SASToken: "s", Message: "m"}}},
			Recurrence: &recurrence.Recurrence{Frequency: recurrence.Week, Interval: 2, Count: 3, EndTime: &utc,
				Schedule: &recurrence.Schedule{WeekDays: []recurrence.Weekday{recurrence.Monday}, Hours: []int{10, 22}, Minutes: []int{}}},
		}},
		{"cron", &Job{Action: httpAct, Recurrence: &recurrence.Recurrence{Cron: "*/15 9-16 * * 1-5"}}},
		{"service bus", &Job{Action: action.Action{Type: action.ServiceBusTopic, ServiceBusTopicMessage: &action.ServiceBusTopicMessage{
			ServiceBusMessage: action.ServiceBusMessage{Namespace: "n", Message: "m", CustomMessageProperties: map[string]string{}},
			TopicPath:         "t"}}}},
		{"empty schedule", &Job{Action: httpAct, Recurrence: &recurrence.Recurrence{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{}}}},
		{"invalid UTF-8", &Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://example.com/", Method: "GET",
			Body: "\xff\xfe a \xe2\x82", Headers: map[string]string{"\xffk": "v\xff"}}}}},
		{"long body", &Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://example.com/", Method: "GET", Body: strings.Repeat("<", 8000)}}}},
		{"year before 0", &Job{StartTime: &ancient, Action: httpAct}},
		{"custom not JSON", &Job{Action: action.Action{Type: "Noop", Custom: json.RawMessage(`{"a":`)}}},
	}
}

func TestCanonicalAsJSON(t *testing.T) {
	opts := &ParseOptions{ActionTypes: []action.Type{"Noop"}}
	for _, tt := range canonicalCases() {
		t.Run(tt.name, func(t *testing.T) {
			sameAsRoundTrip(t, tt.job, opts)
		})
	}
}

// TestCanonicalEveryField sets every member of a definition, and of every
// type it holds, so that a member added later and not taught to
// Canonical fails here: the result must equal the JSON round trip and
// share nothing with the original.
func TestCanonicalEveryField(t *testing.T) {
	var j, want Job
	fill.Fill(&j, 1)
	fill.Fill(&want, 1)
	if j.Action.ErrorAction == nil || j.Recurrence.Schedule == nil {
		t.Fatalf("Fill left out a member it should set: %#v", j)
	}
	j.Recurrence.Cron, want.Recurrence.Cron = "", "" // a spec would stand for the fields filled
	sameAsRoundTrip(t, &j, nil)
	got, err := Canonical(&j, nil)
	if err != nil {
		t.Fatal(err)
	}
	fill.Mutate(got)
	if diff := cmp.Diff(&want, &j); diff != "" {
		t.Errorf("changing the canonical form changed the original (-want +got):\n%s", diff)
	}
}

// FuzzCanonical checks Canonical against the JSON round trip on every job
// ParseJob accepts.
func FuzzCanonical(f *testing.F) {
	files, _ := filepath.Glob("../testdata/*.json")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"action": {"type": "noop", "custom": {"b": [1, "<&>"], "a": null}}}`))
	opts := &ParseOptions{ActionTypes: []action.Type{"Noop"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := ParseJob(data, opts)
		if err != nil {
			return
		}
		sameAsRoundTrip(t, j, opts)
	})
}

func TestCollectionClone(t *testing.T) {
	var c, want JobCollection
	fill.Fill(&c, 1)
	fill.Fill(&want, 1)
	got := c.Clone()
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Fatalf("Clone() differs from the original (-want +got):\n%s", diff)
	}
	fill.Mutate(got)
	if diff := cmp.Diff(&want, &c); diff != "" {
		t.Errorf("changing the clone changed the original (-want +got):\n%s", diff)
	}
	if (*JobCollection)(nil).Clone() != nil {
		t.Errorf("Clone of nil is not nil")
	}
}
