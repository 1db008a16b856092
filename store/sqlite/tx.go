package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

var _ scheduler.Transactional = (*Store)(nil)

// InTx implements [scheduler.Transactional]: the store's job methods
// inside tx, a transaction that the host began on the *sql.DB that the
// Store was made over with [New], for [scheduler.Scheduler.PutJobTx] and
// its kin. The job is written exactly when the host commits, and not at
// all when it rolls back.
//
// SQLite lets one connection write at a time, so InTx first takes the
// database's write lock for tx (waiting up to the connection's
// busy_timeout for the scheduler or another writer to finish); from then
// on the store's own writes (claims, outcomes) wait for tx to end, so keep
// the transaction short, well under the store's Options.BusyTimeout. A
// transaction that read before another connection wrote cannot take the
// lock: begin write transactions with BEGIN IMMEDIATE, which the
// modernc.org/sqlite driver does for every transaction when the DSN has
// _txlock=immediate, and set a busy_timeout there too. Set temp_store to
// MEMORY (2) as well, as the Store does on its own connection: each put
// keeps the pages it changes in a statement journal until the statement
// ends, which SQLite keeps in memory up to 64 KiB and otherwise in a
// temporary file; once one statement of a transaction has gone past that
// (as one of the puts does after a few thousand in one transaction), every
// later statement of the transaction writes its journal to the file, a few
// system calls per put, and the puts after it cost about a quarter more.
// SQLite reads the setting when the transaction begins to write:
//
//	db, err := sql.Open("sqlite", "app.db?_txlock=immediate&_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=temp_store(2)")
//
// The Scheduler that calls InTx is woken at once and looks for due work
// as soon as tx ends; other processes on the same file find the job at
// their next poll.
func (s *Store) InTx(ctx context.Context, tx any) (scheduler.TxStore, error) {
	t, ok := tx.(*sql.Tx)
	if !ok {
		return nil, fmt.Errorf("store/sqlite: the host's transaction must be a *sql.Tx on the store's database, not a %T", tx)
	}
	if err := s.readable(); err != nil {
		return nil, err
	}
	// A statement that writes takes the write lock (and fails on a
	// database without the store's tables), whether or not it changes a
	// row.
	if _, err := t.ExecContext(ctx, "UPDATE schema_version SET version = version WHERE 0"); err != nil {
		return nil, fmt.Errorf("store/sqlite: take the write lock in the host's transaction "+
			"(is it on the store's database, begun with BEGIN IMMEDIATE, for example with _txlock=immediate in the DSN?): %w", err)
	}
	return &sqlstore.TxView{D: s.d, C: sqlConn{t}}, nil
}
