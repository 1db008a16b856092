package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/schedulertest"
)

// dsn returns the test database, or skips (fails with CI=true).
func dsn(t *testing.T) string {
	t.Helper()
	d := os.Getenv("JOBCLOCK_POSTGRES_DSN")
	if d == "" {
		const msg = `JOBCLOCK_POSTGRES_DSN is not set; start PostgreSQL with eval "$(bash scripts/start-postgres.sh DIR)"`
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return d
}

// testApp opens the example on schemas of its own, dropped at the end.
func testApp(t *testing.T, out *syncBuffer) *app {
	t.Helper()
	ctx := context.Background()
	schema := fmt.Sprintf("txjob_test_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	d := dsn(t)
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, d)
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		for _, s := range []string{schema, schema + "_jobs"} {
			conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{s}.Sanitize()+" CASCADE")
		}
	})
	a, err := open(ctx, d, schema, out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.close)
	return a
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestOrderAndFollowUp: a committed order gets its follow-up, which runs
// and marks it; a declined order leaves neither row nor job, and its
// follow-up never runs.
func TestOrderAndFollowUp(t *testing.T) {
	ctx := context.Background()
	var out syncBuffer
	a := testApp(t, &out)
	if err := a.placeOrder(ctx, "o1", "ada@example.com", 4200, 300*time.Millisecond, false); err != nil {
		t.Fatalf("placeOrder: %v", err)
	}
	if err := a.placeOrder(ctx, "o2", "bob@example.com", 999, 0, true); !errors.Is(err, errDeclined) {
		t.Fatalf("declined placeOrder = %v", err)
	}
	s := schedulertest.Wrap(t, a.s)
	s.Timeout = 30 * time.Second
	r := s.WaitState(ordersCollection, "follow-up-o1", scheduler.JobCompleted)
	if r == nil || r.Status.ExecutionCount != 1 || r.Status.FailureCount != 0 {
		t.Fatalf("follow-up of o1 = %+v", r)
	}
	s.AssertHistory(ordersCollection, "follow-up-o1", []schedulertest.Entry{
		{Action: scheduler.MainAction, Status: scheduler.StatusCompleted, Repeat: 1, Expected: *r.Job.StartTime},
	}, cmpIgnoreStartAndMessage)
	var followed bool
	if err := a.pool.QueryRow(ctx, "SELECT followed_up FROM "+a.orders+" WHERE id = 'o1'").Scan(&followed); err != nil || !followed {
		t.Errorf("order o1 followed_up = %v, %v; want true", followed, err)
	}
	if err := a.pool.QueryRow(ctx, "SELECT followed_up FROM "+a.orders+" WHERE id = 'o2'").Scan(&followed); !errors.Is(err, pgx.ErrNoRows) {
		t.Errorf("the declined order o2 is in the table: %v", err)
	}
	if _, err := a.s.GetJob(ctx, ordersCollection, "follow-up-o2"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("the declined order's follow-up job: %v, want ErrNotFound", err)
	}
	jobs, err := a.s.ListJobs(ctx, ordersCollection, nil)
	if err != nil || len(jobs) != 1 {
		t.Errorf("jobs in the collection: %d, %v; want only o1's", len(jobs), err)
	}
	time.Sleep(200 * time.Millisecond)
	if got := out.String(); got != "followed up order o1 for ada@example.com\n" {
		t.Errorf("output %q, want only o1's follow-up", got)
	}
}

// TestDemo runs what main runs.
func TestDemo(t *testing.T) {
	var out syncBuffer
	a := testApp(t, &out)
	if err := a.demo(context.Background(), 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{"placed order A", "order B", "followed up order A", "order A", "order B"}
	if len(lines) != len(want) {
		t.Fatalf("output:\n%s", out.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start with %q", i, lines[i], w)
		}
	}
	if !strings.HasSuffix(lines[3], "followed up: true, job Completed") || !strings.HasSuffix(lines[4], "no such order, no job") {
		t.Errorf("summary:\n%s", strings.Join(lines[3:], "\n"))
	}
}

var cmpIgnoreStartAndMessage = cmpopts.IgnoreFields(schedulertest.Entry{}, "Start", "Message")
