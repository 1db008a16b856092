package postgres_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jobclock/scheduler/internal/syncbuf"
)

// logged returns the records with message msg that a JSON handler wrote
// to log, each as its decoded JSON object.
func logged(t *testing.T, log *syncbuf.Buffer, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(log.String()) {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
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
