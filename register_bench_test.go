package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// benchScheduler returns a Scheduler on the memory store with a
// collection "bench" of room enough and an executor for "Noop".
func benchScheduler(b *testing.B) *scheduler.Scheduler {
	reg := &action.Registry{}
	reg.Register("Noop", action.ExecutorFunc(func(context.Context, *action.Request) (*action.Result, error) { return nil, nil }))
	s, err := scheduler.New(memory.New(), &scheduler.Config{Executors: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	quota := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 1 << 30}}}
	if _, err := s.PutCollection(ctx, "bench", quota, nil); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkPutJobGoValue registers one-time jobs built as Go values on the
// memory store, a fresh definition each time, as bench/engine's
// BenchmarkRegister does at 100k and 1M jobs; this one measures the put
// path without a large heap.
func BenchmarkPutJobGoValue(b *testing.B) {
	s := benchScheduler(b)
	ctx := context.Background()
	far := time.Now().Add(24 * time.Hour)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		at := far.Add(time.Duration(i) * time.Millisecond)
		def := &scheduler.Job{StartTime: &at, Action: action.Action{Type: "Noop", Custom: json.RawMessage(`{}`)}}
		if _, err := s.PutJob(ctx, "bench", fmt.Sprintf("j%07d", i), def, nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkPutJobReplace replaces 1,000 jobs of the memory store in turn,
// each put without IfMatch: the put path of a job that exists.
func BenchmarkPutJobReplace(b *testing.B) {
	s := benchScheduler(b)
	ctx := context.Background()
	far := time.Now().Add(24 * time.Hour)
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("j%07d", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		at := far.Add(time.Duration(i) * time.Millisecond)
		def := &scheduler.Job{StartTime: &at, Action: action.Action{Type: "Noop", Custom: json.RawMessage(`{}`)}}
		if _, err := s.PutJob(ctx, "bench", names[i%len(names)], def, nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
