package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// endpoint returns the Azurite queue endpoint of scripts/start-azurite.sh,
// or skips (fails with CI=true).
func endpoint(t *testing.T) string {
	t.Helper()
	ep := os.Getenv("JOBCLOCK_AZURITE_QUEUE_ENDPOINT")
	if ep == "" {
		const msg = `JOBCLOCK_AZURITE_QUEUE_ENDPOINT is not set; start Azurite with: eval "$(scripts/start-azurite.sh)"`
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return ep
}

// TestRun sends through Azurite with each message format and reads the
// message back.
func TestRun(t *testing.T) {
	ep := endpoint(t)
	for _, tt := range []struct {
		name             string
		envelope, base64 bool
		want             []string
	}{
		{"plain", false, false, []string{`{"report":"nightly"}`}},
		{"envelope", true, false, []string{"<StorageQueueMessage", `<Message>{"report":"nightly"}</Message>`, "<ExecutionTag>", "<SchedulerJobId>example-job</SchedulerJobId>"}},
		{"base64", false, true, []string{"decoded:\n" + `{"report":"nightly"}`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			queue := fmt.Sprintf("example-%s-%d", tt.name, time.Now().UnixNano()%1e9)
			if err := run(&out, ep, queue, `{"report":"nightly"}`, tt.envelope, tt.base64); err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			got := out.String()
			for _, w := range append([]string{"received message "}, tt.want...) {
				if !strings.Contains(got, w) {
					t.Errorf("output does not contain %q:\n%s", w, got)
				}
			}
		})
	}
}
