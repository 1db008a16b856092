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
func (s *Store) ExtendPermits(ctx context.Context, holder string, until time.Time) error {
	return s.writeFirst(ctx, func(tx *wtx) error { return s.d.ExtendPermits(tx.ctx, tx, holder, until) })
}

// ReleasePermits implements [scheduler.Limiter].
func (s *Store) ReleasePermits(ctx context.Context, holder string) error {
	return s.writeFirst(ctx, func(tx *wtx) error { return s.d.ReleasePermits(tx.ctx, tx, holder) })
}
