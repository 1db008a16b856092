package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// TestRun runs the example and checks what it prints: the spans of every
// attempt, each receiver request in its attempt's trace, the manual run in
// the request's trace, and the metrics.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	text := out.String()
	spanLine := regexp.MustCompile(`^span      (\S+(?: \S+)?) trace=(\w+) span=(\w+) parent=(\w+) \S+ \{(.*)\}$`)
	type span struct{ name, trace, id, parent, attrs string }
	var spans []span
	var parents []string
	for _, l := range strings.Split(text, "\n") {
		if m := spanLine.FindStringSubmatch(l); m != nil {
			spans = append(spans, span{m[1], m[2], m[3], m[4], m[5]})
		}
		if _, tp, ok := strings.Cut(l, "traceparent="); ok && strings.HasPrefix(l, "receiver") {
			parents = append(parents, tp)
		}
	}
	attempts := 0
	var request span
	for _, s := range spans {
		switch s.name {
		case "jobclock.attempt":
			attempts++
		case "POST /jobs/manual/run":
			request = s
		}
	}
	if attempts != 5 {
		t.Errorf("%d jobclock.attempt spans, want 5 (hello, flaky twice and its error action, manual):\n%s", attempts, text)
	}
	if len(parents) != 5 {
		t.Fatalf("the receiver printed %d requests, want 5:\n%s", len(parents), text)
	}
	for _, tp := range parents {
		// 00-TRACE-SPAN-01: SPAN is a client span whose parent is an attempt
		// span of the same trace.
		parts := strings.Split(tp, "-")
		var client, attempt *span
		for i := range spans {
			if spans[i].id == parts[2] {
				client = &spans[i]
			}
		}
		if client != nil {
			for i := range spans {
				if spans[i].id == client.parent && spans[i].name == "jobclock.attempt" {
					attempt = &spans[i]
				}
			}
		}
		if len(parts) != 4 || client == nil || attempt == nil || client.trace != parts[1] || attempt.trace != parts[1] {
			t.Errorf("traceparent %s is not that of a client span under an attempt span of its trace", tp)
		}
	}
	manual := false
	for _, s := range spans {
		if s.name == "jobclock.attempt" && strings.Contains(s.attrs, "jobclock.job=manual") {
			manual = s.parent == request.id && s.trace == request.trace
		}
	}
	if !manual {
		t.Errorf("the manual run's attempt is not a child of the request span %+v:\n%s", request, text)
	}
	for _, want := range []string{
		"metric    jobclock.attempts{jobclock.action.name=MainAction jobclock.action.type=Http jobclock.attempt.outcome=Failed} = 2",
		"metric    jobclock.attempts{jobclock.action.name=MainAction jobclock.action.type=Http jobclock.attempt.outcome=Completed} = 2",
		"metric    jobclock.attempts{jobclock.action.name=ErrorAction jobclock.action.type=Http jobclock.attempt.outcome=Completed} = 1",
		"metric    jobclock.occurrences.started{jobclock.action.type=Http} = 3",
		"metric    jobclock.jobs{jobclock.collection=demo jobclock.job.state=Completed} = 1",
		"metric    jobclock.jobs{jobclock.collection=demo jobclock.job.state=Enabled} = 1", // manual: its own occurrence is tomorrow
		"metric    jobclock.jobs{jobclock.collection=demo jobclock.job.state=Faulted} = 1",
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}
