package scheduler_test

import (
	"context"
	"errors"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

// TestDeleteIfMatch: DeleteJob and DeleteCollection with IfMatch delete
// only the job or collection stored with that ETag ("*": one that
// exists), and otherwise fail with ErrPreconditionFailed, deleting
// nothing; a job or collection that does not exist fails the condition
// too, and without IfMatch is ErrNotFound.
func TestDeleteIfMatch(t *testing.T) {
	stores := map[string]func(t *testing.T) scheduler.Store{
		"memory": func(*testing.T) scheduler.Store { return memory.New() },
		"sqlite": openSQLite,
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s, err := scheduler.New(newStore(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			col, err := s.PutCollection(ctx, "c", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			def, err := s.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}},
				"recurrence": {"frequency": "Hour"}, "state": "Disabled"}`))
			if err != nil {
				t.Fatal(err)
			}
			first, err := s.PutJob(ctx, "c", "j", def, nil)
			if err != nil {
				t.Fatal(err)
			}
			now, err := s.PatchJob(ctx, "c", "j", []byte(`{"state": "Enabled"}`), nil)
			if err != nil || now.ETag == first.ETag {
				t.Fatalf("PatchJob = %v, %v; want a new ETag", now, err)
			}
			for _, stale := range []string{first.ETag, "nope"} {
				if err := s.DeleteJob(ctx, "c", "j", &scheduler.DeleteJobOptions{IfMatch: stale}); !errors.Is(err, scheduler.ErrPreconditionFailed) {
					t.Errorf("DeleteJob with IfMatch %q, not the job's = %v, want ErrPreconditionFailed", stale, err)
				}
			}
			if got, err := s.GetJob(ctx, "c", "j"); err != nil || got.ETag != now.ETag {
				t.Fatalf("GetJob after the refused deletes = %v, %v; want ETag %q", got, err, now.ETag)
			}
			if err := s.DeleteJob(ctx, "c", "j", &scheduler.DeleteJobOptions{IfMatch: now.ETag}); err != nil {
				t.Fatalf("DeleteJob with IfMatch the job's ETag: %v", err)
			}
			if _, err := s.GetJob(ctx, "c", "j"); !errors.Is(err, scheduler.ErrNotFound) {
				t.Errorf("GetJob after the delete = %v, want ErrNotFound", err)
			}
			for _, m := range []string{now.ETag, "*"} {
				if err := s.DeleteJob(ctx, "c", "j", &scheduler.DeleteJobOptions{IfMatch: m}); !errors.Is(err, scheduler.ErrPreconditionFailed) {
					t.Errorf("DeleteJob of a missing job with IfMatch %q = %v, want ErrPreconditionFailed", m, err)
				}
			}
			if err := s.DeleteJob(ctx, "c", "j", nil); !errors.Is(err, scheduler.ErrNotFound) {
				t.Errorf("DeleteJob of a missing job = %v, want ErrNotFound", err)
			}
			if _, err := s.PutJob(ctx, "c", "k", def, nil); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteJob(ctx, "c", "k", &scheduler.DeleteJobOptions{IfMatch: "*"}); err != nil {
				t.Errorf("DeleteJob with IfMatch * of a job that exists: %v", err)
			}

			if _, err := s.PutJob(ctx, "c", "j", def, nil); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteCollection(ctx, "c", &scheduler.DeleteCollectionOptions{IfMatch: "nope"}); !errors.Is(err, scheduler.ErrPreconditionFailed) {
				t.Errorf("DeleteCollection with IfMatch not its ETag = %v, want ErrPreconditionFailed", err)
			}
			if _, err := s.GetJob(ctx, "c", "j"); err != nil {
				t.Errorf("GetJob after the refused delete of its collection: %v", err)
			}
			if err := s.DeleteCollection(ctx, "c", &scheduler.DeleteCollectionOptions{IfMatch: col.ETag}); err != nil {
				t.Fatalf("DeleteCollection with IfMatch its ETag: %v", err)
			}
			if _, err := s.GetCollection(ctx, "c"); !errors.Is(err, scheduler.ErrNotFound) {
				t.Errorf("GetCollection after the delete = %v, want ErrNotFound", err)
			}
			if err := s.DeleteCollection(ctx, "c", &scheduler.DeleteCollectionOptions{IfMatch: "*"}); !errors.Is(err, scheduler.ErrPreconditionFailed) {
				t.Errorf("DeleteCollection of a missing collection with IfMatch * = %v, want ErrPreconditionFailed", err)
			}
			if err := s.DeleteCollection(ctx, "c", nil); !errors.Is(err, scheduler.ErrNotFound) {
				t.Errorf("DeleteCollection of a missing collection = %v, want ErrNotFound", err)
			}
		})
	}
}
