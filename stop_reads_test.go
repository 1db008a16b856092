package scheduler_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// TestStopServesReadsWhileItWaits calls Stop while an attempt runs: until
// Stop returns, the methods that only read the store answer and those that
// write it return ErrStopped; once Stop has returned, the reads return
// ErrStopped too.
func TestStopServesReadsWhileItWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{})
		e.exec.fn = func(req *action.Request, n int) error {
			time.Sleep(30 * time.Second)
			return nil
		}
		e.start()
		e.put("j", jobJSON(time.Time{}, ""))
		time.Sleep(time.Second)
		ctx := context.Background()
		stopped := make(chan error, 1)
		go func() { stopped <- e.s.Stop(ctx) }()
		synctest.Wait() // Stop waits for the attempt
		select {
		case err := <-stopped:
			t.Fatalf("Stop returned %v with an attempt in flight", err)
		default:
		}
		reads := func() []error {
			_, err0 := e.s.GetJob(ctx, "c", "j")
			_, err1 := e.s.ListJobs(ctx, "c", nil)
			_, err2 := e.s.ListHistory(ctx, "c", "j", nil)
			_, err3 := e.s.GetCollection(ctx, "c")
			_, err4 := e.s.ListCollections(ctx)
			_, err5 := e.s.JobCounts(ctx)
			_, err6 := e.s.DueCount(ctx)
			_, err7 := e.s.HealthCounts(ctx)
			_, err8 := e.s.HistoryCounts(ctx, e.t0, e.t0.Add(time.Minute), time.Minute, nil)
			_, err9 := e.s.RecentHistory(ctx, nil)
			return []error{err0, err1, err2, err3, err4, err5, err6, err7, err8, err9}
		}
		for i, err := range reads() {
			if err != nil {
				t.Errorf("read %d while Stop waits: %v, want nil", i, err)
			}
		}
		if _, err := e.s.DisableJob(ctx, "c", "j"); !errors.Is(err, scheduler.ErrStopped) {
			t.Errorf("DisableJob while Stop waits: %v, want ErrStopped", err)
		}
		if _, err := e.s.PutJobJSON(ctx, "c", "k", []byte(jobJSON(time.Time{}, "")), nil); !errors.Is(err, scheduler.ErrStopped) {
			t.Errorf("PutJobJSON while Stop waits: %v, want ErrStopped", err)
		}
		if err := e.s.DeleteJob(ctx, "c", "j", nil); !errors.Is(err, scheduler.ErrStopped) {
			t.Errorf("DeleteJob while Stop waits: %v, want ErrStopped", err)
		}
		if err := <-stopped; err != nil {
			t.Fatalf("Stop: %v", err)
		}
		for i, err := range reads() {
			if !errors.Is(err, scheduler.ErrStopped) {
				t.Errorf("read %d after Stop returned: %v, want ErrStopped", i, err)
			}
		}
		if h := e.history("j"); len(h) != 1 || h[0].Status != scheduler.StatusCompleted {
			t.Errorf("history after Stop = %+v, want the completed attempt", h)
		}
	})
}
