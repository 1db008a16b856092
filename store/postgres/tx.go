package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

var _ scheduler.Transactional = (*Store)(nil)

// InTx implements [scheduler.Transactional]: the store's job and
// collection writes inside tx, a pgx.Tx that the host began on the store's
// database (from its own pool or connection), for
// [scheduler.Scheduler.PutJobTx], PutCollectionTx and their kin. What they
// write is written exactly when the host commits, and not at all when it
// rolls back. A PutCollectionTx that replaces a collection locks its row
// until tx ends: other writes of the collection, and creates of jobs in
// it, wait for tx.
//
// A job put through the view sends the store's wake-up notification
// inside tx: PostgreSQL delivers it when tx commits (and never when it
// rolls back), so every scheduler listening on the schema looks for due
// work right after the commit. A create takes a free place of its
// collection (each job holds one of the numbers 0 to the collection's
// maxJobCount less one, and a unique index lets no two hold the same), so
// the collection's job count is exact at commit without a count that
// every create updates: creates in other transactions go ahead, one that
// picked the same place waits for tx and then looks for another, and a
// change of the collection (PutCollection) or a bulk put into it waits
// for tx (a create share-locks the collection's row). At REPEATABLE READ
// or SERIALIZABLE, a create in tx fails with a serialization failure
// (SQLSTATE 40001) when the place it found free was taken by a create
// that committed after tx took its snapshot: retry tx, as PostgreSQL asks
// of every transaction at those levels. An error from the database itself
// (a lost connection, a serialization failure) leaves tx
// aborted, as any statement's would; validation and quota errors do not
// touch it.
func (s *Store) InTx(ctx context.Context, tx any) (scheduler.TxStore, error) {
	t, ok := tx.(pgx.Tx)
	if !ok {
		return nil, fmt.Errorf("store/postgres: the host's transaction must be a pgx.Tx, not a %T", tx)
	}
	if err := s.live(); err != nil {
		return nil, err
	}
	return &sqlstore.TxView{D: s.d, C: pgConn{t}}, nil
}
