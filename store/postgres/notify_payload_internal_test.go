package postgres

import (
	"testing"

	scheduler "github.com/jobclock/scheduler"
)

// TestNotifyNothingPendingSendsNothing replays notifier's loop by hand: a
// write that lands between the notifier taking the wake-up from s.wakes
// and calling payload is named by that notification, but leaves a
// wake-up behind. The next send finds nothing pending and must send
// nothing: an empty payload stands for every job, and would make every
// listener give back every claim it holds ahead.
func TestNotifyNothingPendingSendsNothing(t *testing.T) {
	s := &Store{wakes: make(chan struct{}, 1)}
	s.wake("c", "j1")
	<-s.wakes         // the notifier takes the wake-up...
	s.wake("c", "j2") // ...a write commits and asks for a notification...
	first, ok := s.woke.take()
	if got := written(first.payload); !ok || len(got) != 2 {
		t.Fatalf("first notification (sent %v) names %v, want j1 and j2", ok, got)
	}
	select {
	case <-s.wakes: // the wake-up j2's write left
	default:
		t.Fatal("no wake-up left")
	}
	if second, ok := s.woke.take(); ok {
		t.Errorf("second notification sent (payload %q, standing for %v) though no write is pending", second.payload, written(second.payload))
	}
	// Too many jobs to name: the notification is sent, and stands for all.
	for range maxPayload/4 + 1 {
		s.wake("c", "j")
	}
	p, ok := s.woke.take()
	if got := written(p.payload); !ok || len(got) != 1 || got[0] != (scheduler.Written{}) {
		t.Errorf("after too many writes to name: sent %v, names %v, want sent for every job", ok, got)
	}
}

// TestNotifyPutBack: what a failed notification named is pending again,
// ahead of what was written since, and within the payload's bound: past
// it, the next notification stands for every job.
func TestNotifyPutBack(t *testing.T) {
	s := &Store{wakes: make(chan struct{}, 1)}
	s.wake("c", "j1")
	failed, _ := s.woke.take()
	s.wake("c", "j2")
	s.woke.putBack(failed)
	p, ok := s.woke.take()
	if got := written(p.payload); !ok || len(got) != 2 || got[0].Name != "j1" || got[1].Name != "j2" {
		t.Errorf("after a failed notification of j1 and a write of j2: sent %v, names %v, want j1 and j2", ok, got)
	}
	for range 500 { // a payload within maxPayload
		s.wake("c", "j")
	}
	failed, _ = s.woke.take()
	if failed.payload == "" {
		t.Fatal("500 jobs are not named, want them named")
	}
	for range maxPayload/4 - 400 { // within the bound alone, past it with the 500
		s.wake("c", "k")
	}
	s.woke.putBack(failed)
	if len(s.woke.jobs) != 0 || !s.woke.all {
		t.Errorf("put back past the bound: %d jobs kept, all %v; want none kept, for every job", len(s.woke.jobs), s.woke.all)
	}
	s.woke.putBack(named{all: true})
	if p, ok := s.woke.take(); !ok || p.payload != "" {
		t.Errorf("after a failed notification for every job: sent %v, payload %q; want sent for every job", ok, p.payload)
	}
}
