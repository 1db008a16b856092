package scheduler_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/memory"
)

// conflictOnce is a store whose first job write fails with ErrConflict, as
// when another writer got there first.
type conflictOnce struct {
	scheduler.Store
	failed atomic.Bool
}

func (s *conflictOnce) PutJob(ctx context.Context, r *scheduler.JobRecord) error {
	if !s.failed.Swap(true) {
		return scheduler.ErrConflict
	}
	return s.Store.PutJob(ctx, r)
}

// TestPauseKeptAcrossPutRetry: a put of a paused job that is retried
// after a conflicting write keeps the pause's reason and resume time.
func TestPauseKeptAcrossPutRetry(t *testing.T) {
	ctx := context.Background()
	st := &conflictOnce{Store: memory.New()}
	s, err := scheduler.New(st, &scheduler.Config{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", &scheduler.JobCollection{}, nil); err != nil {
		t.Fatal(err)
	}
	resume := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	job := batchJob(t)
	job.State, job.StateReason, job.ResumeTime = scheduler.JobDisabled, "release freeze", &resume
	if _, err := s.PutJob(ctx, "c", "paused", job, nil); err != nil {
		t.Fatal(err)
	}
	if !st.failed.Load() {
		t.Fatal("the store never refused a write: the put was not retried")
	}
	got, err := s.GetJob(ctx, "c", "paused")
	if err != nil {
		t.Fatal(err)
	}
	if d := got.Definition(); d.StateReason != "release freeze" || d.ResumeTime == nil || !d.ResumeTime.Equal(resume) {
		t.Errorf("after a retried put: stateReason %q, resumeTime %v; want %q and %v", d.StateReason, d.ResumeTime, "release freeze", resume)
	}
}
