package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/memory"
)

// TestPutReadsCollectionAsWritten puts recurring jobs while the
// collection's maxRecurrence changes: run with -race, the puts must not
// race with the collection's writes (the memory store lends a put its
// record). A put is then checked against the quota last written.
func TestPutReadsCollectionAsWritten(t *testing.T) {
	ctx := context.Background()
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	quota := func(f recurrence.Frequency, n int) *scheduler.JobCollection {
		return &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 1000,
			MaxRecurrence: &scheduler.MaxRecurrence{Frequency: f, Interval: n}}}}
	}
	for _, c := range []string{"c", "d"} {
		if _, err := s.PutCollection(ctx, c, quota(recurrence.Minute, 1), nil); err != nil {
			t.Fatal(err)
		}
	}
	def := func() *scheduler.Job { // every 30 minutes
		return &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://example.com/", Method: "GET"}},
			Recurrence: &recurrence.Recurrence{Frequency: recurrence.Minute, Interval: 30}}
	}
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			for i := range 50 {
				if _, err := s.PutJob(ctx, "c", fmt.Sprintf("j%d-%d", g, i), def(), nil); err != nil {
					t.Error(err)
				}
			}
		})
	}
	for i := range 20 { // each allows a job every 30 minutes
		if _, err := s.PutCollection(ctx, "c", quota(recurrence.Minute, 1+i%2*29), nil); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if _, err := s.PutCollection(ctx, "d", quota(recurrence.Hour, 1), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "d", "j", def(), nil); !errors.Is(err, scheduler.ErrQuotaExceeded) {
		t.Errorf("PutJob of a job every 30 minutes with maxRecurrence 1 Hour = %v, want ErrQuotaExceeded", err)
	}
	if _, err := s.PutCollection(ctx, "d", quota(recurrence.Minute, 1), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "d", "j", def(), nil); err != nil {
		t.Errorf("PutJob of a job every 30 minutes with maxRecurrence 1 Minute = %v", err)
	}
	if _, err := s.PutJob(ctx, "missing", "j", def(), nil); !errors.Is(err, scheduler.ErrNotFound) ||
		err.Error() != `put job "j": job collection "missing" not found` {
		t.Errorf("PutJob in a missing collection = %v", err)
	}
}

// readCounter embeds the memory store and counts its GetCollection and
// GetJob calls, as a host's wrapper might.
type readCounter struct {
	*memory.Store
	colls, jobs atomic.Int64
}

func (c *readCounter) GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error) {
	c.colls.Add(1)
	return c.Store.GetCollection(ctx, name)
}

func (c *readCounter) GetJob(ctx context.Context, collection, name string) (*scheduler.JobRecord, error) {
	c.jobs.Add(1)
	return c.Store.GetJob(ctx, collection, name)
}

// TestPutReadsThroughWrapper: a store that embeds the memory store and
// has a GetCollection and GetJob of its own is read through them when a
// job is put; the memory store's read for puts serves only itself.
func TestPutReadsThroughWrapper(t *testing.T) {
	ctx := context.Background()
	st := &readCounter{Store: memory.New()}
	s, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	colls, jobs := st.colls.Load(), st.jobs.Load()
	def := &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://example.com/", Method: "GET"}}}
	if _, err := s.PutJob(ctx, "c", "j", def, nil); err != nil {
		t.Fatal(err)
	}
	if st.colls.Load() == colls || st.jobs.Load() == jobs {
		t.Errorf("PutJob read the collection %d and the job %d times through the wrapper, want at least once each",
			st.colls.Load()-colls, st.jobs.Load()-jobs)
	}
}

// TestPutReplacesWhatItRead: a put over a job that exists reads it (on
// the memory store, in the same call as the collection) and keeps its
// creation time and counts the version on; IfMatch is checked against it.
// Each put gives other tags, so that it writes (a put that changes
// nothing leaves the job as it is).
func TestPutReplacesWhatItRead(t *testing.T) {
	ctx := context.Background()
	s, _ := noopScheduler(t, action.HTTP)
	def := &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://example.com/", Method: "GET"}},
		Recurrence: &recurrence.Recurrence{Frequency: recurrence.Hour, Interval: 1}}
	first, err := s.PutJob(ctx, "c", "j", def, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.Version != 1 {
		t.Errorf("created job's Version = %d, want 1", first.Version)
	}
	if _, err := s.PutJob(ctx, "c", "j", def, &scheduler.PutJobOptions{IfMatch: "nope"}); !errors.Is(err, scheduler.ErrPreconditionFailed) {
		t.Errorf("PutJob with a wrong IfMatch = %v, want ErrPreconditionFailed", err)
	}
	second, err := s.PutJob(ctx, "c", "j", def, &scheduler.PutJobOptions{IfMatch: first.ETag, Tags: map[string]string{"put": "second"}})
	if err != nil {
		t.Fatal(err)
	}
	if second.Version != 2 || !second.Created.Equal(first.Created) || second.ETag == first.ETag {
		t.Errorf("replaced job: Version %d, Created %v, ETag %q; want 2, %v, an ETag other than %q",
			second.Version, second.Created, second.ETag, first.Created, first.ETag)
	}
	if _, err := s.PutJob(ctx, "c", "new", def, &scheduler.PutJobOptions{IfMatch: "*"}); !errors.Is(err, scheduler.ErrPreconditionFailed) {
		t.Errorf("PutJob of a new job with IfMatch * = %v, want ErrPreconditionFailed", err)
	}
	// Without IfMatch, a put creates the jobs that do not exist and
	// replaces those that do.
	for i, name := range []string{"j", "k", "k", "l", "l", "j"} {
		before, _ := s.GetJob(ctx, "c", name)
		r, err := s.PutJob(ctx, "c", name, def, &scheduler.PutJobOptions{Tags: map[string]string{"put": strconv.Itoa(i)}})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case before == nil && r.Version != 1:
			t.Errorf("PutJob created %q with Version %d, want 1", name, r.Version)
		case before != nil && (r.Version != before.Version+1 || !r.Created.Equal(before.Created)):
			t.Errorf("PutJob replaced %q: Version %d, Created %v; want %d, %v", name, r.Version, r.Created, before.Version+1, before.Created)
		}
		if got, err := s.GetJob(ctx, "c", name); err != nil || got.ETag != r.ETag || got.Version != r.Version {
			t.Errorf("GetJob(%q) after PutJob = %+v, %v; want ETag %q, Version %d", name, got, err, r.ETag, r.Version)
		}
	}
}

