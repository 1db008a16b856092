package sqlstore

import (
	"context"
	"errors"
	"fmt"

	scheduler "github.com/jobclock/scheduler"
)

// PutCollection implements [scheduler.Store.PutCollection] over c, a
// transaction: it creates col (Version 0) or replaces it (Version equal
// to the stored one), failing with ErrConflict when the collection exists
// for a create or its version differs for a replace, with ErrNotFound for
// a replace of a collection that does not exist, and with
// ErrQuotaExceeded when the collection holds more jobs than col's
// MaxJobCount. A replace locks the collection's row ({lock}) until c ends,
// so that no create of a job runs meanwhile. With wake, a replace that
// enables the collection wakes the schedulers when c commits (see Wake).
// It reports whether the write enabled the collection.
func (d *Dialect) PutCollection(ctx context.Context, c Conn, col *scheduler.CollectionRecord, wake bool) (enabled bool, err error) {
	row, err := EncodeCollection(col)
	if err != nil {
		return false, fmt.Errorf("%s: put job collection: %w", d.Name, err)
	}
	if col.Version == 0 {
		n, err := c.Exec(ctx, d.sql("INSERT INTO {s}.collections ("+CollectionCols+") VALUES ($1, $2, $3, $4, 1, $5, $6) ON CONFLICT (name) DO NOTHING"),
			row.Name, row.Definition, row.Enabled, row.ETag, row.CreatedArg(), row.UpdatedArg())
		if err != nil {
			return false, d.Wrap("put job collection", col.Name, err)
		}
		if n == 0 {
			return false, fmt.Errorf("%s: create job collection %q: it exists: %w", d.Name, col.Name, scheduler.ErrConflict)
		}
		return false, nil
	}
	var version int64
	var was bool
	err = c.QueryRow(ctx, d.sql("SELECT version, enabled FROM {s}.collections WHERE name = $1{lock}"), col.Name).Scan(&version, &was)
	if errors.Is(err, ErrNoRows) {
		return false, &scheduler.NotFoundError{Collection: col.Name}
	}
	if err != nil {
		return false, d.Wrap("put job collection", col.Name, err)
	}
	if col.Version != version {
		return false, fmt.Errorf("%s: put job collection %q: version %d, stored %d: %w", d.Name, col.Name, col.Version, version, scheduler.ErrConflict)
	}
	d.step(ctx, c, "count")
	// With the row locked no create of the collection runs meanwhile.
	var n int
	if err := c.QueryRow(ctx, d.sql("SELECT count(*) FROM {s}.jobs WHERE collection = $1"), col.Name).Scan(&n); err != nil {
		return false, d.Wrap("put job collection", col.Name, err)
	}
	if limit := col.Definition.MaxJobCount(); n > limit {
		return false, QuotaReplaceError(col.Name, limit, n)
	}
	if err := d.FitSlots(ctx, c, col.Name, col.Definition.MaxJobCount()); err != nil {
		return false, d.Wrap("put job collection", col.Name, err)
	}
	d.step(ctx, c, "update collection")
	if _, err := c.Exec(ctx, d.sql("UPDATE {s}.collections SET definition = $2, enabled = $3, etag = $4, version = $5, created_at = $6, updated_at = $7 WHERE name = $1"),
		col.Name, row.Definition, row.Enabled, row.ETag, col.Version+1, row.CreatedArg(), row.UpdatedArg()); err != nil {
		return false, d.Wrap("put job collection", col.Name, err)
	}
	if was != row.Enabled {
		d.step(ctx, c, "update jobs")
		if _, err := c.Exec(ctx, d.waking("UPDATE {s}.jobs SET coll_enabled = $2 WHERE collection = $1{wake}", wake && row.Enabled), col.Name, row.Enabled); err != nil {
			return false, d.Wrap("put job collection", col.Name, err)
		}
		enabled = row.Enabled
	}
	d.step(ctx, c, "commit")
	return enabled, nil
}

// DeleteCollection deletes the row of collection name over c, a
// transaction: the first step of [scheduler.Store.DeleteCollection],
// after which the caller deletes what the database does not delete with
// it (the collection's jobs and history, on PostgreSQL) in c. With an
// etag, the statement deletes the row only when it holds that ETag, and
// otherwise fails with ErrPreconditionFailed, deleting nothing; a
// collection that does not exist fails with ErrNotFound.
func (d *Dialect) DeleteCollection(ctx context.Context, c Conn, name, etag string) error {
	var n int64
	var err error
	if etag == "" {
		n, err = c.Exec(ctx, d.sql("DELETE FROM {s}.collections WHERE name = $1"), name)
	} else {
		n, err = c.Exec(ctx, d.sql("DELETE FROM {s}.collections WHERE name = $1 AND etag = $2"), name, etag)
	}
	if err != nil {
		return d.Wrap("delete job collection", name, err)
	}
	if n == 1 {
		return nil
	}
	if etag == "" {
		return &scheduler.NotFoundError{Collection: name}
	}
	var stored string
	err = c.QueryRow(ctx, d.sql("SELECT etag FROM {s}.collections WHERE name = $1"), name).Scan(&stored)
	if errors.Is(err, ErrNoRows) {
		return &scheduler.NotFoundError{Collection: name}
	}
	if err != nil {
		return d.Wrap("delete job collection", name, err)
	}
	return fmt.Errorf("%s: delete job collection %q: ETag %q, not %q: %w", d.Name, name, stored, etag, scheduler.ErrPreconditionFailed)
}
