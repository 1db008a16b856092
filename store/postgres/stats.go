package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

// foldSQL is the start of a statement that folds the changes of the job
// counts that have committed into the counts (the store's creates insert
// their changes in their own statements, migration 14; the triggers of
// migration 11 insert those of deletes and changes of state), when it
// takes the advisory lock $1 (one fold at a time per schema; when another
// runs, it folds nothing and leaves the changes to that one or the next).
// The changes' inserts never wait for a fold. Whatever the fold does, the
// statement's own reads see the tables as they were before it, whose sum
// of counts and changes is the same.
const foldSQL = `WITH l AS MATERIALIZED (SELECT pg_try_advisory_xact_lock(hashtext($1)) AS mine),
	d AS (DELETE FROM {s}.job_count_deltas WHERE (SELECT mine FROM l) RETURNING collection, state, n),
	f AS (INSERT INTO {s}.job_counts AS c (collection, state, n) SELECT collection, state, sum(n) FROM d GROUP BY 1, 2 ORDER BY 1, 2
		ON CONFLICT (collection, state) DO UPDATE SET n = c.n + EXCLUDED.n)
	`

// countSQL is the number of jobs of collection $1 (see
// sqlstore.Dialect.Count): its counts folded so far plus the changes
// since, which the fold moves from one table to the other in one
// transaction, so that a snapshot sees each change in one of them.
const countSQL = `SELECT CAST(COALESCE(sum(n), 0) AS BIGINT) FROM (
		SELECT n FROM {s}.job_counts WHERE collection = $1 UNION ALL SELECT n FROM {s}.job_count_deltas WHERE collection = $1
	) x`

// CountJobs implements [scheduler.StatsReader] by reading the counts that
// the store keeps by collection and state as jobs are created (in the
// create's own statement), deleted and change state (the triggers of
// migration 11; see migration 14): the counts folded so far plus the
// changes since, in one statement that folds the changes too (see
// foldSQL). Its cost grows with the number of collections and with the
// writes since the last fold, not with the number of jobs; a fold of
// many changes, or the fold after folds of a few hundred, vacuums them
// away (see vacuumFolded), so that the counts after do not scan them.
func (s *Store) CountJobs(ctx context.Context) ([]scheduler.JobCount, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	// Every group, those whose count is 0 too: what the fold deleted is
	// in them (the statement reads the changes as they were before it),
	// so a fold that left every count at 0 still says how many it folded.
	rows, err := s.pool.Query(ctx, s.sql(foldSQL+`SELECT collection, state, sum(n)::bigint, (SELECT count(*) FROM d) FROM (
			SELECT collection, state, n FROM {s}.job_counts UNION ALL SELECT collection, state, n FROM {s}.job_count_deltas
		) x GROUP BY 1, 2 ORDER BY 1, 2`), s.foldLock())
	if err != nil {
		return nil, fmt.Errorf("store/postgres: count jobs: %w", err)
	}
	var folded int64
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scheduler.JobCount, error) {
		var c scheduler.JobCount
		err := r.Scan(&c.Collection, &c.State, &c.Jobs, &folded)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("store/postgres: count jobs: %w", err)
	}
	s.vacuumFolded(folded)
	return slices.DeleteFunc(out, func(c scheduler.JobCount) bool { return c.Jobs <= 0 }), nil
}

// vacuumAfter is how many changes of the job counts a fold deletes before
// it vacuums job_count_deltas at once. The deleted changes stay in the
// table as dead rows until a vacuum, and every fold and count scans them:
// 20,000 of them (the outcomes of 10,000 one-time jobs) made a count take
// 2–9 ms instead of 0.3–0.5, until autovacuum came (within
// autovacuum_naptime, a minute by default, later when its workers are
// busy with the jobs table after a bulk put). The vacuum of that many
// takes 10–40 ms, once.
const vacuumAfter = 10_000

