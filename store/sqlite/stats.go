package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

// CountJobs implements [scheduler.StatsReader] by reading the counts that
// the schema's triggers keep by collection and state as jobs are
// created, deleted and change state (migration 6): its cost grows with
// the number of collections, not of jobs.
func (s *Store) CountJobs(ctx context.Context) ([]scheduler.JobCount, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, "SELECT collection, state, n FROM job_counts WHERE n > 0 ORDER BY collection, state")
	if err != nil {
		return nil, fmt.Errorf("store/sqlite: count jobs: %w", err)
	}
	defer rows.Close()
	var out []scheduler.JobCount
	for rows.Next() {
		var c scheduler.JobCount
		if err := rows.Scan(&c.Collection, &c.State, &c.Jobs); err != nil {
			return nil, fmt.Errorf("store/sqlite: count jobs: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store/sqlite: count jobs: %w", err)
	}
	return out, nil
}

// CountDue implements [scheduler.StatsReader] with a count over the
// index ClaimDue reads.
func (s *Store) CountDue(ctx context.Context, now time.Time) (int, error) {
	if err := s.readable(); err != nil {
		return 0, err
	}
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM jobs WHERE ready_at <= ?", sqlstore.NanosInt(now)).Scan(&n); err != nil {
		return 0, fmt.Errorf("store/sqlite: count due jobs: %w", err)
	}
	return n, nil
}

// CountHistory implements [scheduler.StatsReader] with one GROUP BY over
// the range of the index on history end times.
func (s *Store) CountHistory(ctx context.Context, from, to time.Time, step time.Duration, collections []string) ([]scheduler.HistoryCount, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	if err := sqlstore.CheckHistoryRange(from, to, step); err != nil {
		return nil, fmt.Errorf("store/sqlite: %w", err)
	}
	if collections != nil && len(collections) == 0 {
		return nil, nil
	}
	where, args := historyWhere(scheduler.HistoryFilter{Collections: collections})
	args = append([]any{sqlstore.NanosInt(from), int64(step), sqlstore.NanosInt(to)}, args...)
	rows, err := s.db.QueryContext(ctx, `SELECT (end_time - ?1) / ?2, json_extract(entry, '$.actionName'), status, count(*),
		coalesce(sum(json_extract(entry, '$.retryCount') > 0), 0), coalesce(sum(`+faultedExpr+`), 0) FROM history
		WHERE end_time >= ?1 AND end_time < ?3`+where+` GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`, args...)
	if err != nil {
		return nil, fmt.Errorf("store/sqlite: count history: %w", err)
	}
	defer rows.Close()
	var out []scheduler.HistoryCount
	for rows.Next() {
		var bucket int64
		var c scheduler.HistoryCount
		if err := rows.Scan(&bucket, &c.ActionName, &c.Status, &c.Entries, &c.Retries, &c.Faulted); err != nil {
			return nil, fmt.Errorf("store/sqlite: count history: %w", err)
		}
		c.Start = sqlstore.BucketStart(from, step, bucket)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store/sqlite: count history: %w", err)
	}
	return out, nil
}

// faultedExpr is true for history entries that faulted their occurrence;
// the partial index history_faulted is on the same expression.
const faultedExpr = "json_extract(entry, '$.faulted') = 1"

// historyWhere returns the conditions, each starting with " AND ", and
// their arguments that keep the history entries f keeps (without its
// page). Numbered parameters (?NNN) are not used, so the arguments follow
// any that come before. Collections are given as one JSON array.
func historyWhere(f scheduler.HistoryFilter) (string, []any) {
	var b strings.Builder
	var args []any
	if f.Status != "" {
		b.WriteString(" AND status = ?")
		args = append(args, string(f.Status))
	}
	if f.Faulted {
		b.WriteString(" AND " + faultedExpr)
	}
	if f.NotFaulted {
		// The member is left out when false: NULL, not 0.
		b.WriteString(" AND json_extract(entry, '$.faulted') IS NOT 1")
	}
	if f.Collections != nil {
		list, _ := json.Marshal(f.Collections)
		b.WriteString(" AND collection IN (SELECT value FROM json_each(?))")
		args = append(args, string(list))
	}
	return b.String(), args
}

// RecentHistory implements [scheduler.StatsReader], reading the history
// table backwards by id, through the index on (status, id) or the partial
// index of faulted entries when filtered.
func (s *Store) RecentHistory(ctx context.Context, f scheduler.HistoryFilter) ([]scheduler.HistoryEntry, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	if f.Collections != nil && len(f.Collections) == 0 {
		return nil, nil
	}
	top, skip := limitOffset(f.Top, f.Skip)
	where, args := historyWhere(f)
	rows, err := s.db.QueryContext(ctx, "SELECT "+historySelect+" FROM history WHERE true"+where+" ORDER BY id DESC LIMIT ? OFFSET ?", append(args, top, skip)...)
	if err != nil {
		return nil, fmt.Errorf("store/sqlite: recent history: %w", err)
	}
	defer rows.Close()
	var out []scheduler.HistoryEntry
	for rows.Next() {
		h, err := scanHistory(rows)
		if err != nil {
			return nil, fmt.Errorf("store/sqlite: recent history: %w", err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store/sqlite: recent history: %w", err)
	}
	return out, nil
}
