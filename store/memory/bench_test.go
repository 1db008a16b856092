package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/store/storetest"
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

// BenchmarkPrune measures a retention pass over 100,000 jobs with ten
// history entries each, as the Scheduler runs one every ten minutes: one
// op prunes the entries of 100 jobs that went over PerJob since the last
// pass, and the one final job that aged out.
func BenchmarkPrune(b *testing.B) {
	ctx := context.Background()
	const jobs = 100_000
	if b.N > 900 {
		// Each pass claims 101 of the jobs due in its hour: past about
		// 990 passes there are none left to claim.
		b.Skipf("at most 900 passes (-benchtime 900x); asked for %d", b.N)
	}
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
			Updated: base, Schedule: scheduler.JobSchedule{DueAt: base}}
		if err := s.PutJob(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	record := func(now time.Time, n int, state scheduler.JobState) {
		got, err := s.ClaimDue(ctx, now, "w", now.Add(time.Minute), n)
		if err != nil || len(got) != n {
			b.Fatalf("ClaimDue = %d jobs, %v", len(got), err)
		}
		for _, j := range got {
			h := scheduler.HistoryEntry{Collection: j.Collection, Job: j.Name, Status: scheduler.StatusCompleted, EndTime: now}
			j.Schedule.DueAt = now.Add(time.Hour)
			j.State, j.Updated = state, now
			if err := s.Record(ctx, "w", j, []scheduler.HistoryEntry{h, h}); err != nil {
				b.Fatal(err)
			}
		}
	}
	for k := range 5 {
		record(base.Add(time.Duration(k)*time.Hour), jobs, scheduler.JobEnabled)
	}
	p := scheduler.PruneRequest{HistoryBefore: base, FinalJobsBefore: base, PerJob: 10}
	if _, err := s.Prune(ctx, p); err != nil {
		b.Fatal(err)
	}
	now := base.Add(5 * time.Hour)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		now = now.Add(time.Hour)
		record(now, 100, scheduler.JobEnabled)
		record(now, 1, scheduler.JobCompleted)
		p.FinalJobsBefore = now.Add(time.Second)
		b.StartTimer()
		n, err := s.Prune(ctx, p)
		if err != nil || n != 201 {
			b.Fatalf("Prune %d = %d, %v; want 201 (200 entries and 1 job)", i, n, err)
		}
	}
}

