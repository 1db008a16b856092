package sqlite

import (
	"context"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

var _ scheduler.Limiter = (*Store)(nil)

// AcquirePermits implements [scheduler.Limiter]: one write, which changes
// nothing when a permit is refused.
func (s *Store) AcquirePermits(ctx context.Context, req scheduler.PermitRequest) (scheduler.PermitGrant, error) {
	return s.d.AcquirePermits(ctx, req, func(fn func(c sqlstore.Conn) error) error {
		return s.writeFirst(ctx, func(tx *wtx) error { return fn(tx) })
	})
}

// ExtendPermits implements [scheduler.Limiter].
func (s *Store) ExtendPermits(ctx context.Context, holder string, now, until time.Time) (int, error) {
	var n int
	err := s.writeFirst(ctx, func(tx *wtx) error {
		var err error
		n, err = s.d.ExtendPermits(tx.ctx, tx, holder, now, until)
		return err
	})
	return n, err
}

// ReleasePermits implements [scheduler.Limiter].
func (s *Store) ReleasePermits(ctx context.Context, holder string) error {
	return s.writeFirst(ctx, func(tx *wtx) error { return s.d.ReleasePermits(tx.ctx, tx, holder) })
}
