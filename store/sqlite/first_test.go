package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// TestEngineWritesGoFirst: while a write commits, 40 puts of due jobs
// arrive, then a claim. The claim goes first in the next group, so it
// finds none of those jobs due yet; in order of arrival it would claim
// them all.
func TestEngineWritesGoFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s, err := Open(ctx, filepath.Join(t.TempDir(), "first.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		const puts = 40
		c := &scheduler.CollectionRecord{Name: "c"}
		c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: puts}
		if err := s.PutCollection(ctx, c); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

		// Hold the writer in a write until release is closed.
		release := make(chan struct{})
		held := make(chan error, 1)
		go func() { held <- s.write(ctx, func(*wtx) error { <-release; return nil }) }()
		synctest.Wait()

		var wg sync.WaitGroup
		putErrs := make([]error, puts)
		for i := range puts {
			wg.Go(func() {
				putErrs[i] = s.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: fmt.Sprintf("j%02d", i), Job: &scheduler.Job{},
					State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: now.Add(-time.Minute)}, Created: now, Updated: now})
			})
		}
		synctest.Wait() // every put waits for the writer
		var claimed []*scheduler.JobRecord
		var claimErr error
		wg.Go(func() { claimed, claimErr = s.ClaimDue(ctx, now, "engine", now.Add(time.Minute), 100) })
		synctest.Wait()
		close(release)
		wg.Wait()
		if err := <-held; err != nil {
			t.Fatal(err)
		}
		for i, err := range putErrs {
			if err != nil {
				t.Errorf("put j%02d: %v", i, err)
			}
		}
		if claimErr != nil {
			t.Fatal(claimErr)
		}
		if len(claimed) != 0 {
			t.Errorf("the claim that arrived after %d puts found %d of their jobs: it waited behind them", puts, len(claimed))
		}
		// The jobs are there for the next claim.
		if got, err := s.ClaimDue(ctx, now, "engine", now.Add(time.Minute), 100); err != nil || len(got) != puts {
			t.Errorf("next ClaimDue = %d jobs, %v; want %d", len(got), err, puts)
		}
	})
}
