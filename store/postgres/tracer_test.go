package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/postgres"
)

// keepArgs is a pgx tracer that keeps the string arguments of every
// statement, as a host's tracer may (to log them later), with a copy of
// each taken when the statement started.
type keepArgs struct {
	mu         sync.Mutex
	kept, then []string
}

func (k *keepArgs) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, a := range data.Args {
		if s, ok := a.(string); ok {
			k.kept = append(k.kept, s)
			k.then = append(k.then, strings.Clone(s))
		}
	}
	return ctx
}

func (k *keepArgs) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestRecordArgsKept: the arguments a Record hands to the driver, and so
// to the tracer of the host's pool, are the tracer's to keep; the records
// of other jobs after it do not change them.
func TestRecordArgsKept(t *testing.T) {
	schema := newSchema(t)
	keep := &keepArgs{}
	s, err := postgres.New(ctx, tracedPool(t, keep), &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	const jobs = 8
	for i := range jobs {
		j := &scheduler.JobRecord{Collection: "c", Name: fmt.Sprintf("j%d", i), Job: &scheduler.Job{},
			State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), jobs)
	if err != nil || len(claimed) != jobs {
		t.Fatalf("ClaimDue = %d jobs, %v; want %d", len(claimed), err, jobs)
	}
	keep.mu.Lock()
	keep.kept, keep.then = nil, nil
	keep.mu.Unlock()
	for i, r := range claimed {
		// Each record's texts differ from the one before at the same places.
		r.Status.ExecutionCount = i + 1
		r.Schedule.DueAt = t0.Add(time.Duration(i+1) * time.Hour)
		if err := s.Record(ctx, "me", r, nil); err != nil {
			t.Fatal(err)
		}
	}
	keep.mu.Lock()
	defer keep.mu.Unlock()
	for i, s := range keep.kept {
		if s != keep.then[i] {
			t.Errorf("argument %d of the records = %q after the later records, want %q, as handed to the driver", i, s, keep.then[i])
		}
	}
}
