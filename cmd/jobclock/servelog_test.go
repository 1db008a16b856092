package main

import (
	"bytes"
	"flag"
	"regexp"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	scheduler "github.com/jobclock/scheduler"
)

// TestServeLogHistory pins the lines serve logs about history entries, in
// the text format: WARN for a faulted occurrence and a failed errorAction
// attempt, and with -v an INFO line for every attempt.
func TestServeLogHistory(t *testing.T) {
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	entries := []scheduler.HistoryEntry{
		{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusFailed, RepeatCount: 1, RetryCount: 0,
			ExecutionTag: "t1", Message: "Failed: 503", StartTime: start, EndTime: start.Add(time.Second)},
		{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusFailed, RepeatCount: 1, RetryCount: 1,
			ExecutionTag: "t1", Message: "Failed: 503", StartTime: start, EndTime: start.Add(time.Second), Faulted: true},
		{Collection: "c", Job: "j", ActionName: scheduler.ErrorAction, Status: scheduler.StatusFailed, RepeatCount: 1,
			ExecutionTag: "t1", Message: "Failed: 404", StartTime: start, EndTime: start.Add(time.Second)},
		{Collection: "c", Job: "k", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, RepeatCount: 2,
			ExecutionTag: "t2", Message: "Completed: 200", StartTime: start, EndTime: start.Add(time.Second)},
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "default", want: []string{
			`level=WARN msg="occurrence faulted" collection=c job=j execution_tag=t1 occurrence=1 attempts=2 message="Failed: 503"`,
			`level=WARN msg="errorAction failed" collection=c job=j execution_tag=t1 occurrence=1 retry=0 message="Failed: 404"`,
		}},
		{name: "verbose", args: []string{"-v"}, want: []string{
			`level=INFO msg=attempt collection=c job=j execution_tag=t1 occurrence=1 action=MainAction status=Failed retry=0 duration=1s message="Failed: 503"`,
			`level=INFO msg=attempt collection=c job=j execution_tag=t1 occurrence=1 action=MainAction status=Failed retry=1 duration=1s message="Failed: 503"`,
			`level=WARN msg="occurrence faulted" collection=c job=j execution_tag=t1 occurrence=1 attempts=2 message="Failed: 503"`,
			`level=INFO msg=attempt collection=c job=j execution_tag=t1 occurrence=1 action=ErrorAction status=Failed retry=0 duration=1s message="Failed: 404"`,
			`level=WARN msg="errorAction failed" collection=c job=j execution_tag=t1 occurrence=1 retry=0 message="Failed: 404"`,
			`level=INFO msg=attempt collection=c job=k execution_tag=t2 occurrence=2 action=MainAction status=Completed retry=0 duration=1s message="Completed: 200"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			f := addLogFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			log := f.onHistory(f.logger(&buf))
			for _, h := range entries {
				log(h)
			}
			got := regexp.MustCompile(`(?m)^time=\S+ `).ReplaceAllString(buf.String(), "")
			if diff := cmp.Diff(tt.want, splitLines(got)); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
		})
	}
}

func splitLines(s string) []string {
	var out []string
	for l := range bytes.Lines([]byte(s)) {
		out = append(out, string(bytes.TrimSuffix(l, []byte("\n"))))
	}
	return out
}