// readStore returns a store with n jobs, as the Scheduler writes them
// before they run (fresh) or after a few occurrences (ran).
func readStore(b *testing.B, n int, ran bool) *memory.Store {
	ctx := context.Background()
	s := memory.New()
	c := &scheduler.CollectionRecord{Name: "bench"}
	c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: n}
	if err := s.PutCollection(ctx, c); err != nil {
		b.Fatal(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	job := &scheduler.Job{}
	for i := range n {
		next := now.Add(time.Duration(i) * time.Millisecond)
		nx := next
		r := &scheduler.JobRecord{Collection: "bench", Name: fmt.Sprintf("j%07d", i), Job: job, State: scheduler.JobEnabled,
			ETag: "0123456789abcdef", Created: now, Updated: now, Status: scheduler.JobStatus{NextExecutionTime: &nx},
			Schedule: scheduler.JobSchedule{DueAt: next, Anchor: now, NextOccurrence: next}}
		if ran {
			last := now.Add(-time.Minute)
			r.Created, r.Status.LastExecutionTime, r.Status.ExecutionCount = now.Add(-time.Hour), &last, 3
			r.Schedule.Occurrences, r.Schedule.Counted = 3, 3
		}
		if err := s.PutJob(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkGetJob measures GetJob among 100,000 jobs.
func BenchmarkGetJob(b *testing.B) {
	const n = 100_000
	for _, ran := range []bool{false, true} {
		b.Run(fmt.Sprintf("ran=%v", ran), func(b *testing.B) {
			ctx := context.Background()
			s := readStore(b, n, ran)
			names := make([]string, 1024)
			for i := range names {
				names[i] = fmt.Sprintf("j%07d", (i*7919)%n)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := s.GetJob(ctx, "bench", names[i%len(names)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkListJobs measures a page of 100 jobs of a collection of 10,000,
// as the dashboard and the REST API list them.
func BenchmarkListJobs(b *testing.B) {
	ctx := context.Background()
	s := readStore(b, 10_000, true)
	b.ReportAllocs()
	for b.Loop() {
		if got, err := s.ListJobs(ctx, "bench", scheduler.JobFilter{Skip: 5000, Top: 100}); err != nil || len(got) != 100 {
			b.Fatal(len(got), err)
		}
	}
}

// BenchmarkListJobsOrdered measures the first page of 100 jobs of a
// collection of 10,000 in the order of their next runs, and a page in the
// middle in the reverse of it: the store sorts the collection's jobs at
// each call.
func BenchmarkListJobsOrdered(b *testing.B) {
	ctx := context.Background()
	s := readStore(b, 10_000, true)
	for _, f := range []scheduler.JobFilter{
		{OrderBy: scheduler.JobsByNextExecution, Top: 100},
		{OrderBy: scheduler.JobsByNextExecution, Descending: true, Skip: 5000, Top: 100},
	} {
		b.Run(fmt.Sprintf("descending=%v", f.Descending), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got, err := s.ListJobs(ctx, "bench", f); err != nil || len(got) != 100 {
					b.Fatal(len(got), err)
				}
			}
		})
	}
}

// BenchmarkBurstClaimComplete measures the store's share of a burst as
// the Scheduler drives it: 100,000 one-time jobs put as the Scheduler
// writes them, all due at once, claimed 256 at a time and recorded
// completed with one history entry each, in one RecordBatch. One op is one
// occurrence.
func BenchmarkBurstClaimComplete(b *testing.B) {
	ctx := context.Background()
	const jobs = 100_000
	due := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	job := &scheduler.Job{}
	var s *memory.Store
	fill := func() {
		s = memory.New()
		c := &scheduler.CollectionRecord{Name: "bench"}
		c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: jobs}
		if err := s.PutCollection(ctx, c); err != nil {
			b.Fatal(err)
		}
		created := due.Add(-time.Minute)
		for i := range jobs {
			next := due
			r := &scheduler.JobRecord{Collection: "bench", Name: fmt.Sprintf("j%07d", i), Job: job, State: scheduler.JobEnabled,
				ETag: "0123456789abcdef", Created: created, Updated: created, Status: scheduler.JobStatus{NextExecutionTime: &next},
				Schedule: scheduler.JobSchedule{DueAt: due, Anchor: created, NextOccurrence: due}}
			if err := s.PutJob(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
	}
	now := due.Add(time.Millisecond)
	batch := make([]scheduler.RecordRequest, 0, 256)
	left := 0
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		if left == 0 {
			b.StopTimer()
			fill()
			left = jobs
			b.StartTimer()
		}
		got, err := s.ClaimDue(ctx, now, "w", now.Add(time.Minute), min(256, b.N-done, left))
		if err != nil {
			b.Fatal(err)
		}
		batch = batch[:0]
		for _, j := range got {
			h := scheduler.HistoryEntry{Collection: j.Collection, Job: j.Name, ActionName: scheduler.MainAction,
				Status: scheduler.StatusCompleted, ExpectedExecutionTime: due, StartTime: now, EndTime: now,
				RepeatCount: 1, Message: "Http 200 OK", ExecutionTag: "0123456789abcdef"}
			start := now
			j.State, j.Updated = scheduler.JobCompleted, now
			j.Status.LastExecutionTime, j.Status.NextExecutionTime, j.Status.ExecutionCount = &start, nil, 1
			j.Schedule.DueAt, j.Schedule.NextOccurrence, j.Schedule.Occurrences, j.Schedule.Counted = time.Time{}, time.Time{}, 1, 1
			batch = append(batch, scheduler.RecordRequest{Job: j, History: []scheduler.HistoryEntry{h}})
		}
		for _, err := range s.RecordBatch(ctx, "w", batch) {
			if err != nil {
				b.Fatal(err)
			}
		}
		done += len(got)
		left -= len(got)
	}
}

// BenchmarkPuts: putting jobs one at a time, from 8 goroutines and in bulk
// (go test -bench Puts -benchtime 20000x).
func BenchmarkPuts(b *testing.B) {
	storetest.BenchmarkPuts(b, &storetest.TxBackend{Store: memory.New()})
}

func BenchmarkLimiter(b *testing.B) { storetest.BenchmarkLimiter(b, memory.New()) }
