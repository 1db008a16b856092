package scheduler_test

import (
	"context"
	"sync/atomic"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

// writeCounter is the memory store, counting the jobs written by PutJob
// and PutJobs.
type writeCounter struct {
	*memory.Store
	writes atomic.Int64
}

func (w *writeCounter) PutJob(ctx context.Context, r *scheduler.JobRecord) error {
	w.writes.Add(1)
	return w.Store.PutJob(ctx, r)
}

func (w *writeCounter) PutJobs(ctx context.Context, collection string, jobs []*scheduler.JobRecord) error {
	w.writes.Add(int64(len(jobs)))
	return w.Store.PutJobs(ctx, collection, jobs)
}

// TestPutUnchangedWritesNothing: a put whose definition, state and tags
// are the job's (its secrets sealed again or given in clear) writes
// nothing and returns the job as stored, with its ETag, through PutJob,
// PutJobJSON and PutJobs, into a store that is a BulkPutter and into one
// that is not; a put that changes the tags alone writes, with a new
// ETag.
func TestPutUnchangedWritesNothing(t *testing.T) {
	for _, tt := range []struct {
		name string
		wrap func(*writeCounter) scheduler.Store
	}{
		{"bulk", func(w *writeCounter) scheduler.Store { return w }},
		{"one at a time", func(w *writeCounter) scheduler.Store { return plainStore{w} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			w := &writeCounter{Store: memory.New()}
			s := newDestScheduler(t, tt.wrap(w), newKeyring(t))
			const def = `{"action": {"type": "Https", "request": {"uri": "https://api.example.com/run", "method": "GET",
				"authentication": {"type": "Basic", "username": "alice", "password": "pw"}}},
				"recurrence": {"frequency": "Hour", "interval": 1}}`
			tags := map[string]string{"team": "ops"}
			first, err := s.PutJobJSON(ctx, "c", "j", []byte(def), &scheduler.PutJobOptions{Tags: tags})
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := s.ParseJob([]byte(def))
			if err != nil {
				t.Fatal(err)
			}
			read, err := s.GetJob(ctx, "c", "j")
			if err != nil {
				t.Fatal(err)
			}
			puts := []struct {
				name string
				put  func() (*scheduler.JobRecord, error)
			}{
				{"PutJobJSON", func() (*scheduler.JobRecord, error) {
					return s.PutJobJSON(ctx, "c", "j", []byte(def), &scheduler.PutJobOptions{Tags: tags})
				}},
				{"PutJob of the definition read back", func() (*scheduler.JobRecord, error) {
					return s.PutJob(ctx, "c", "j", read.Job, &scheduler.PutJobOptions{Tags: tags, IfMatch: first.ETag})
				}},
				{"PutJobs", func() (*scheduler.JobRecord, error) {
					recs, err := s.PutJobs(ctx, "c", []scheduler.JobPut{{Name: "j", Job: parsed, Tags: tags}}, nil)
					if err != nil {
						return nil, err
					}
					return recs[0], nil
				}},
			}
			for _, p := range puts {
				before := w.writes.Load()
				r, err := p.put()
				if err != nil {
					t.Fatalf("%s: %v", p.name, err)
				}
				if n := w.writes.Load() - before; n != 0 || r.ETag != first.ETag || r.Version != first.Version {
					t.Errorf("%s of the same job: %d writes, ETag %s, Version %d; want none, %s and %d", p.name, n, r.ETag, r.Version, first.ETag, first.Version)
				}
			}
			stored, err := s.GetJob(ctx, "c", "j")
			if err != nil {
				t.Fatal(err)
			}
			if stored.ETag != first.ETag || stored.Version != first.Version {
				t.Errorf("stored job: ETag %s, Version %d; want %s and %d", stored.ETag, stored.Version, first.ETag, first.Version)
			}

			before := w.writes.Load()
			r, err := s.PutJobJSON(ctx, "c", "j", []byte(def), &scheduler.PutJobOptions{Tags: map[string]string{"team": "dev"}})
			if err != nil {
				t.Fatal(err)
			}
			if n := w.writes.Load() - before; n != 1 || r.ETag == first.ETag || r.Version != first.Version+1 {
				t.Errorf("put with other tags: %d writes, ETag %s, Version %d; want 1, a new ETag, %d", n, r.ETag, r.Version, first.Version+1)
			}
		})
	}
}
