package scheduler

import (
	"context"
	"time"
)

// RunDue exposes the loop's step function to the external tests.
func (s *Scheduler) RunDue(ctx context.Context, now time.Time) time.Time { return s.runDue(ctx, now) }

// nopStore is a Store whose methods are never called.
type nopStore struct{ Store }