// vacuumSoon is how many changes the store's earlier folds deleted, since
// its last vacuum began, that make the next fold vacuum job_count_deltas:
// about three pages of dead changes, at about 160 a page (the 1,000
// calls of a bulk put of a million jobs leave 1,000 changes, six pages,
// which a count read until autovacuum came). The next fold, not the one
// that deleted them: a vacuum a few milliseconds after a fold finds its
// deletes still visible to the transactions begun before it, under any
// steady load, and removes none of them; by the next fold those have
// ended. These vacuums come far more often than those of vacuumAfter
// changes, and each that can shorten the table may hold one connection
// of the pool for up to 5 s while another session holds a lock on it
// (see vacuumFolded). That is acceptable: one connection, one vacuum at
// a time per store, in the background; the vacuum asks for its lock
// without queueing for it (it tries again every 50 ms), so no create or
// count waits behind it; and a session holds a lock on the table that
// long only in a host's transaction left open after a put.
const vacuumSoon = 500

// vacuumRetry is how long after a vacuum of job_count_deltas that is
// still owed (it failed, or left vacuumAfter dead changes or more) the
// next fold tries again; each try that leaves it owed doubles the wait,
// up to vacuumRetryMax.
const (
	vacuumRetry    = 2 * time.Second
	vacuumRetryMax = 10 * time.Minute
)

// vacuumFolded has job_count_deltas vacuumed after a fold that deleted
// folded changes: when the fold deleted at least vacuumAfter, when the
// store's earlier folds deleted at least vacuumSoon since its last vacuum
// began (the vacuum is for their changes, which no transaction sees any
// more unless one has run since before them), or when an earlier vacuum
// is still owed, once its retry is due. A vacuum is owed until one leaves
// fewer than vacuumAfter dead changes in the table, as its statistics say
// right after it, and fewer than vacuumSoon dead beside those of the
// fold that asked for it: one that removes nothing because transactions older
// than the folds are still open (or a replication slot or standby holds
// the rows), one that another's vacuum lock made it skip, and one that
// failed are tried again vacuumRetry later, then twice as long after each
// try that leaves it owed, up to vacuumRetryMax, so that a cause that
// lasts does not make every fold (every metrics scrape) vacuum. While one
// is owed, a fold vacuums only when the retry is due. A store whose role
// may not vacuum the table (see mayVacuum; VACUUM would only warn) never
// tries: the dead changes are autovacuum's. The counts are exact without
// the vacuum, so its failure is no failure of the fold's caller.
//
// The vacuum runs in the background, one at a time per store, and the
// fold's caller does not wait for it: a vacuum that can shorten the table
// (the changes at its end all deleted) waits up to 5 s for a moment when
// no other session holds a lock on it (a host's transaction after a
// PutJobTx, an idle session that read it), and then leaves it its length.
// Close waits for it, and cancels it.
func (s *Store) vacuumFolded(folded int64) {
	earlier := s.unvacuumed.Add(folded) - folded
	if retryAt := s.vacuumOwed.Load(); retryAt != 0 {
		if time.Now().UnixNano() < retryAt {
			return
		}
	} else if folded < vacuumAfter && earlier < vacuumSoon {
		return
	}
	if !s.vacuuming.CompareAndSwap(false, true) {
		return // one runs: the next fold asks again for what it leaves
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.vacuuming.Store(false)
		return
	}
	s.vacuums.Add(1)
	s.mu.Unlock()
	s.unvacuumed.Add(-earlier) // this fold's are the next one's, as the vacuum may find them still seen
	go func() {
		defer s.vacuums.Done()
		defer s.vacuuming.Store(false)
		s.vacuum(s.closing, earlier, folded)
	}()
}

// vacuum vacuums job_count_deltas for the changes that earlier folds and
// the fold that asks for it deleted, and notes whether a vacuum is still
// owed (see vacuumFolded): also when it left vacuumSoon or more of the
// earlier folds' changes dead beside the fold's own (a transaction older
// than them is open), so that they are not forgotten; those count again
// towards the next vacuum then.
func (s *Store) vacuum(ctx context.Context, earlier, folded int64) {
	if !s.mayVacuum(ctx) {
		return
	}
	var dead int64
	_, err := s.pool.Exec(ctx, s.sql("VACUUM (SKIP_LOCKED) {s}.job_count_deltas"))
	if err == nil {
		err = s.pool.QueryRow(ctx, "SELECT n_dead_tup FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'job_count_deltas'", s.schema).Scan(&dead)
	}
	// The dead changes beyond the fold's own are the earlier folds' that
	// it could not remove yet (or others', which count alike).
	kept := min(earlier, dead-folded)
	if kept >= vacuumSoon {
		s.unvacuumed.Add(kept)
	}
	if err != nil || dead >= vacuumAfter || kept >= vacuumSoon {
		wait := min(max(2*time.Duration(s.vacuumWait.Load()), vacuumRetry), vacuumRetryMax)
		s.vacuumWait.Store(int64(wait))
		s.vacuumOwed.Store(time.Now().Add(wait).UnixNano())
		return
	}
	s.vacuumWait.Store(0)
	s.vacuumOwed.Store(0)
}

