package postgres_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobclock/scheduler/internal/syncbuf"
)

// records returns the records that a JSON handler wrote to log, each as
// its decoded JSON object.
func records(t *testing.T, log *syncbuf.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(log.String()) {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// logged returns the records of log with message msg (see records).
func logged(t *testing.T, log *syncbuf.Buffer, msg string) []map[string]any {
	t.Helper()
	return slices.DeleteFunc(records(t, log), func(r map[string]any) bool { return r["msg"] != msg })
}

// leveled returns the records of log at level, as the JSON handler writes
// it ("WARN").
func leveled(t *testing.T, log *syncbuf.Buffer, level string) []map[string]any {
	t.Helper()
	return slices.DeleteFunc(records(t, log), func(r map[string]any) bool { return r["level"] != level })
}

// waitLogged waits up to 10 s until log holds n records with message msg
// (see logged), and returns them.
func waitLogged(t *testing.T, log *syncbuf.Buffer, msg string, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := logged(t, log, msg)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d records %q logged after 10 s, want %d (log:\n%s)", len(got), msg, n, log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
