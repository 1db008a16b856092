package scheduler

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

// copyCases are definitions as Go values, of every shape copyDefinition
// meets. The ones marked fast must be copied without JSON.
func copyCases() []struct {
	name string
	job  *Job
	fast bool
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
		fast bool
	}{
		{"custom, now", &Job{StartTime: &now, Action: action.Action{Type: "Noop", Custom: json.RawMessage(`{}`)}}, true},
		{"custom with spaces and HTML", &Job{Action: action.Action{Type: "Noop", Custom: json.RawMessage(" {\"b\" : [1, \"<&>\"],\n \"a\": null} ")}}, true},
		{"http, UTC", &Job{StartTime: &utc, Action: httpAct, State: JobDisabled}, true},
		{"zone with an offset", &Job{StartTime: &summer, Action: httpAct}, true},
		{"everything", &Job{
			Action: action.Action{Type: action.HTTPS, Request: &action.HTTPRequest{URI: "https://example.com/\u2028", Method: "post",
				Headers: map[string]string{"A": "<1>", "B": ""}, Body: "caf\u00e9 \"\n\"",
				Authentication: &action.Authentication{Type: action.AuthBasic, Username: "u", Password: "p", CertificateExpirationDate: &summer}},
				RetryPolicy: &retry.Policy{Type: retry.Fixed, Interval: retry.Duration(time.Minute), Count: new(3)},
				ErrorAction: &action.Action{Type: action.StorageQueue, QueueMessage: &action.StorageQueueMessage{StorageAccount: "a", QueueName: "q", SASToken: "s", Message: "m"}}},
			Recurrence: &recurrence.Recurrence{Frequency: recurrence.Week, Interval: 2, Count: 3, EndTime: &utc,
				Schedule: &recurrence.Schedule{WeekDays: []recurrence.Weekday{recurrence.Monday}, Hours: []int{10, 22}, Minutes: []int{}}},
		}, true},
		{"service bus", &Job{Action: action.Action{Type: action.ServiceBusTopic, ServiceBusTopicMessage: &action.ServiceBusTopicMessage{
			ServiceBusMessage: action.ServiceBusMessage{Namespace: "n", Message: "m", CustomMessageProperties: map[string]string{}},
			TopicPath:         "t"}}}, true},
		{"empty schedule", &Job{Action: httpAct, Recurrence: &recurrence.Recurrence{Frequency: recurrence.Day, Schedule: &recurrence.Schedule{}}}, true},
		{"invalid UTF-8", &Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://example.com/", Method: "GET", Body: "\xff"}}}, false},
		{"long body", &Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://example.com/", Method: "GET", Body: strings.Repeat("<", 8000)}}}, false},
		{"year before 0", &Job{StartTime: &ancient, Action: httpAct}, false},
	}
}

func TestCopyDefinitionAsJSON(t *testing.T) {
	for _, tt := range copyCases() {
		t.Run(tt.name, func(t *testing.T) {
			want, wantErr := copyThroughJSON(tt.job)
			got, ok := copyDefinition(tt.job)
			if ok != tt.fast {
				t.Errorf("copyDefinition: ok = %v, want %v", ok, tt.fast)
			}
			if !ok {
				return
			}
			if wantErr != nil {
				t.Fatalf("copyDefinition copied what JSON refuses: %v", wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("copyDefinition =\n%#v\nthrough JSON\n%#v", got, want)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			if string(gj) != string(wj) {
				t.Errorf("copy encodes as %s, want %s", gj, wj)
			}
		})
	}
}

// FuzzCopyDefinition checks copyDefinition against the JSON round trip on
// every job ParseJob accepts.
func FuzzCopyDefinition(f *testing.F) {
	for _, tt := range fastCases {
		f.Add([]byte(tt.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := ParseJob(data, fastOpts)
		if err != nil {
			return
		}
		want, wantErr := copyThroughJSON(j)
		got, ok := copyDefinition(j)
		if !ok {
			return
		}
		if wantErr != nil {
			t.Fatalf("copyDefinition copied what JSON refuses: %v", wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("copyDefinition =\n%#v\nthrough JSON\n%#v", got, want)
		}
	})
}
