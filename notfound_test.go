package scheduler_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/store/sqlite"
)

// TestNotFoundMessages pins what the Scheduler says of a missing collection
// or job, over each store of this module: the collection and the job named
// once, no store's name, and errors.Is and errors.As still answering.
func TestNotFoundMessages(t *testing.T) {
	stores := map[string]func(t *testing.T) scheduler.Store{
		"memory": func(t *testing.T) scheduler.Store { return memory.New() },
		"sqlite": openSQLite,
	}
	def := &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://example.com/", Method: "GET"}}}
	tests := []struct {
		name string
		call func(ctx context.Context, s *scheduler.Scheduler) error
		want string
		as   scheduler.NotFoundError
	}{
		{name: "get collection", want: `job collection "nope" not found`, as: scheduler.NotFoundError{Collection: "nope"},
			call: func(ctx context.Context, s *scheduler.Scheduler) error {
				_, err := s.GetCollection(ctx, "nope")
				return err
			}},
		{name: "delete collection", want: `job collection "nope" not found`, as: scheduler.NotFoundError{Collection: "nope"},
			call: func(ctx context.Context, s *scheduler.Scheduler) error { return s.DeleteCollection(ctx, "nope", nil) }},
		{name: "put job in a missing collection", want: `put job "x": job collection "nope" not found`, as: scheduler.NotFoundError{Collection: "nope"},
			call: func(ctx context.Context, s *scheduler.Scheduler) error {
				_, err := s.PutJob(ctx, "nope", "x", def, nil)
				return err
			}},
		{name: "get job of a missing collection", want: `job collection "nope" not found`, as: scheduler.NotFoundError{Collection: "nope"},
			call: func(ctx context.Context, s *scheduler.Scheduler) error {
				_, err := s.GetJob(ctx, "nope", "x")
				return err
			}},
		{name: "get missing job", want: `job "x" not found in collection "c"`, as: scheduler.NotFoundError{Collection: "c", Job: "x"},
			call: func(ctx context.Context, s *scheduler.Scheduler) error { _, err := s.GetJob(ctx, "c", "x"); return err }},
		{name: "delete missing job", want: `job "x" not found in collection "c"`, as: scheduler.NotFoundError{Collection: "c", Job: "x"},
			call: func(ctx context.Context, s *scheduler.Scheduler) error { return s.DeleteJob(ctx, "c", "x", nil) }},
		{name: "list jobs of a missing collection", want: `job collection "nope" not found`, as: scheduler.NotFoundError{Collection: "nope"},
			call: func(ctx context.Context, s *scheduler.Scheduler) error {
				_, err := s.ListJobs(ctx, "nope", nil)
				return err
			}},
	}
	for storeName, newStore := range stores {
		t.Run(storeName, func(t *testing.T) {
			s, err := scheduler.New(newStore(t), &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			if _, err := s.PutCollection(ctx, "c", &scheduler.JobCollection{}, nil); err != nil {
				t.Fatal(err)
			}
			for _, tt := range tests {
				err := tt.call(ctx, s)
				if err == nil || err.Error() != tt.want {
					t.Errorf("%s = %v, want %s", tt.name, err, tt.want)
				}
				if !errors.Is(err, scheduler.ErrNotFound) {
					t.Errorf("%s = %v, does not match ErrNotFound", tt.name, err)
				}
				var nf *scheduler.NotFoundError
				if !errors.As(err, &nf) {
					t.Errorf("%s = %v, not a *NotFoundError", tt.name, err)
				} else if diff := cmp.Diff(tt.as, *nf); diff != "" {
					t.Errorf("%s: NotFoundError (-want +got):\n%s", tt.name, diff)
				}
			}
		})
	}
}

// TestRecreatedMessage pins what a RecreatedError says: the two creation
// instants, or, when the two jobs were created at one instant, the two
// incarnations that tell them apart.
func TestRecreatedMessage(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	claimed := &scheduler.JobRecord{Collection: "c", Name: "j", Created: t0, Incarnation: 3}
	for _, tc := range []struct {
		name string
		err  *scheduler.RecreatedError
		want string
	}{
		{"another instant", scheduler.NewRecreatedErrorOf(claimed, t0.Add(time.Second), 7),
			`job "j" in collection "c" was deleted and created again (at 2030-01-02 03:04:06 +0000 UTC; the claimed job was created at 2030-01-02 03:04:05 +0000 UTC)`},
		{"one instant", scheduler.NewRecreatedErrorOf(claimed, t0, 7),
			`job "j" in collection "c" was deleted and created again (at 2030-01-02 03:04:05 +0000 UTC, incarnation 7; the claimed job was created at the same instant, incarnation 3)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %s\nwant %s", got, tc.want)
			}
			if !errors.Is(tc.err, scheduler.ErrNotFound) {
				t.Errorf("errors.Is(%v, ErrNotFound) = false", tc.err)
			}
		})
	}
}

// openSQLite opens an SQLite store in a file of the test's own, closed
// when the test ends.
func openSQLite(t *testing.T) scheduler.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "jobs.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
