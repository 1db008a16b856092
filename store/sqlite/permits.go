package sqlite

import (
	"context"
	"errors"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

var _ scheduler.Limiter = (*Store)(nil)

// AcquirePermits implements [scheduler.Limiter]: one write, which changes
// nothing when a permit is refused.
func (s *Store) AcquirePermits(ctx context.Context, req scheduler.PermitRequest) (scheduler.PermitGrant, error) {
	var g scheduler.PermitGrant
	err := s.writeFirst(ctx, func(tx *wtx) error {
		var err error
		g, err = s.d.AcquirePermits(tx.ctx, tx, req)
		if err == nil && !g.Granted {
			return sqlstore.ErrRefused
		}
		return err
	})
	if errors.Is(err, sqlstore.ErrRefused) {
		return g, nil
	}
	if err != nil {
		return scheduler.PermitGrant{}, err
	}
	return g, nil
}

// ExtendPermits implements [scheduler.Limiter].
func (s *Store) ExtendPermits(ctx context.Context, holder string, until time.Time) error {
	return s.writeFirst(ctx, func(tx *wtx) error { return s.d.ExtendPermits(tx.ctx, tx, holder, until) })
}

// ReleasePermits implements [scheduler.Limiter].
func (s *Store) ReleasePermits(ctx context.Context, holder string) error {
	return s.writeFirst(ctx, func(tx *wtx) error { return s.d.ReleasePermits(tx.ctx, tx, holder) })
}
