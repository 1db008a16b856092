package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

var _ scheduler.Limiter = (*Store)(nil)

// AcquirePermits implements [scheduler.Limiter]: one transaction, rolled
// back when a permit is refused.
func (s *Store) AcquirePermits(ctx context.Context, req scheduler.PermitRequest) (scheduler.PermitGrant, error) {
	return s.d.AcquirePermits(ctx, req, func(fn func(c sqlstore.Conn) error) error {
		return s.inTx(ctx, func(tx pgx.Tx) error { return fn(pgConn{tx}) })
	})
}

// ExtendPermits implements [scheduler.Limiter].
func (s *Store) ExtendPermits(ctx context.Context, holder string, now, until time.Time) (int, error) {
	if err := s.live(); err != nil {
		return 0, err
	}
	return s.d.ExtendPermits(ctx, pgConn{s.pool}, holder, now, until)
}

// ReleasePermits implements [scheduler.Limiter].
func (s *Store) ReleasePermits(ctx context.Context, holder string) error {
	if err := s.live(); err != nil {
		return err
	}
	return s.d.ReleasePermits(ctx, pgConn{s.pool}, holder)
}
