package scheduler

import (
	"log/slog"
	"testing"
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
