package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

var (
	_ scheduler.BulkPutter = (*Store)(nil)
	_ scheduler.PutReader  = (*Store)(nil)
)

// GetJobs implements [scheduler.BulkPutter]: one query.
func (s *Store) GetJobs(ctx context.Context, collection string, names []string) ([]*scheduler.JobRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.sql("SELECT "+jobCols+" FROM {s}.jobs WHERE collection = $1 AND name = ANY($2)"), collection, names)
	if err != nil {
		return nil, wrap("get jobs of collection", collection, err)
	}
	var jr jobReader
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*scheduler.JobRecord, error) { return jr.read(r) })
	if err != nil {
		return nil, wrap("get jobs of collection", collection, err)
	}
	return sqlstore.InOrder(names, found), nil
}

// PutJobs implements [scheduler.BulkPutter]: one transaction, whose new
// jobs are copied in (COPY) with one round trip, each encoded as the rows
// before it are sent. The quota is decided before the first write, under
// the lock of the collection's row, so a batch refused for it writes
// nothing.
func (s *Store) PutJobs(ctx context.Context, collection string, jobs []*scheduler.JobRecord) error {
	if len(jobs) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		return s.d.PutJobs(ctx, copyConn{pgConn{tx}, tx, s.schema}, collection, jobs)
	})
	if err == nil {
		s.wake(collection, "")
	}
	return err
}

// copyConn is a transaction of the store's that inserts job rows with
// COPY ([sqlstore.JobInserter]).
type copyConn struct {
	pgConn
	tx     pgx.Tx
	schema string
}

// insertCols are the columns InsertJobs copies.
var insertCols = []string{"collection", "name", "definition", "state", "status", "schedule", "etag", "version",
	"created_at", "updated_at", "due_at", "lease_owner", "lease_until", "tags", "coll_enabled", "slot", "incarnation"}

// InsertJobs implements [sqlstore.JobInserter]. pgx builds the COPY's
// data in a goroutine of its own and sends it in chunks, so each job is
// encoded there while the server stores the rows of the chunks before it.
// A job that does not encode ends the COPY (pgx sends CopyFail, and the
// server answers with an error of its own, query_canceled); the encoding
// error is returned instead, its chain kept.
func (c copyConn) InsertJobs(ctx context.Context, d *sqlstore.Dialect, jobs []*scheduler.JobRecord, enabled bool, slots []int64) error {
	var encodeErr error // set by pgx's goroutine, which CopyFrom waits for
	_, err := c.tx.CopyFrom(ctx, pgx.Identifier{c.schema, "jobs"}, insertCols, pgx.CopyFromSlice(len(jobs), func(i int) ([]any, error) {
		r, err := d.EncodeRow(jobs[i])
		if err != nil {
			encodeErr = err
			return nil, err
		}
		jobs[i].Incarnation = sqlstore.NewIncarnation()
		return []any{r.Collection, r.Name, r.Definition, r.State, r.Status, r.Schedule, r.ETag, int64(1),
			r.CreatedArg(), r.UpdatedArg(), r.DueArg(), "", nil, r.TagsArg(), enabled, slots[i], jobs[i].Incarnation}, nil
	}))
	if encodeErr != nil {
		return encodeErr
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" { // unique_violation: a job exists (or, which the lock prevents, holds the place)
		return fmt.Errorf("store/postgres: create jobs: %s: %w", pe.Detail, scheduler.ErrConflict)
	}
	return err
}
