package scheduler

import (
	"context"
	"time"
)

// loop is the goroutine that owns the timer: it runs runDue, then sleeps
// until the instant runDue returned, a wake-up from notify, or ctx's end.
func (s *Scheduler) loop(ctx context.Context) {
	defer close(s.loopDone)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		s.stepped.Store(now.UnixNano())
		wake := s.runDue(ctx, now)
		if ctx.Err() != nil {
			return
		}
		timer.Reset(max(time.Until(wake), 0))
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-timer.C:
		}
	}
}
