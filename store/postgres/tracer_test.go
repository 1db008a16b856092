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

// traceCreates is a pgx tracer that keeps the names of the jobs whose
// creates it saw end without an error, as statements or in batches (the
// second argument of a create is the job's name).
type traceCreates struct {
	mu      sync.Mutex
	created map[string]bool
	batches int
}

type traceCreatesKey struct{}

func (tc *traceCreates) saw(sql string, args []any, err error) {
	if err != nil || !strings.Contains(sql, ".jobs (") || len(args) < 2 {
		return
	}
	if name, ok := args[1].(string); ok {
		tc.mu.Lock()
		defer tc.mu.Unlock()
		tc.created[name] = true
	}
}

func (tc *traceCreates) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, traceCreatesKey{}, data)
}

func (tc *traceCreates) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	start, _ := ctx.Value(traceCreatesKey{}).(pgx.TraceQueryStartData)
	tc.saw(start.SQL, start.Args, data.Err)
}

func (tc *traceCreates) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.batches++
	return ctx
}

func (tc *traceCreates) TraceBatchQuery(_ context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	tc.saw(data.SQL, data.Args, data.Err)
}

func (tc *traceCreates) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TestCreatesTraced: the tracer of the host's pool sees every create of a
// job, alone or in a group of creates, with its arguments.
func TestCreatesTraced(t *testing.T) {
	schema := newSchema(t)
	tc := &traceCreates{created: make(map[string]bool)}
	s, err := postgres.New(ctx, tracedPool(t, tc), &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := groupEnvOf(t, schema, s)
	c.s.SetCreatesWait("c", time.Hour)
	if err := <-c.put(ctx, "alone"); err != nil {
		t.Fatal(err)
	}
	for name, done := range c.groupOf("a", "b") {
		if err := <-done; err != nil {
			t.Fatalf("PutJob(c/%s): %v", name, err)
		}
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for _, name := range []string{"alone", "x1", "x2", "a", "b"} {
		if !tc.created[name] {
			t.Errorf("the create of c/%s was not traced; traced: %v", name, tc.created)
		}
	}
}
