package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// A bulk put whose last new job does not encode, after a replace and
// 3,000 creates, fails with the encoding error, its chain kept (not the
// server's answer to the COPY's end), and writes nothing: the replaced job
// is unchanged, none is created, and the store keeps working.
func TestPutJobsEncodeErrorMidCopy(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	job := func(name string, anchor time.Time) *scheduler.JobRecord {
		return &scheduler.JobRecord{Collection: "c", Name: name, State: scheduler.JobEnabled, ETag: "j1", Created: t0, Updated: t0,
			Job:      &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://127.0.0.1/", Method: "GET"}}},
			Schedule: scheduler.JobSchedule{DueAt: t0, Anchor: anchor, NextOccurrence: t0}}
	}
	for _, tt := range []struct {
		name string
		bad  func() *scheduler.JobRecord
		want func(error) bool // what errors.As finds in the error
	}{
		{name: "a time past 9999", bad: func() *scheduler.JobRecord { return job("bad", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)) }},
		{name: "a custom action that is no JSON", bad: func() *scheduler.JobRecord {
			j := job("bad", t0)
			j.Job.Action = action.Action{Type: "Thing", Custom: json.RawMessage(`{"n": `)}
			return j
		}, want: func(err error) bool { var se *json.SyntaxError; return errors.As(err, &se) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s := open(t, newSchema(t))
			if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c", ETag: "e1", Created: t0, Updated: t0,
				Definition: scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 5000}}}}); err != nil {
				t.Fatal(err)
			}
			if err := s.PutJob(ctx, job("a", t0)); err != nil {
				t.Fatal(err)
			}
			a, err := s.GetJob(ctx, "c", "a")
			if err != nil {
				t.Fatal(err)
			}
			a.ETag = "j2"
			batch := []*scheduler.JobRecord{a}
			for i := range 3000 {
				batch = append(batch, job(fmt.Sprintf("n%04d", i), t0))
			}
			batch = append(batch, tt.bad())
			err = s.PutJobs(ctx, "c", batch)
			if err == nil {
				t.Fatal("PutJobs with a job that does not encode: nil error")
			}
			if !strings.HasPrefix(err.Error(), `store/postgres: put job "c/bad": encode `) {
				t.Errorf("PutJobs with a job that does not encode: %v, want the encoding error of c/bad", err)
			}
			if tt.want != nil && !tt.want(err) {
				t.Errorf("PutJobs with a job that does not encode: %v, errors.As does not find the encoder's error", err)
			}
			if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) {
				t.Errorf("PutJobs with a job that does not encode: %v, the server's error (SQLSTATE %s), want the encoding error", err, pe.Code)
			}
			if got, err := s.GetJob(ctx, "c", "a"); err != nil || got.ETag != "j1" {
				t.Errorf("a after the failed batch: %v, %v; want ETag j1", got, err)
			}
			if _, err := s.GetJob(ctx, "c", "n0000"); !errors.Is(err, scheduler.ErrNotFound) {
				t.Errorf("n0000 after the failed batch: %v; want ErrNotFound", err)
			}
			if err := s.PutJobs(ctx, "c", batch[1:3]); err != nil {
				t.Errorf("PutJobs after the failed batch: %v", err)
			}
		})
	}
}
