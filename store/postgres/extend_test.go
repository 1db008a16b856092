package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/postgres"
)

// countStatements is a pgx tracer that keeps the statements that read or
// write the jobs table, sent alone or in a batch, while on is set.
type countStatements struct {
	mu   sync.Mutex
	on   bool
	seen []string
}

func (c *countStatements) saw(sql string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.on && strings.Contains(sql, ".jobs") {
		c.seen = append(c.seen, sql)
	}
}

func (c *countStatements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	c.saw(data.SQL)
	return ctx
}

func (c *countStatements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *countStatements) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (c *countStatements) TraceBatchQuery(_ context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	c.saw(data.SQL)
}

func (c *countStatements) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TestExtendLeasesOneStatement: ExtendLeases extends many leases, and
// finds out why the others were not, in one statement.
func TestExtendLeasesOneStatement(t *testing.T) {
	schema := newSchema(t)
	cs := &countStatements{}
	s, err := postgres.New(ctx, tracedPool(t, cs), &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c", Definition: scheduler.JobCollection{
		Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 100}}}}); err != nil {
		t.Fatal(err)
	}
	const n = 40
	var jobs []scheduler.JobKey
	for i := range n {
		j := &scheduler.JobRecord{Collection: "c", Name: fmt.Sprintf("j%d", i), Job: &scheduler.Job{},
			State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, scheduler.JobKey{Collection: "c", Name: j.Name})
	}
	if claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), n); err != nil || len(claimed) != n {
		t.Fatalf("ClaimDue = %d jobs, %v; want %d", len(claimed), err, n)
	}
	jobs = append(jobs, scheduler.JobKey{Collection: "c", Name: "missing"})
	cs.mu.Lock()
	cs.on = true
	cs.mu.Unlock()
	errs := s.ExtendLeases(ctx, "me", t0.Add(time.Hour), jobs)
	cs.mu.Lock()
	cs.on = false
	seen := cs.seen
	cs.mu.Unlock()
	if len(errs) != len(jobs) || errs[0] != nil || errs[n-1] != nil || !errors.Is(errs[n], scheduler.ErrNotFound) {
		t.Fatalf("ExtendLeases = %v; want every lease extended, and the missing job not found", errs)
	}
	if len(seen) != 1 {
		t.Errorf("ExtendLeases of %d jobs ran %d statements on the jobs table, want 1:\n%s", len(jobs), len(seen), strings.Join(seen, "\n"))
	}
}
