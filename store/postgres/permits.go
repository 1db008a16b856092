package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

var _ scheduler.Limiter = (*Store)(nil)

// AcquirePermits implements [scheduler.Limiter]: one transaction, rolled
// back when a permit is refused.
func (s *Store) AcquirePermits(ctx context.Context, req scheduler.PermitRequest) (scheduler.PermitGrant, error) {
	var g scheduler.PermitGrant
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		g, err = s.d.AcquirePermits(ctx, pgConn{tx}, req)
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
	if err := s.live(); err != nil {
		return err
	}
	return s.d.ExtendPermits(ctx, pgConn{s.pool}, holder, until)
}

// ReleasePermits implements [scheduler.Limiter].
func (s *Store) ReleasePermits(ctx context.Context, holder string) error {
	if err := s.live(); err != nil {
		return err
	}
	return s.d.ReleasePermits(ctx, pgConn{s.pool}, holder)
}
