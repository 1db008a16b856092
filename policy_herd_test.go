package scheduler_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/memory"
)

// heldCollectionReads is a store whose GetCollection of collection "c"
// counts its calls, and holds them until open is closed.
type heldCollectionReads struct {
	scheduler.Store
	open  chan struct{}
	calls atomic.Int32
}

func (h *heldCollectionReads) GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error) {
	if name == "c" {
		h.calls.Add(1)
		<-h.open
	}
	return h.Store.GetCollection(ctx, name)
}

// TestBurstReadsCollectionOnce: a burst of attempts of one collection
// that this instance has not read yet reads it once, however many
// workers start them at once: those that come while it is read wait for
// that read.
func TestBurstReadsCollectionOnce(t *testing.T) {
	const n = 20
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		var ran atomic.Int32
		reg := &action.Registry{}
		reg.Register("Noop", action.ExecutorFunc(func(context.Context, *action.Request) (*action.Result, error) {
			ran.Add(1)
			return nil, nil
		}))
		st := memory.New()
		writer, err := scheduler.New(st, &scheduler.Config{Executors: reg, Logger: discard})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := writer.PutCollection(ctx, "c", nil, nil); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(time.Minute)
		for i := range n {
			def := &scheduler.Job{StartTime: &at, Action: action.Action{Type: "Noop", Custom: []byte(`{}`)}}
			if _, err := writer.PutJob(ctx, "c", fmt.Sprintf("j%d", i), def, nil); err != nil {
				t.Fatal(err)
			}
		}
		held := &heldCollectionReads{Store: st, open: make(chan struct{})}
		s, err := scheduler.New(held, &scheduler.Config{Executors: reg, Logger: discard, MaxConcurrency: n})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(at) + time.Millisecond)
		synctest.Wait()
		if c := held.calls.Load(); c != 1 {
			t.Errorf("%d attempts due at once, while the read of their collection waits: %d reads, want 1", n, c)
		}
		close(held.open)
		time.Sleep(time.Second)
		synctest.Wait()
		if got := ran.Load(); got != n {
			t.Errorf("%d attempts ran, want %d", got, n)
		}
		if c := held.calls.Load(); c != 1 {
			t.Errorf("after the read: %d reads, want 1", c)
		}
		if err := s.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