// mayVacuumSQL reports whether the current role may vacuum the table $1:
// its owner or a member of the owner's role, a superuser, before
// PostgreSQL 17 the database's owner, from 17 on a role with the
// table's MAINTAIN privilege or pg_maintain's (the parts for one version
// are not evaluated on the other).
const mayVacuumSQL = `SELECT pg_has_role(c.relowner, 'USAGE') OR r.rolsuper
	OR (current_setting('server_version_num')::int < 170000 AND pg_has_role(d.datdba, 'USAGE'))
	OR (current_setting('server_version_num')::int >= 170000 AND (has_table_privilege(c.oid, 'MAINTAIN') OR pg_has_role('pg_maintain', 'USAGE')))
	FROM pg_class c, pg_roles r, pg_database d
	WHERE c.oid = $1::regclass AND r.rolname = current_user AND d.datname = current_database()`

// mayVacuum reports whether the store's role may vacuum job_count_deltas,
// asking the server once; when the question fails, it reports true and
// asks again next time.
func (s *Store) mayVacuum(ctx context.Context) bool {
	switch s.vacuumRole.Load() {
	case 1:
		return true
	case -1:
		return false
	}
	var may bool
	if err := s.pool.QueryRow(ctx, mayVacuumSQL, pgx.Identifier{s.schema, "job_count_deltas"}.Sanitize()).Scan(&may); err != nil {
		return true
	}
	if may {
		s.vacuumRole.Store(1)
	} else {
		s.vacuumRole.Store(-1)
	}
	return may
}

// Recount counts the jobs again, by collection and state, from the jobs
// table, and puts those counts in place of the ones the store keeps (see
// CountJobs): a repair, for counts that went wrong because jobs were
// inserted or deleted without their change of the counts (SQL of one's
// own, or processes of a build older than schema 14 or 15 that kept
// running while a newer one upgraded the schema: their creates, or the
// state changes of their records, counted none). Until it runs, a count
// above the jobs stored can refuse a create into the collection whose
// places near the next one are taken although others are free (see
// sqlstore.Dialect.Count). It runs in one transaction that holds table jobs in SHARE mode, so that no
// job is written meanwhile: creates, claims and records wait for it, for
// about as long as a count(*) of the jobs takes (a second or two for
// millions). Folds skip while it runs.
func (s *Store) Recount(ctx context.Context) error {
	if err := s.live(); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", s.foldLock()); err != nil {
			return err
		}
		for _, q := range []string{
			"LOCK TABLE {s}.jobs IN SHARE MODE", // waits for the transactions that write jobs, and their changes
			"DELETE FROM {s}.job_count_deltas",
			"DELETE FROM {s}.job_counts",
			"INSERT INTO {s}.job_counts (collection, state, n) SELECT collection, state, count(*) FROM {s}.jobs GROUP BY 1, 2",
		} {
			if _, err := tx.Exec(ctx, s.sql(q)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store/postgres: recount jobs: %w", err)
	}
	return nil
}

// foldLock is the name of the advisory lock of the schema's folds.
func (s *Store) foldLock() string { return "jobclock counts " + s.schema }

// foldCounts folds the changes of the job counts (see foldSQL), then
// drops the counts that are 0 (those of emptied collections and states;
// CountJobs leaves them, as it reads them in the same statement), and
// vacuums the changes it deleted when they were many (see vacuumFolded:
// a vacuum that fails does not fail foldCounts).
func (s *Store) foldCounts(ctx context.Context) error {
	var folded int64
	if err := s.pool.QueryRow(ctx, s.sql(foldSQL+"SELECT count(*) FROM d"), s.foldLock()).Scan(&folded); err != nil {
		return err
	}
	if _, err := s.pool.Exec(ctx, s.sql("DELETE FROM {s}.job_counts WHERE n = 0")); err != nil {
		return err
	}
	s.vacuumFolded(folded)
	return nil
}

