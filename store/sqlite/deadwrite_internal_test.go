package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// endsWhenLooked is a context that ends when its Err is called the second
// time: after the write's entry check, at the writer's look over its group.
type endsWhenLooked struct {
	context.Context
	cancel context.CancelFunc
	looks  atomic.Int32
}

func (c *endsWhenLooked) Err() error {
	if c.looks.Add(1) == 2 {
		c.cancel()
	}
	return c.Context.Err()
}

// TestDeadWriteAnsweredAtOnce: a write whose context ended by the time
// the writer takes up its group is answered then, not once the other
// writes of its group are done.
func TestDeadWriteAnsweredAtOnce(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "jobclock.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	// A first write holds the writer so that the next two form a group.
	release := make(chan struct{})
	held := make(chan struct{})
	firstDone := make(chan error, 1)
	go func() {
		firstDone <- s.write(ctx, func(*wtx) error { close(held); <-release; return nil })
	}()
	<-held
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	deadCtx := &endsWhenLooked{Context: inner, cancel: cancel}
	deadDone := make(chan error, 1)
	go func() {
		deadDone <- s.PutJob(deadCtx, &scheduler.JobRecord{Collection: "c", Name: "dead", Job: &scheduler.Job{}, State: scheduler.JobEnabled})
	}()
	// The live write of the group waits, inside the group, for the dead
	// write's answer (at most 10 s, so that the test ends either way).
	answeredFirst := make(chan bool, 1)
	liveDone := make(chan error, 1)
	go func() {
		liveDone <- s.writeFirst(ctx, func(*wtx) error {
			select {
			case err := <-deadDone:
				deadDone <- err
				answeredFirst <- true
			case <-time.After(10 * time.Second):
				answeredFirst <- false
			}
			return nil
		})
	}()
	// Both wait to be taken up by the writer.
	for deadCtx.looks.Load() < 1 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	if err := <-liveDone; err != nil {
		t.Fatalf("live write: %v", err)
	}
	if !<-answeredFirst {
		t.Error("a write whose context had ended was answered only after the live write of its group")
	}
	if err := <-deadDone; !errors.Is(err, context.Canceled) {
		t.Errorf("dead write = %v, want context.Canceled", err)
	}
}
