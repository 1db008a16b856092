package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

// CountJobs implements [scheduler.StatsReader] with one GROUP BY over the
// index on jobs (collection, state).
func (s *Store) CountJobs(ctx context.Context) ([]scheduler.JobCount, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.sql(`SELECT collection, state COLLATE "C", count(*) FROM {s}.jobs GROUP BY 1, 2 ORDER BY 1, 2`))
	if err != nil {
		return nil, fmt.Errorf("store/postgres: count jobs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scheduler.JobCount, error) {
		var c scheduler.JobCount
		err := r.Scan(&c.Collection, &c.State, &c.Jobs)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("store/postgres: count jobs: %w", err)
	}
	return out, nil
}

// CountDue implements [scheduler.StatsReader] with a count over the
// index ClaimDue reads.
func (s *Store) CountDue(ctx context.Context, now time.Time) (int, error) {
	if err := s.live(); err != nil {
		return 0, err
	}
	var n int
	if err := s.pool.QueryRow(ctx, s.sql("SELECT count(*) FROM {s}.jobs WHERE ready_at <= $1"), sqlstore.NanosInt(now)).Scan(&n); err != nil {
		return 0, fmt.Errorf("store/postgres: count due jobs: %w", err)
	}
	return n, nil
}

// CountHistory implements [scheduler.StatsReader] with one GROUP BY over
// the range of the index on history end times.
func (s *Store) CountHistory(ctx context.Context, from, to time.Time, step time.Duration) ([]scheduler.HistoryCount, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	if err := sqlstore.CheckHistoryRange(from, to, step); err != nil {
		return nil, fmt.Errorf("store/postgres: %w", err)
	}
	rows, err := s.pool.Query(ctx, s.sql(`SELECT (end_time - $1) / $2, (entry ->> 'actionName') COLLATE "C", status COLLATE "C", count(*)
		FROM {s}.history WHERE end_time >= $1 AND end_time < $3 GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`),
		sqlstore.NanosInt(from), int64(step), sqlstore.NanosInt(to))
	if err != nil {
		return nil, fmt.Errorf("store/postgres: count history: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scheduler.HistoryCount, error) {
		var bucket int64
		var c scheduler.HistoryCount
		err := r.Scan(&bucket, &c.ActionName, &c.Status, &c.Entries)
		c.Start = sqlstore.BucketStart(from, step, bucket)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("store/postgres: count history: %w", err)
	}
	return out, nil
}

// RecentHistory implements [scheduler.StatsReader], reading the history
// table backwards by id, through the index on (status, id) when filtered.
func (s *Store) RecentHistory(ctx context.Context, f scheduler.HistoryFilter) ([]scheduler.HistoryEntry, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	var rows pgx.Rows
	var err error
	if f.Status == "" {
		rows, err = s.pool.Query(ctx, s.sql("SELECT entry::text FROM {s}.history ORDER BY id DESC LIMIT $1 OFFSET $2"), limit(f.Top), max(f.Skip, 0))
	} else {
		rows, err = s.pool.Query(ctx, s.sql("SELECT entry::text FROM {s}.history WHERE status = $1 ORDER BY id DESC LIMIT $2 OFFSET $3"),
			string(f.Status), limit(f.Top), max(f.Skip, 0))
	}
	if err != nil {
		return nil, fmt.Errorf("store/postgres: recent history: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scheduler.HistoryEntry, error) {
		var e string
		if err := r.Scan(&e); err != nil {
			return scheduler.HistoryEntry{}, err
		}
		return sqlstore.DecodeHistory(e)
	})
	if err != nil {
		return nil, fmt.Errorf("store/postgres: recent history: %w", err)
	}
	return out, nil
}
