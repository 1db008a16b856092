package scheduler_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// TestLastExecutionTimeOfEachClaim runs one-time jobs in batches on the
// memory store and checks that each job's LastExecutionTime is the
// start of its own attempt.
func TestLastExecutionTimeOfEachClaim(t *testing.T) {
	const n = 200
	ctx := context.Background()
	reg := new(action.Registry)
	reg.Register("Noop", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond) // starts apart, outcomes in mixed batches
		return nil, nil
	}))
	var recorded atomic.Int64
	done := make(chan struct{})
	st := memory.New()
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg, Logger: discard, MaxConcurrency: 16,
		OnHistory: func(scheduler.HistoryEntry) {
			if recorded.Add(1) == n {
				close(done)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	col := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: n}}}
	if _, err := s.PutCollection(ctx, "c", col, nil); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := s.PutJob(ctx, "c", fmt.Sprint("j", i), &scheduler.Job{Action: action.Action{Type: "Noop"}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-done
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	starts := make(map[time.Time]bool)
	for i := range n {
		name := fmt.Sprint("j", i)
		j, err := st.GetJob(ctx, "c", name)
		if err != nil {
			t.Fatal(err)
		}
		h, err := st.ListHistory(ctx, "c", name, scheduler.HistoryFilter{})
		if err != nil || len(h) != 1 {
			t.Fatalf("history of %s = %+v, %v; want one entry", name, h, err)
		}
		if last := j.Status.LastExecutionTime; last == nil || !last.Equal(h[0].StartTime) {
			t.Errorf("%s: LastExecutionTime %v, want its attempt's start %v", name, last, h[0].StartTime)
		}
		starts[h[0].StartTime] = true
	}
	if len(starts) < n/2 {
		t.Errorf("only %d different start times among %d attempts: the test tells little", len(starts), n)
	}
}

// keepingStore is a memory store that keeps the LastExecutionTime of the
// records it is asked to record as it gets them, as a store that keeps the
// records themselves may (see BatchRecorder). store/memory keeps them too,
// but with an instant of its own.
type keepingStore struct {
	*memory.Store
	kept []*time.Time
}

func (k *keepingStore) Record(ctx context.Context, owner string, r *scheduler.JobRecord, h []scheduler.HistoryEntry) error {
	k.kept = append(k.kept, r.Status.LastExecutionTime)
	return k.Store.Record(ctx, owner, r, h)
}

func (k *keepingStore) RecordBatch(ctx context.Context, owner string, batch []scheduler.RecordRequest) []error {
	for _, b := range batch {
		k.kept = append(k.kept, b.Job.Status.LastExecutionTime)
	}
	return k.Store.RecordBatch(ctx, owner, batch)
}

// TestKeptRecordFreesAttempt: the LastExecutionTime of a record that the
// store keeps does not keep the attempt's request (its opened action, with
// secrets in plain text) reachable.
func TestKeptRecordFreesAttempt(t *testing.T) {
	ctx := context.Background()
	var req weak.Pointer[action.Request]
	ran := make(chan struct{})
	reg := new(action.Registry)
	reg.Register("Noop", action.ExecutorFunc(func(ctx context.Context, r *action.Request) (*action.Result, error) {
		req = weak.Make(r)
		close(ran)
		return nil, nil
	}))
	st := &keepingStore{Store: memory.New()}
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "c", "j", &scheduler.Job{Action: action.Action{Type: "Noop"}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-ran
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if len(st.kept) == 0 || st.kept[len(st.kept)-1] == nil {
		t.Fatalf("the store kept %v, want the outcome's LastExecutionTime", st.kept)
	}
	runtime.GC()
	runtime.GC()
	if req.Value() != nil {
		t.Errorf("the attempt's request is reachable after Stop, while the store keeps the outcome's record")
	}
	runtime.KeepAlive(st)
}
