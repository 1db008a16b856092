package scheduler_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jobclock/scheduler/internal/syncbuf"
)

// TestDeletedWhileItRuns: a job deleted while its attempt runs loses its
// lease as expected: the lease keeper stops extending it, warns of
// nothing and counts nothing toward an outage of the store; the dropped
// outcome is logged once, at Info. So does a job deleted and created
// again under its name (not due while the first attempt runs): the new
// job is another job, whose lease the attempt never held.
func TestDeletedWhileItRuns(t *testing.T) {
	for _, tc := range []struct {
		name      string
		recreate  bool
		extension string
	}{
		{"deleted", false, "extend lease: the job was deleted while its attempt ran; the lease is no longer extended"},
		{"recreated", true, "extend lease: the job was deleted and created again while its attempt ran; the lease is no longer extended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recreateStores(t, func(t *testing.T, st recreateStore) {
				var log syncbuf.Buffer
				x := newSlowJobs(t, st, slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})))
				x.put(t, "gone", 10, "")
				time.Sleep(time.Second) // its attempt runs
				if n := len(x.attempts()); n != 1 {
					t.Fatalf("%d attempts, want 1", n)
				}
				if err := x.s.DeleteJob(context.Background(), "c", "gone", nil); err != nil {
					t.Fatal(err)
				}
				if tc.recreate {
					x.put(t, "gone", 10, `, "startTime": "`+time.Now().Add(48*time.Hour).Format(time.RFC3339)+`"`)
				}
				time.Sleep(30 * time.Second)
				if n := len(x.attempts()); n != 1 {
					t.Fatalf("%d attempts, want 1", n)
				}
				var lines []string
				for l := range strings.Lines(log.String()) {
					if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") || strings.Contains(l, "extend") ||
						strings.Contains(l, "deleted") {
						lines = append(lines, l)
					}
				}
				want := []string{`level=DEBUG msg="` + tc.extension + `" job=gone collection=c`,
					`level=INFO msg="drop the outcome of a deleted job" job=gone collection=c`}
				if len(lines) != len(want) {
					t.Fatalf("log lines of warnings, extensions and the deletion:\n%s\nwant %d: %q", strings.Join(lines, ""), len(want), want)
				}
				for i, w := range want {
					if !strings.Contains(lines[i], w) {
						t.Errorf("log line %d = %s, want one with %s", i, lines[i], w)
					}
				}
			})
		})
	}
}
