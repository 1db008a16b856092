package scheduler

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"
)

type ctxKey struct{}

func TestAttemptContext(t *testing.T) {
	t.Run("deadline without Done", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx := newAttemptContext(context.Background(), time.Now().Add(time.Second))
			defer ctx.stop(time.Now())
			if err := ctx.Err(); err != nil {
				t.Errorf("Err before the deadline = %v, want nil", err)
			}
			time.Sleep(time.Second)
			if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Err at the deadline = %v, want DeadlineExceeded", err)
			}
			select {
			case <-ctx.Done():
			default:
				t.Errorf("Done is open after the deadline")
			}
		})
	})
	t.Run("Done closes at the deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			start := time.Now()
			ctx := newAttemptContext(context.Background(), start.Add(5*time.Second))
			defer ctx.stop(time.Now())
			<-ctx.Done()
			if d := time.Since(start); d != 5*time.Second {
				t.Errorf("Done closed after %v, want 5s", d)
			}
			if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Err = %v, want DeadlineExceeded", err)
			}
		})
	})
	t.Run("parent cancelled", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
		ctx := newAttemptContext(parent, time.Now().Add(time.Hour))
		defer ctx.stop(time.Now())
		if v := ctx.Value(ctxKey{}); v != "v" {
			t.Errorf("Value(k) = %v, want the parent's v", v)
		}
		child, stopChild := context.WithCancel(ctx)
		defer stopChild()
		cancel()
		<-ctx.Done()
		<-child.Done()
		if err := ctx.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err = %v, want Canceled", err)
		}
	})
	t.Run("parent cancelled before Done", func(t *testing.T) {
		parent, cancel := context.WithCancel(context.Background())
		ctx := newAttemptContext(parent, time.Now().Add(time.Hour))
		defer ctx.stop(time.Now())
		cancel()
		if err := ctx.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err = %v, want Canceled", err)
		}
	})
	t.Run("stop", func(t *testing.T) {
		ctx := newAttemptContext(context.Background(), time.Now().Add(time.Hour))
		child, stopChild := context.WithCancel(ctx)
		defer stopChild()
		ctx.stop(time.Now())
		<-child.Done()
		if err := ctx.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err after stop = %v, want Canceled", err)
		}
		late := newAttemptContext(context.Background(), time.Now().Add(time.Hour))
		late.stop(time.Now())
		if err := late.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err after stop, before Done = %v, want Canceled", err)
		}
		<-late.Done() // made after stop: already closed
	})
	t.Run("permits lost", func(t *testing.T) {
		ctx := newAttemptContext(context.Background(), time.Now().Add(time.Hour))
		defer ctx.stop(time.Now())
		done := ctx.Done()
		ctx.losePermits()
		<-done
		if !ctx.permitsLost() || !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("after losePermits: permitsLost %v, Err %v; want true, Canceled", ctx.permitsLost(), ctx.Err())
		}
		late := newAttemptContext(context.Background(), time.Now().Add(time.Hour))
		defer late.stop(time.Now())
		late.losePermits()
		<-late.Done() // made after losePermits: already closed
		if !late.permitsLost() || !errors.Is(late.Err(), context.Canceled) {
			t.Errorf("after losePermits, before Done: permitsLost %v, Err %v; want true, Canceled", late.permitsLost(), late.Err())
		}
	})
	// Once Err is not nil it stays the same (context.Context's contract),
	// whether a Done made later or the deadline passing comes after.
	t.Run("Err stays after stop", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx := newAttemptContext(context.Background(), time.Now().Add(time.Second))
			ctx.stop(time.Now()) // the attempt ended; the executor kept its context
			e1 := ctx.Err()
			time.Sleep(2 * time.Second) // past the deadline
			e2 := ctx.Err()
			<-ctx.Done()
			if e3 := ctx.Err(); e1 != context.Canceled || e2 != e1 || e3 != e1 {
				t.Errorf("Err after stop = %v, past the deadline %v, after Done %v; want Canceled each time", e1, e2, e3)
			}
		})
	})
	t.Run("Err stays after permits lost", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx := newAttemptContext(context.Background(), time.Now().Add(time.Second))
			ctx.losePermits()
			time.Sleep(2 * time.Second)
			if err := ctx.Err(); err != context.Canceled {
				t.Errorf("Err past the deadline after losePermits = %v, want Canceled", err)
			}
			<-ctx.Done()
			if err := ctx.Err(); err != context.Canceled {
				t.Errorf("Err after Done made past the deadline = %v, want Canceled", err)
			}
		})
	})
	t.Run("Err stays past the deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			parent, cancel := context.WithCancel(context.Background())
			ctx := newAttemptContext(parent, time.Now().Add(time.Second))
			time.Sleep(2 * time.Second)
			e1 := ctx.Err()
			cancel()
			e2 := ctx.Err()
			ctx.stop(time.Now())
			<-ctx.Done()
			if e3 := ctx.Err(); e1 != context.DeadlineExceeded || e2 != e1 || e3 != e1 {
				t.Errorf("Err past the deadline = %v, after the parent's cancel %v, after stop and Done %v; want DeadlineExceeded each time", e1, e2, e3)
			}
		})
	})
	t.Run("deadline past the year 2262", func(t *testing.T) {
		ctx := newAttemptContext(context.Background(), time.Now().Add(math.MaxInt64))
		defer ctx.stop(time.Now())
		if d, _ := ctx.Deadline(); d.Year() < 2262 || ctx.Err() != nil {
			t.Errorf("Deadline = %v, Err = %v; want the year 2262, nil", d, ctx.Err())
		}
	})
	t.Run("earlier parent deadline", func(t *testing.T) {
		d := time.Now().Add(time.Minute)
		parent, cancel := context.WithDeadline(context.Background(), d)
		defer cancel()
		ctx := newAttemptContext(parent, d.Add(time.Hour))
		defer ctx.stop(time.Now())
		if got, ok := ctx.Deadline(); !ok || !got.Equal(d) {
			t.Errorf("Deadline = %v, %v; want the parent's %v", got, ok, d)
		}
	})
}

// TestAttemptStateSize keeps what every attempt allocates, its context and
// request with their IDs' parts, within 208 bytes (a size class of the Go
// allocator): a burst of occurrences allocates one each.
func TestAttemptStateSize(t *testing.T) {
	if n := unsafe.Sizeof(attemptState{}); n > 208 {
		t.Errorf("an attemptState takes %d bytes, want at most 208", n)
	}
}

func newAttemptContext(parent context.Context, deadline time.Time) *attemptContext {
	c := new(attemptContext)
	c.init(parent, deadline)
	return c
}
