package scheduler_test

import (
	"context"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// updateJob is the recurring HTTP job that the update benchmarks write.
func updateJob(b *testing.B) *scheduler.Job {
	def, err := scheduler.ParseJob([]byte(`{"action": {"type": "Https", "request": {"uri": "https://example.com/hook", "method": "POST",
		"headers": {"Content-Type": "application/json", "X-Tenant": "t1"}, "body": "{\"a\": 1}"},
		"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 3}},
		"recurrence": {"frequency": "Hour", "schedule": {"minutes": [0, 30]}, "timeZone": "Europe/Berlin"},
		"startTime": "`+time.Now().Add(time.Hour).UTC().Format(time.RFC3339)+`"}`), nil)
	if err != nil {
		b.Fatal(err)
	}
	return def
}

// BenchmarkJobRecordClone copies the record of updateJob's job: what the
// update path spent on every call before it kept a copy only for jobs
// that name a calendar.
func BenchmarkJobRecordClone(b *testing.B) {
	s := benchScheduler(b)
	r, err := s.PutJob(context.Background(), "bench", "j", updateJob(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if r.Clone() == nil {
			b.Fatal("nil clone")
		}
	}
}

// BenchmarkUpdateState disables and enables a recurring HTTP job of the
// memory store in turn: the read-change-write path (update) that
// PatchJob, EnableJob and DisableJob share, with the least change.
func BenchmarkUpdateState(b *testing.B) {
	s := benchScheduler(b)
	ctx := context.Background()
	def := updateJob(b)
	if _, err := s.PutJob(ctx, "bench", "j", def, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		var err error
		if i%2 == 0 {
			_, err = s.DisableJob(ctx, "bench", "j")
		} else {
			_, err = s.EnableJob(ctx, "bench", "j")
		}
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
}