// TestConcurrentPutsCountEveryWrite: goroutines put the same jobs, each
// creating or replacing them, some with IfMatch "*": every put writes once
// (none is lost and none writes twice), so each job's Version is the number
// of puts of it. Run with -race.
func TestConcurrentPutsCountEveryWrite(t *testing.T) {
	ctx := context.Background()
	s, _ := noopScheduler(t, action.HTTP)
	const goroutines, rounds, jobs = 4, 25, 5
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range rounds * jobs {
				def := &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://example.com/", Method: "GET"}},
					Recurrence: &recurrence.Recurrence{Frequency: recurrence.Hour, Interval: int32(1 + g)}}
				// Tags of its own make each put change the job.
				opts := &scheduler.PutJobOptions{Tags: map[string]string{"put": fmt.Sprint(g, "-", i)}}
				if i%3 == 2 {
					opts.IfMatch = "*"
				}
				name := fmt.Sprintf("j%d", i%jobs)
				if _, err := s.PutJob(ctx, "c", name, def, opts); err != nil {
					if opts.IfMatch != "" && errors.Is(err, scheduler.ErrPreconditionFailed) {
						// IfMatch "*" before the job was created: count it as
						// not written by putting it again without.
						opts.IfMatch = ""
						if _, err = s.PutJob(ctx, "c", name, def, opts); err == nil {
							continue
						}
					}
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for i := range jobs {
		r, err := s.GetJob(ctx, "c", fmt.Sprintf("j%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if r.Version != goroutines*rounds {
			t.Errorf("job j%d: Version %d after %d puts", i, r.Version, goroutines*rounds)
		}
	}
}

// TestPutReturnsItsOwnNextExecutionTime checks the NextExecutionTime of the
// records PutJob returns (a put keeps it with the record in one
// allocation): set to the start time when the job is enabled, nil when it
// is disabled, and owned by the caller: changing it reaches neither the
// stored job nor the record of another put.
func TestPutReturnsItsOwnNextExecutionTime(t *testing.T) {
	ctx := context.Background()
	s, err := scheduler.New(memory.New(), &scheduler.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", &scheduler.JobCollection{}, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now().UTC().Truncate(time.Second).Add(time.Hour)
	def := func(state scheduler.JobState) *scheduler.Job {
		at := start
		return &scheduler.Job{StartTime: &at, State: state,
			Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://example.com/", Method: "GET"}}}
	}
	var got []*scheduler.JobRecord
	for _, name := range []string{"a", "b", "a"} { // create, create, replace
		r, err := s.PutJob(ctx, "c", name, def(""), nil)
		if err != nil {
			t.Fatal(err)
		}
		if p := r.Status.NextExecutionTime; p == nil || !p.Equal(start) {
			t.Fatalf("put %s: NextExecutionTime = %v, want %v", name, p, start)
		}
		got = append(got, r)
	}
	for i, r := range got {
		*r.Status.NextExecutionTime = start.Add(time.Duration(i+1) * time.Minute)
	}
	for i, r := range got {
		if want := start.Add(time.Duration(i+1) * time.Minute); !r.Status.NextExecutionTime.Equal(want) {
			t.Errorf("record %d: NextExecutionTime = %v after changing it to %v: shared with another record", i, *r.Status.NextExecutionTime, want)
		}
	}
	for _, name := range []string{"a", "b"} {
		r, err := s.GetJob(ctx, "c", name)
		if err != nil {
			t.Fatal(err)
		}
		if p := r.Status.NextExecutionTime; p == nil || !p.Equal(start) {
			t.Errorf("stored job %s: NextExecutionTime = %v after the caller changed its record's, want %v", name, p, start)
		}
	}
	r, err := s.PutJob(ctx, "c", "d", def(scheduler.JobDisabled), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status.NextExecutionTime != nil {
		t.Errorf("disabled job: NextExecutionTime = %v, want nil", *r.Status.NextExecutionTime)
	}
}
