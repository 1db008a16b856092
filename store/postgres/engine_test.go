package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/postgres"
)

// TestEngineConnsReserved: while host transactions hold every connection
// of the main pool (as API requests can), a store with a connection
// reserved for the scheduler still claims, extends, records and finds the
// next due job; an API read waits. Without the reservation the claim
// waits too.
func TestEngineConnsReserved(t *testing.T) {
	for _, tc := range []struct {
		name        string
		engineConns int
		claims      bool
	}{
		{"reserved", 1, true},
		{"shared", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cfg, err := pgxpool.ParseConfig(dsn(t))
			if err != nil {
				t.Fatal(err)
			}
			cfg.MaxConns = 2
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			s, err := postgres.New(ctx, pool, &postgres.Options{Schema: newSchema(t), EngineConns: tc.engineConns})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"due", "later"} {
				due := now.Add(-time.Minute)
				if name == "later" {
					due = now.Add(time.Hour)
				}
				if err := s.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: name, Job: &scheduler.Job{}, State: scheduler.JobEnabled,
					Schedule: scheduler.JobSchedule{DueAt: due}, Created: now, Updated: now}); err != nil {
					t.Fatal(err)
				}
			}

			// The host holds both connections of the main pool.
			for range 2 {
				tx, err := pool.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback(ctx)
			}
			short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancel()
			if _, err := s.GetJob(short, "c", "due"); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("GetJob with the main pool taken = %v, want it to wait until its deadline", err)
			}

			claimCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			claimed, err := s.ClaimDue(claimCtx, now, "engine", now.Add(time.Minute), 10)
			if !tc.claims {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("ClaimDue sharing the taken pool = %d jobs, %v; want it to wait until its deadline", len(claimed), err)
				}
				return
			}
			if err != nil || len(claimed) != 1 {
				t.Fatalf("ClaimDue = %d jobs, %v; want the due job", len(claimed), err)
			}
			j := claimed[0]
			if err := s.ExtendLease(claimCtx, "c", j.Name, "engine", now.Add(2*time.Minute)); err != nil {
				t.Errorf("ExtendLease: %v", err)
			}
			j.Schedule.DueAt = time.Time{}
			j.State = scheduler.JobCompleted
			hist := []scheduler.HistoryEntry{{Collection: "c", Job: j.Name, Status: scheduler.StatusCompleted, StartTime: now, EndTime: now}}
			if err := s.Record(claimCtx, "engine", j, hist); err != nil {
				t.Errorf("Record: %v", err)
			}
			if next, err := s.NextDue(claimCtx); err != nil || !next.Equal(now.Add(time.Hour)) {
				t.Errorf("NextDue = %v, %v; want %v", next, err, now.Add(time.Hour))
			}
		})
	}
}
