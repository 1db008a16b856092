package scheduler_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestHealthCancelledNotFailing: an occurrence that fails without
// faulting (CancelRunning cancels it when the next comes due, or disabling
// the job drops its retry) does not make the job Failing, which follows
// the occurrences that faulted; one that faults does. Over the memory
// store and SQLite, which keep what the health reads.
func TestHealthCancelledNotFailing(t *testing.T) {
	cases := []struct {
		name    string
		fn      func(ctx context.Context) error // the executor
		job     string
		disable time.Duration // when to disable the job; zero: never
		at      time.Duration // when to read its health
		want    scheduler.JobHealth
		faulted int
	}{{
		// Every minute from 1m, each attempt runs until cancelled: the
		// first is cancelled at 2m, the second runs at 2m30s.
		name: "cancelled", fn: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
		job: `"recurrence": {"frequency": "Minute"}, "runPolicy": {"overlap": "CancelRunning"}`,
		at:  150 * time.Second, want: scheduler.HealthOK,
	}, {
		// Once at 1m, failing, a retry a minute later: disabled at 90s,
		// which drops the retry.
		name: "dropped", fn: func(context.Context) error { return errors.New("boom") },
		job: `"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
			"retryPolicy": {"retryType": "Fixed", "retryInterval": "PT1M", "retryCount": 2}}`,
		disable: 90 * time.Second, at: 5 * time.Minute, want: scheduler.HealthOK,
	}, {
		// Every minute from 1m, failing, no retry: faulted at 1m.
		name: "faulted", fn: func(context.Context) error { return errors.New("boom") },
		job: `"recurrence": {"frequency": "Minute"}, "action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/", "method": "GET"},
			"retryPolicy": {"retryType": "None"}}`,
		at: 90 * time.Second, want: scheduler.HealthFailing, faulted: 1,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			putAgainStores(t, func(t *testing.T, st scheduler.Store) {
				ctx := t.Context()
				reg := new(action.Registry)
				reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, _ *action.Request) (*action.Result, error) {
					return nil, tc.fn(ctx)
				}))
				s, err := scheduler.New(st, &scheduler.Config{Executors: reg, ActionTimeout: 90 * time.Second, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
					t.Fatal(err)
				}
				if err := s.Start(ctx); err != nil {
					t.Fatal(err)
				}
				defer s.Stop(context.Background())
				e := &putAgainEnv{s: s, st: st, t0: time.Now()}
				if _, err := s.PutJobJSON(ctx, "c", "j", []byte(jobJSON(e.t0.Add(time.Minute), tc.job)), nil); err != nil {
					t.Fatal(err)
				}
				if tc.disable > 0 {
					e.at(tc.disable)
					if _, err := s.DisableJob(ctx, "c", "j"); err != nil {
						t.Fatal(err)
					}
				}
				e.at(tc.at)
				r, err := s.GetJob(ctx, "c", "j")
				if err != nil {
					t.Fatal(err)
				}
				if r.Status.Health != tc.want || r.Status.FaultedCount != tc.faulted || r.Status.FailureCount == 0 {
					t.Errorf("health %s, %d failed, %d faulted; want %s, some failed, %d faulted", r.Status.Health, r.Status.FailureCount, r.Status.FaultedCount, tc.want, tc.faulted)
				}
				list, err := s.ListJobs(ctx, "c", &scheduler.ListJobsOptions{Health: scheduler.HealthFailing})
				if err != nil {
					t.Fatal(err)
				}
				if want := tc.want == scheduler.HealthFailing; (len(list) == 1) != want {
					t.Errorf("ListJobs(Health Failing) = %v; want the job listed: %v", names(list), want)
				}
			})
		})
	}
}
