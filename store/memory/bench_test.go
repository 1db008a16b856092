package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

// BenchmarkClaimRecordBatch measures the store's hot path under a burst:
// claiming due jobs 256 at a time among 100,000 and recording their
// outcomes, with one history entry each, in one RecordBatch. One op is one
// occurrence.
func BenchmarkClaimRecordBatch(b *testing.B) {
	ctx := context.Background()
	const jobs = 100_000
	s := memory.New()
	c := &scheduler.CollectionRecord{Name: "bench"}
	c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: jobs}
	if err := s.PutCollection(ctx, c); err != nil {
		b.Fatal(err)
	}
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	job := &scheduler.Job{}
	for i := range jobs {
		r := &scheduler.JobRecord{Collection: "bench", Name: fmt.Sprintf("j%06d", i), Job: job, State: scheduler.JobEnabled,
			Schedule: scheduler.JobSchedule{DueAt: base.Add(time.Duration(i) * time.Microsecond)}}
		if err := s.PutJob(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	now := base.Add(24 * time.Hour)
	batch := make([]scheduler.RecordRequest, 0, 256)
	b.ResetTimer()
	for done := 0; done < b.N; {
		got, err := s.ClaimDue(ctx, now, "w", now.Add(time.Hour), min(256, b.N-done))
		if err != nil {
			b.Fatal(err)
		}
		batch = batch[:0]
		for _, j := range got {
			h := scheduler.HistoryEntry{Collection: j.Collection, Job: j.Name, ActionName: scheduler.MainAction,
				Status: scheduler.StatusCompleted, ExpectedExecutionTime: j.Schedule.DueAt, StartTime: now, EndTime: now,
				Message: "Http 200 OK"}
			j.Schedule.DueAt = j.Schedule.DueAt.Add(time.Second)
			batch = append(batch, scheduler.RecordRequest{Job: j, History: []scheduler.HistoryEntry{h}})
		}
		for _, err := range s.RecordBatch(ctx, "w", batch) {
			if err != nil {
				b.Fatal(err)
			}
		}
		done += len(got)
	}
}
