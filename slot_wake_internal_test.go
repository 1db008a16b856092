package scheduler

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// TestFreeSlotReleasesBeforeWake: freeSlot wakes the loop only once the
// slot is free, so that a loop woken by it (with every slot of
// MaxConcurrency taken until then) finds the slot free, rather than
// sleeping until its next poll. The wake-up is seen at the instant it is
// sent: the test's wake channel is closed, so the send panics on the spot,
// and what busy() says then is what a loop woken by it would find.
func TestFreeSlotReleasesBeforeWake(t *testing.T) {
	s, err := New(quietStore{}, &Config{Logger: slog.New(slog.DiscardHandler), MaxConcurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.inFlight.Add(1) // the one slot taken, as by a claimed job
	s.wg.Add(1)
	s.wake = make(chan struct{})
	close(s.wake)
	atWake := -1 // busy() when freeSlot woke the loop
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("freeSlot did not wake the loop")
			}
			atWake = s.busy()
		}()
		s.freeSlot()
	}()
	if atWake != 0 {
		t.Errorf("when freeSlot woke the loop, busy() = %d of MaxConcurrency 1, want 0 (the slot free)", atWake)
	}
}

// claimCounter is a store that claims nothing and counts its claims, with
// the limit of the last one.
type claimCounter struct {
	quietStore
	claims, limit int
}

func (c *claimCounter) ClaimDue(_ context.Context, _ time.Time, _ string, _ time.Time, limit int) ([]*JobRecord, error) {
	c.claims++
	c.limit = limit
	return nil, nil
}

func (c *claimCounter) NextDue(context.Context) (time.Time, error) { return time.Time{}, nil }

// TestNoClaimWhileClaimedJobsWait: while jobs that the loop claimed wait
// for a worker to take them, a step of the loop claims nothing, slots free
// or not, and an attempt that ends and frees a slot does not wake it; the
// worker that takes the last of them does, and the loop's next step claims
// every slot free in one call. (Before, a loop that kept up with the
// attempts ending claimed the one or two slots each of them freed, a store
// call each, while up to MaxConcurrency jobs it had claimed waited.)
func TestNoClaimWhileClaimedJobsWait(t *testing.T) {
	st := &claimCounter{}
	s, err := New(st, &Config{Logger: slog.New(slog.DiscardHandler), MaxConcurrency: 10, ClaimAhead: NoClaimAhead})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	s.nextPrune = now.Add(time.Hour) // no retention pass
	jobs := []*JobRecord{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	s.inFlight.Add(int64(len(jobs))) // as startHeld hands them to the workers
	s.work.push(jobs, now, nil)
	s.runDue(ctx, now)
	if st.claims != 0 {
		t.Errorf("with %d claimed jobs waiting for a worker and 7 slots free, the loop claimed %d times, want none", len(jobs), st.claims)
	}
	s.outcomes.loopWaits.Store(true) // as after a step that found no slot free
	s.workerFreed()                  // an attempt ended: its outcome waits for the store
	if len(s.wake) > 0 {
		t.Error("an attempt that ended while claimed jobs waited for a worker woke the loop")
	}
	wake := make(chan struct{}, 1)
	for i := range jobs {
		if _, ok := s.nextTask(wake); !ok {
			t.Fatal("no task")
		}
		if woke, last := len(s.wake) > 0, i == len(jobs)-1; woke != last {
			t.Errorf("after the worker took job %d of %d waiting, the loop woken: %v, want %v", i+1, len(jobs), woke, last)
		}
	}
	select {
	case <-s.wake:
	default:
	}
	s.runDue(ctx, now)
	// 10 slots, 3 jobs in flight, the outcome of 1 waiting for the store.
	if st.claims != 1 || st.limit != 8 {
		t.Errorf("once the claimed jobs were taken, the loop claimed %d times, the last for %d jobs; want once, for the 8 slots free", st.claims, st.limit)
	}
}

// TestReachCutNoSlotWake: a step that finds no slot free while it holds
// claims far enough ahead claims next halfway to the last of them (see
// reachCut), and an attempt that ends before then and frees a slot does
// not wake the loop for a step that would claim nothing.
func TestReachCutNoSlotWake(t *testing.T) {
	st := &claimCounter{}
	s, err := New(st, &Config{Logger: slog.New(slog.DiscardHandler), MaxConcurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	s.nextPrune = now.Add(time.Hour) // no retention pass
	s.inFlight.Add(1)                // one slot taken by an attempt, the other by the claim held
	s.wg.Add(1)
	s.ahead.hold([]*JobRecord{{Name: "later", Schedule: JobSchedule{DueAt: now.Add(time.Second)}}})
	wake := s.runDue(ctx, now)
	if want := now.Add(500 * time.Millisecond); !s.ahead.claimAt.Equal(want) || wake.After(want) {
		t.Fatalf("step with no slot free and a claim held 1s ahead: claims next at %v, wakes at %v; want both at %v", s.ahead.claimAt.Sub(now), wake.Sub(now), want.Sub(now))
	}
	s.workerFreed() // the attempt ended: its outcome waits for the store
	if len(s.wake) > 0 {
		t.Error("an attempt that ended before the loop's next claim woke the loop")
	}
	if st.claims != 0 {
		t.Errorf("the loop claimed %d times, want none", st.claims)
	}
}
