package scheduler_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
)

// crashingStore passes calls through to a shared store until it is
// marked dead; from then on it claims nothing and every write fails, as
// for a process that died in the middle of an attempt.
type crashingStore struct {
	scheduler.Store
	dead atomic.Bool
}

var errDead = errors.New("process died")

func (s *crashingStore) ClaimDue(ctx context.Context, now time.Time, owner string, until time.Time, limit int) ([]*scheduler.JobRecord, error) {
	if s.dead.Load() {
		return nil, nil
	}
	return s.Store.ClaimDue(ctx, now, owner, until, limit)
}

func (s *crashingStore) NextDue(ctx context.Context) (time.Time, error) {
	if s.dead.Load() {
		return time.Time{}, nil
	}
	return s.Store.NextDue(ctx)
}

func (s *crashingStore) Record(ctx context.Context, owner string, j *scheduler.JobRecord, h []scheduler.HistoryEntry) error {
	if s.dead.Load() {
		return errDead
	}
	return s.Store.Record(ctx, owner, j, h)
}

func (s *crashingStore) ExtendLease(ctx context.Context, collection, name, owner string, until time.Time) error {
	if s.dead.Load() {
		return errDead
	}
	return s.Store.ExtendLease(ctx, collection, name, owner, until)
}

func (s *crashingStore) PutJob(ctx context.Context, j *scheduler.JobRecord) error {
	if s.dead.Load() {
		return errDead
	}
	return s.Store.PutJob(ctx, j)
}

// TestTakeoverKeepsExecutionTag: instance a starts an occurrence and dies
// before recording its outcome; instance b takes the occurrence over when
// a's lease expires and must send the same execution tag, so that the
// receiver can recognise the duplicate.
func TestTakeoverKeepsExecutionTag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, scheduler.Config{InstanceID: "b", LeaseDuration: 30 * time.Second})
		e.put("j", jobJSON(e.t0.Add(time.Minute), ""))

		crash := &crashingStore{Store: e.store}
		var tagA atomic.Value
		regA := &action.Registry{}
		regA.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
			tagA.Store(req.ExecutionTag())
			crash.dead.Store(true) // the process dies mid-attempt
			return &action.Result{Message: "sent"}, nil
		}))
		cfgA := e.cfg
		cfgA.InstanceID, cfgA.Executors, cfgA.OnHistory = "a", regA, nil
		a, err := scheduler.New(crash, &cfgA)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if tagA.Load() == nil {
			t.Fatal("instance a never ran the occurrence")
		}

		e.start() // instance b, on the live store
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		e.stop()
		a.Stop(context.Background())

		reqs := e.exec.requests()
		if len(reqs) != 1 {
			t.Fatalf("instance b made %d attempts, want 1 (the taken-over occurrence)", len(reqs))
		}
		if got, want := reqs[0].ExecutionTag(), tagA.Load().(string); got != want {
			t.Errorf("execution tag after takeover = %q, want %q (the tag instance a sent)", got, want)
		}
		if reqs[0].Occurrence != 1 {
			t.Errorf("taken-over attempt is occurrence %d, want 1", reqs[0].Occurrence)
		}
	})
}
