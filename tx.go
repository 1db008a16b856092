package scheduler

import (
	"context"
	"errors"
	"fmt"
)

// txStore returns the view of the Scheduler's store inside tx.
func (s *Scheduler) txStore(ctx context.Context, tx any) (TxStore, error) {
	t, ok := s.store.(Transactional)
	if !ok {
		return nil, fmt.Errorf("scheduler: the store (%T) cannot write inside a transaction of the host's; store/sqlite and store/postgres can", s.store)
	}
	if tx == nil {
		return nil, fmt.Errorf("scheduler: the host's transaction is nil")
	}
	return t.InTx(ctx, tx)
}

// collectionTxStore returns the view of the Scheduler's store inside tx
// that writes collections (see [CollectionTxStore]).
func (s *Scheduler) collectionTxStore(ctx context.Context, tx any) (CollectionTxStore, error) {
	st, err := s.txStore(ctx, tx)
	if err != nil {
		return nil, err
	}
	cst, ok := st.(CollectionTxStore)
	if !ok {
		return nil, fmt.Errorf("scheduler: the store's view of a transaction (%T) cannot write collections (it is not a CollectionTxStore): %w", st, errors.ErrUnsupported)
	}
	return cst, nil
}

// afterTx tells the loop of a write of job collection/name in a host's
// transaction (see wrote) when the store has no Notifier of its own: the
// loop's next store call waits for the transaction to end (SQLite lets one
// connection write at a time), and so finds the job as soon as it is
// committed. A Notifier store wakes every Scheduler itself at the commit.
func (s *Scheduler) afterTx(collection, name string) {
	if _, ok := s.store.(Notifier); !ok {
		s.wrote(collection, name)
	}
}

// PutJobTx is PutJob inside tx, a transaction the host began on the
// store's database: a pgx.Tx for store/postgres, a *sql.Tx for
// store/sqlite (see [Transactional]). The job exists, and counts against
// the collection's quota, exactly when the host commits tx; a rollback
// leaves no trace. Validation errors (ErrInvalid) and quota errors
// (ErrQuotaExceeded) are returned here, before the host commits, and leave
// tx usable. The job count is exact at commit: a create takes one of the
// collection's places below its maxJobCount, which no other job can hold
// (see [Transactional]), so creates in other transactions (or by PutJob)
// need not wait for tx, except one that takes the same place. The
// Schedulers look for due work when tx commits. The returned record is
// what tx holds until then, without the health that PutJob's has (health
// is read from the store's committed state: GetJob it after the commit).
func (s *Scheduler) PutJobTx(ctx context.Context, tx any, collection, name string, def *Job, opts *PutJobOptions) (*JobRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	st, err := s.txStore(ctx, tx)
	if err != nil {
		return nil, err
	}
	r, err := s.putJob(ctx, st, collection, name, def, opts)
	if err != nil {
		return nil, err
	}
	s.afterTx(collection, name)
	return r, nil
}

// PutCollectionTx is PutCollection inside tx, a transaction the host
// began on the store's database (see [Scheduler.PutJobTx]): the
// collection is created or replaced exactly when the host commits tx, and
// a rollback leaves no trace, so that a collection and its jobs
// (PutJobTx, PutCalendarTx) can be written all at once or not at all.
// Validation errors (ErrInvalid), quota errors (ErrQuotaExceeded: more
// jobs than the new maxJobCount) and ErrPreconditionFailed are returned
// here, before the host commits, and leave tx usable. A replace holds the
// collection's row until tx ends: other writes of the collection, and
// creates of jobs in it, wait for tx; one that enables, disables or
// suspends the collection also holds the rows of its jobs, so that their
// claims, lease extensions and outcome records wait for tx too (on
// PostgreSQL; SQLite's transaction holds the whole database): keep such a
// transaction short. A store whose view of tx is not a
// [CollectionTxStore] refuses with an error matching
// [errors.ErrUnsupported]. A replace with a stricter
// maxRecurrence than the stored one is refused with an error matching
// [errors.ErrUnsupported], writing nothing: PutCollection checks the
// collection's jobs against it in steps that other writers must see (see
// the package documentation, "Quotas"), which a transaction hides until
// it commits. From the commit, the Schedulers follow the new definition
// as they follow one that another instance wrote: its run policy, limits
// and calendars within 5 seconds. The returned record is what tx holds
// until then.
func (s *Scheduler) PutCollectionTx(ctx context.Context, tx any, name string, def *JobCollection, opts *PutCollectionOptions) (*CollectionRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	st, err := s.collectionTxStore(ctx, tx)
	if err != nil {
		return nil, err
	}
	return s.putCollection(ctx, collectionTarget{st: st, tx: true}, name, def, opts)
}

// PutCalendarTx is PutCalendar inside tx (see [Scheduler.PutJobTx]): the
// calendar is created, or written again as it is, exactly when the host
// commits tx, and a rollback leaves no trace. A calendar that replaces a
// different one is refused with an error matching [errors.ErrUnsupported],
// writing nothing: PutCalendar checks the jobs that name it against it in
// steps that other writers must see, which a transaction hides until it
// commits. The calendar is written into its collection's record, which
// tx then holds until it ends (see [Scheduler.PutCollectionTx]).
func (s *Scheduler) PutCalendarTx(ctx context.Context, tx any, collection, name string, def *Calendar, opts *PutCalendarOptions) (*CalendarRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	st, err := s.collectionTxStore(ctx, tx)
	if err != nil {
		return nil, err
	}
	return s.putCalendar(ctx, collectionTarget{st: st, tx: true}, collection, name, def, opts)
}

// PatchJobTx is PatchJob inside tx; see [Scheduler.PutJobTx].
func (s *Scheduler) PatchJobTx(ctx context.Context, tx any, collection, name string, patch []byte, opts *PatchJobOptions) (*JobRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	st, err := s.txStore(ctx, tx)
	if err != nil {
		return nil, err
	}
	r, err := s.patchJob(ctx, st, collection, name, patch, opts)
	if err != nil {
		return nil, err
	}
	s.afterTx(collection, name)
	return r, nil
}

// DeleteJobTx is DeleteJob inside tx: the job and its history are gone
// when the host commits tx, and stay when it rolls back; see
// [Scheduler.PutJobTx]. opts.IfMatch is checked in tx's delete, as
// DeleteJob's is in its own. opts may be nil.
func (s *Scheduler) DeleteJobTx(ctx context.Context, tx any, collection, name string, opts *DeleteJobOptions) error {
	if err := s.live(); err != nil {
		return err
	}
	if err := checkJobKey(collection, name); err != nil {
		return err
	}
	st, err := s.txStore(ctx, tx)
	if err != nil {
		return err
	}
	if err := deleteJob(ctx, st, collection, name, opts); err != nil {
		return err
	}
	s.afterTx(collection, name)
	return nil
}
