package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

var _ scheduler.Transactional = (*Store)(nil)

// InTx implements [scheduler.Transactional]: the store's job and
// collection writes inside tx, a transaction that the host began on the
// *sql.DB that the Store was made over with [New], for
// [scheduler.Scheduler.PutJobTx], PutCollectionTx and their kin. What they
// write is written exactly when the host commits, and not at all when it
// rolls back.
//
// SQLite lets one connection write at a time, so InTx first takes the
// database's write lock for tx (waiting up to the connection's
// busy_timeout for the scheduler or another writer to finish); from then
// on the store's own writes (claims, outcomes) wait for tx to end, so keep
// the transaction short, well under the store's Options.BusyTimeout. A
// transaction that read before another connection wrote cannot take the
// lock: begin write transactions with BEGIN IMMEDIATE, which the
// modernc.org/sqlite driver does for every transaction when the DSN has
// _txlock=immediate, and set a busy_timeout there too. SQLite's busy
// handler looks for the lock now and then, so that while the Store writes
// without pause the host's BEGIN may find it taken each time and fail
// with SQLITE_BUSY after the busy_timeout although no transaction held
// the lock that long (the Store's own writes try again as long as other
// connections commit; see Options.BusyTimeout): begin the transaction
// again then, or give it a longer busy_timeout. Set temp_store to
// MEMORY (2) as well, as the Store does on its own connection: each put
// keeps the pages it changes in a statement journal until the statement
// ends, which SQLite keeps in memory up to 64 KiB and otherwise in a
// temporary file; once one statement of a transaction has gone past that
// (as one of the puts does after a few thousand in one transaction), every
// later statement of the transaction writes its journal to the file, a few
// system calls per put, and the puts after it cost 15–30 µs more each.
// SQLite reads the setting when the transaction begins to write, so the
// Store does not set it on the host's connection (it would take effect
// only at that connection's next transaction); it logs a warning
// (Options.Logger), once, when a transaction it is given runs without it:
//
//	db, err := sql.Open("sqlite", "app.db?_txlock=immediate&_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=temp_store(2)")
//
// After an error from a write in tx other than a validation or quota error
// (which leave the transaction as it was), roll tx back rather than go on
// with it: on some errors SQLite ends the whole transaction by itself (an
// interrupt, when the context of a put ends while it writes; a full disk;
// an I/O error) while tx still looks open to database/sql, so that later
// statements in tx would each commit on their own, and tx's Commit fail.
//
// The Scheduler that calls InTx is woken at once and looks for due work
// as soon as tx ends; other processes on the same file find the job at
// their next poll.
//
// The view of a transaction is made once: InTx given the transaction it
// was given last returns the same view, whose statements were prepared in
// it, so that each of many puts in one transaction neither takes the lock
// again, nor has SQLite parse its statements anew, nor runs a statement
// of its own. InTx fails with an error that matches sql.ErrTxDone for a
// transaction that had ended when the view was to be made (the statement
// that takes the lock finds it ended); a view used after its transaction
// ended, whether InTx returned it before or after the end, fails at its
// first statement with an error that matches sql.ErrTxDone too (the
// statements prepared in the transaction are closed, and the view then
// asks database/sql whether the transaction has ended). The Store drops
// its view once it sees the transaction ended, and on Close.
func (s *Store) InTx(ctx context.Context, tx any) (scheduler.TxStore, error) {
	t, ok := tx.(*sql.Tx)
	if !ok {
		return nil, fmt.Errorf("store/sqlite: the host's transaction must be a *sql.Tx on the store's database, not a %T", tx)
	}
	if err := s.readable(); err != nil {
		return nil, err
	}
	s.host.mu.Lock()
	last, view := s.host.conn, s.host.view
	s.host.mu.Unlock()
	if last != nil && last.tx == t {
		return view, nil // an ended t fails at the view's first statement (see txConn.ended)
	}
	// A statement that writes takes the write lock (and fails on a
	// database without the store's tables), whether or not it changes a
	// row.
	if _, err := t.ExecContext(ctx, "UPDATE schema_version SET version = version WHERE 0"); errors.Is(err, sql.ErrTxDone) {
		return nil, fmt.Errorf("store/sqlite: the host's transaction: %w", err)
	} else if err != nil {
		return nil, fmt.Errorf("store/sqlite: take the write lock in the host's transaction "+
			"(is it on the store's database, begun with BEGIN IMMEDIATE, for example with _txlock=immediate in the DSN?): %w", err)
	}
	s.checkTempStore(ctx, t)
	c := &txConn{tx: t, host: &s.host, stmts: make(map[string]*sql.Stmt)}
	view = &sqlstore.TxView{D: s.d, C: c}
	s.host.mu.Lock()
	s.host.conn, s.host.view = c, view
	s.host.mu.Unlock()
	return view, nil
}

