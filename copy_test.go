package scheduler

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// TestCopyDefinitionEveryField sets every member of a definition, and of
// every type it holds, by reflection, so that a member added later and not
// taught to copyDefinition fails here: the copy must equal the JSON round
// trip and share no pointer, slice or map with the original.
func TestCopyDefinitionEveryField(t *testing.T) {
	j := new(Job)
	fillEveryField(t, reflect.ValueOf(j).Elem(), "job", map[reflect.Type]int{})
	if j.Status != nil || j.Action.ErrorAction == nil || j.Recurrence.Schedule == nil {
		t.Fatalf("fillEveryField left out a member it should set: %#v", j)
	}
	want, err := copyThroughJSON(j)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := copyDefinition(j)
	if !ok {
		t.Fatal("copyDefinition refused a definition with every member set")
	}
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.MarshalIndent(got, "", " ")
		wj, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("copyDefinition differs from the JSON round trip (-JSON +copy):\n%s", cmp.Diff(string(wj), string(gj)))
	}
	checkNothingShared(t, reflect.ValueOf(got).Elem(), reflect.ValueOf(j).Elem(), "job")

	// Its size bound: a definition whose JSON is one byte too long is
	// refused, whatever the body needs escaped.
	for _, c := range []string{"a", "<", "\u2028", "\n"} {
		body := ""
		for {
			j.Action.Request.Body = body
			data, err := json.Marshal(j)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) > MaxJobSize {
				break
			}
			body += c
		}
		if _, ok := copyDefinition(j); ok {
			t.Errorf("copyDefinition copied a definition of more than MaxJobSize bytes (body of %q)", c)
		}
	}

	j.Action.Request.Body = ""
	j.Status = &JobStatus{ExecutionCount: 3}
	if got, ok := copyDefinition(j); !ok || got.Status != nil {
		t.Errorf("copyDefinition of a definition with a status = %v, %v; want a copy without it", got, ok)
	}
}

// fillEveryField sets every JSON member of v, a settable zero value, and
// of what it holds, to a value that survives a JSON round trip unchanged.
// A job's status and a type nested in itself twice (an error action's
// error action) are left out; so is every member JSON leaves out.
func fillEveryField(t *testing.T, v reflect.Value, path string, open map[reflect.Type]int) {
	t.Helper()
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)))
		return
	case v.Type() == durationType:
		v.SetInt(int64(90 * time.Second))
		return
	case v.Type() == rawType:
		v.SetBytes([]byte(`{"a":[1,"` + path + `"]}`))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("v." + path)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Pointer:
		if open[v.Type().Elem()] > 1 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fillEveryField(t, p.Elem(), path, open)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fillEveryField(t, s.Index(i), fmt.Sprintf("%s[%d]", path, i), open)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for i := range 2 {
			k := reflect.New(v.Type().Key()).Elem()
			fillEveryField(t, k, fmt.Sprintf("%s.key%d", path, i), open)
			e := reflect.New(v.Type().Elem()).Elem()
			fillEveryField(t, e, fmt.Sprintf("%s.value%d", path, i), open)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		open[v.Type()]++
		defer func() { open[v.Type()]-- }()
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Tag.Get("json") == "-" || v.Type() == jobType && f.Name == "Status" {
				continue
			}
			fillEveryField(t, v.Field(i), path+"."+f.Name, open)
		}
	default:
		t.Fatalf("%s: fillEveryField does not know how to set a %s; teach it and copyDefinition", path, v.Type())
	}
}

// checkNothingShared fails when got and orig, values of the same type,
// share a pointer, a slice's array or a map.
func checkNothingShared(t *testing.T, got, orig reflect.Value, path string) {
	t.Helper()
	switch got.Kind() {
	case reflect.Pointer:
		if got.IsNil() || orig.IsNil() {
			return
		}
		if got.Pointer() == orig.Pointer() {
			t.Errorf("%s: the copy shares the pointer", path)
		}
		checkNothingShared(t, got.Elem(), orig.Elem(), path)
	case reflect.Slice:
		if got.Len() > 0 && orig.Len() > 0 && got.Pointer() == orig.Pointer() {
			t.Errorf("%s: the copy shares the slice's array", path)
		}
		for i := range min(got.Len(), orig.Len()) {
			checkNothingShared(t, got.Index(i), orig.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		if !got.IsNil() && !orig.IsNil() && got.Pointer() == orig.Pointer() {
			t.Errorf("%s: the copy shares the map", path)
		}
	case reflect.Struct:
		for i := range got.NumField() {
			checkNothingShared(t, got.Field(i), orig.Field(i), path+"."+got.Type().Field(i).Name)
		}
	}
}