// CountDue implements [scheduler.StatsReader] with a count over the
// index ClaimDue reads, checking each due job's lease.
func (s *Store) CountDue(ctx context.Context, now time.Time) (int, error) {
	if err := s.live(); err != nil {
		return 0, err
	}
	var n int
	if err := s.pool.QueryRow(ctx, s.sql("SELECT count(*) FROM {s}.jobs WHERE coll_enabled AND due_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)"), sqlstore.NanosInt(now)).Scan(&n); err != nil {
		return 0, fmt.Errorf("store/postgres: count due jobs: %w", err)
	}
	return n, nil
}

// CountHistory implements [scheduler.StatsReader] with one GROUP BY over
// the range of the index on history end times. It reads the action name,
// retry count and fault from columns: the json operators refuse documents
// that hold \u0000, which a message may.
func (s *Store) CountHistory(ctx context.Context, from, to time.Time, step time.Duration, collections []string) ([]scheduler.HistoryCount, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	if err := sqlstore.CheckHistoryRange(from, to, step); err != nil {
		return nil, fmt.Errorf("store/postgres: %w", err)
	}
	if collections != nil && len(collections) == 0 {
		return nil, nil
	}
	args := []any{sqlstore.NanosInt(from), int64(step), sqlstore.NanosInt(to)}
	where, args := historyWhere(scheduler.HistoryFilter{Collections: collections}, args)
	rows, err := s.pool.Query(ctx, s.sql(`SELECT (end_time - $1) / $2, action_name COLLATE "C", status COLLATE "C", count(*),
		count(*) FILTER (WHERE retry_count > 0), count(*) FILTER (WHERE faulted)
		FROM {s}.history WHERE end_time >= $1 AND end_time < $3`+where+` GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`), args...)
	if err != nil {
		return nil, fmt.Errorf("store/postgres: count history: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scheduler.HistoryCount, error) {
		var bucket int64
		var c scheduler.HistoryCount
		err := r.Scan(&bucket, &c.ActionName, &c.Status, &c.Entries, &c.Retries, &c.Faulted)
		c.Start = sqlstore.BucketStart(from, step, bucket)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("store/postgres: count history: %w", err)
	}
	return out, nil
}

// historyWhere returns the conditions, each starting with " AND ", that
// keep the history entries f keeps (without its page), numbering their
// parameters after args, and args with their values appended.
func historyWhere(f scheduler.HistoryFilter, args []any) (string, []any) {
	var b strings.Builder
	if f.Status != "" {
		args = append(args, string(f.Status))
		fmt.Fprintf(&b, " AND status = $%d", len(args))
		if f.Status != scheduler.StatusCompleted {
			// The condition of the partial index history_status.
			b.WriteString(" AND status <> 'Completed'")
		}
	}
	if f.Faulted {
		b.WriteString(" AND faulted")
	}
	if f.NotFaulted {
		b.WriteString(" AND NOT faulted")
	}
	if f.Collections != nil {
		args = append(args, f.Collections)
		fmt.Fprintf(&b, " AND collection = ANY($%d::text[])", len(args))
	}
	return b.String(), args
}

// RecentHistory implements [scheduler.StatsReader], reading the history
// table backwards by id: through the primary key, the partial index on
// (status, id) of the entries not Completed, or the partial index of
// faulted entries, by filter.
func (s *Store) RecentHistory(ctx context.Context, f scheduler.HistoryFilter) ([]scheduler.HistoryEntry, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	if f.Collections != nil && len(f.Collections) == 0 {
		return nil, nil
	}
	where, args := historyWhere(f, nil)
	args = append(args, limit(f.Top), max(f.Skip, 0))
	rows, err := s.pool.Query(ctx, s.sql(fmt.Sprintf("SELECT collection, job, "+historyRowColumns+" FROM {s}.history WHERE true%s ORDER BY id DESC LIMIT $%d OFFSET $%d",
		where, len(args)-1, len(args))), args...)
	if err != nil {
		return nil, fmt.Errorf("store/postgres: recent history: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (scheduler.HistoryEntry, error) {
		var r sqlstore.HistoryRow
		h, _, err := scanHistory(row, &r, &r.Collection, &r.Job)
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("store/postgres: recent history: %w", err)
	}
	return out, nil
}