// checkTempStore logs a warning, once per Store, when the host's
// transaction t runs on a connection whose temp_store is not MEMORY (2,
// the only value that keeps temporary files in memory in the driver's
// build), so that a long transaction's statement journal goes to a
// temporary file (see InTx). It checks the first tempStoreChecks
// transactions InTx is given (one PRAGMA each, about 3 µs), as the
// connections of the host's pool need not agree, and none after those or
// after it warned: a host whose first transactions' connections keep
// temporary files in memory is taken to keep them so on all its
// connections. It does not set temp_store itself: SQLite
// reads the setting when a transaction begins to write, so that setting
// it here would mend only the connection's later transactions, and the
// setting is the host's, for all its work on the connection. A check that
// fails is skipped: the writes that follow report what went wrong.
func (s *Store) checkTempStore(ctx context.Context, t *sql.Tx) {
	if s.tempStoreWarned.Load() || s.tempStoreChecked.Add(1) > tempStoreChecks {
		return
	}
	var mode int
	if err := t.QueryRowContext(ctx, "PRAGMA temp_store").Scan(&mode); err != nil || mode == 2 {
		return
	}
	if s.tempStoreWarned.CompareAndSwap(false, true) {
		s.log.Warn("a host's transaction given to InTx keeps SQLite's statement journal in a temporary file once it outgrows 64 KiB "+
			"(temp_store is not MEMORY on its connection), so that each put after a few thousand in one transaction costs 15–30 µs more: "+
			"add _pragma=temp_store(2) to the DSN of the host's database", "temp_store", mode)
	}
}

// tempStoreChecks is how many of the host's transactions InTx checks for
// temp_store (see checkTempStore).
const tempStoreChecks = 16

// hostTx is the last live transaction of the host's that InTx was given,
// and its view; nil when there is none. Keeping the transaction keeps its
// address from being reused by another one, so it is dropped as soon as it
// is seen to have ended, and on Close.
type hostTx struct {
	mu   sync.Mutex
	conn *txConn
	view *sqlstore.TxView
}

// forget drops c, when it is the last transaction's, because its
// transaction has ended.
func (h *hostTx) forget(c *txConn) {
	h.mu.Lock()
	if h.conn == c {
		h.conn, h.view = nil, nil
	}
	h.mu.Unlock()
}

// txConn runs the statements of a view in the host's transaction tx, each
// prepared in tx the first time it runs (database/sql closes them when tx
// ends). It prepares in tx rather than on the pool, which may have no
// other connection free.
type txConn struct {
	tx    *sql.Tx
	host  *hostTx // the store's, which forgets c once tx has ended
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// stmt returns statement q prepared in c's transaction.
func (c *txConn) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.stmts[q]; ok {
		return st, nil
	}
	st, err := c.tx.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	c.stmts[q] = st
	return st, nil
}

// ended returns err, the error of a statement run in c's transaction, or
// sql.ErrTxDone when the transaction has ended (which closed the
// statements prepared in it, so that err says only that they are closed).
// When ctx has ended too, the error matches ctx's as well: database/sql
// rolls a transaction back when the context it was begun with ends, which
// is usually the context of the put.
func (c *txConn) ended(ctx context.Context, err error) error {
	// The check must not stop at ctx, which would hide whether the
	// transaction has ended. On an ended transaction it fails before it
	// reaches SQLite.
	var one int
	e := c.tx.QueryRowContext(context.WithoutCancel(ctx), "SELECT 1").Scan(&one)
	if !errors.Is(e, sql.ErrTxDone) {
		return err
	}
	c.host.forget(c)
	if ce := ctx.Err(); ce != nil {
		return fmt.Errorf("%w: %w", e, ce)
	}
	return e
}

func (c *txConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return 0, c.ended(ctx, err)
	}
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, c.ended(ctx, err)
	}
	return res.RowsAffected()
}

func (c *txConn) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	st, err := c.stmt(ctx, query)
	if err != nil {
		return errRow{c.ended(ctx, err)}
	}
	return txRow{c, ctx, st.QueryRowContext(ctx, args...)}
}

// txRow is a row of a txConn's query.
type txRow struct {
	c   *txConn
	ctx context.Context
	r   *sql.Row
}

func (r txRow) Scan(dest ...any) error {
	err := sqlRow{r.r}.Scan(dest...)
	if err != nil && !errors.Is(err, sqlstore.ErrNoRows) {
		err = r.c.ended(r.ctx, err)
	}
	return err
}
