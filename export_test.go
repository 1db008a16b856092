package scheduler

import (
	"context"
	"slices"
	"time"
)

// RunDue exposes the loop's step function to the external tests.
func (s *Scheduler) RunDue(ctx context.Context, now time.Time) time.Time { return s.runDue(ctx, now) }

// nopStore is a Store whose methods are never called.
type nopStore struct{ Store }

// CompiledCalendars returns the names of the calendars of collection that
// the Scheduler holds compiled, sorted.
func (s *Scheduler) CompiledCalendars(collection string) []string {
	var names []string
	if v, ok := s.policies.m.Load(collection); ok {
		v.(*cachedPolicy).compiled.Range(func(k, _ any) bool {
			names = append(names, k.(string))
			return true
		})
	}
	slices.Sort(names)
	return names
}

// WriteMarks returns how many writes wait for the loop to look at them
// (see Scheduler.wrote).
func (s *Scheduler) WriteMarks() int {
	s.ahead.mu.Lock()
	defer s.ahead.mu.Unlock()
	return len(s.ahead.marks)
}
