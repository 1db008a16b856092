package postgres_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/postgres"
	"github.com/jobclock/scheduler/store/storetest"
)

// historyRows counts the rows of the history table, and those whose job
// is gone.
func historyRows(t *testing.T, schema string) (rows, orphans int) {
	t.Helper()
	q := pgx.Identifier{schema}.Sanitize()
	err := connect(t).QueryRow(ctx, "SELECT count(*), count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM "+q+".jobs j WHERE j.collection = h.collection AND j.name = h.job)) FROM "+q+".history h").Scan(&rows, &orphans)
	if err != nil {
		t.Fatal(err)
	}
	return rows, orphans
}

// runOnce puts job coll/name due at t0, claims it and records one entry,
// leaving it Completed at t0.
func runOnce(t *testing.T, s scheduler.Store, coll, name string) {
	t.Helper()
	j := &scheduler.JobRecord{Collection: coll, Name: name, Job: &scheduler.Job{}, State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}
	if err := s.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	got, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 1)
	if err != nil || len(got) != 1 {
		t.Fatalf("ClaimDue = %v, %v", got, err)
	}
	got[0].State, got[0].Schedule.DueAt, got[0].Updated = scheduler.JobCompleted, time.Time{}, t0
	h := scheduler.HistoryEntry{Collection: coll, Job: got[0].Name, ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, EndTime: t0.Add(time.Hour)}
	if err := s.Record(ctx, "me", got[0], []scheduler.HistoryEntry{h}); err != nil {
		t.Fatal(err)
	}
}

// TestDeletesRemoveHistory checks that DeleteJob, DeleteCollection and
// Prune of final jobs remove the history rows of the jobs they delete,
// which no foreign key cascades to.
func TestDeletesRemoveHistory(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	for _, c := range []string{"a", "b"} {
		if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: c}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range [][2]string{{"a", "1"}, {"a", "2"}, {"a", "3"}, {"b", "1"}} {
		runOnce(t, s, id[0], id[1])
	}
	if rows, orphans := historyRows(t, schema); rows != 4 || orphans != 0 {
		t.Fatalf("history: %d rows, %d of them orphans; want 4 and 0", rows, orphans)
	}
	if err := s.DeleteJob(ctx, "a", "1", ""); err != nil {
		t.Fatal(err)
	}
	if rows, orphans := historyRows(t, schema); rows != 3 || orphans != 0 {
		t.Errorf("after DeleteJob: %d rows, %d of them orphans; want 3 and 0", rows, orphans)
	}
	// a/2 is Completed since t0, a/3 too; Prune them both.
	if n, err := s.Prune(ctx, scheduler.PruneRequest{FinalJobsBefore: t0.Add(time.Second)}); err != nil || n != 3 {
		t.Errorf("Prune(final jobs) = %d, %v; want 3 jobs (a/2, a/3, b/1)", n, err)
	}
	if rows, orphans := historyRows(t, schema); rows != 0 || orphans != 0 {
		t.Errorf("after Prune: %d rows, %d of them orphans; want none", rows, orphans)
	}
	runOnce(t, s, "b", "2")
	if err := s.DeleteCollection(ctx, "b", ""); err != nil {
		t.Fatal(err)
	}
	if rows, orphans := historyRows(t, schema); rows != 0 || orphans != 0 {
		t.Errorf("after DeleteCollection: %d rows, %d of them orphans; want none", rows, orphans)
	}
	// A job made again under a deleted one's name starts without history.
	runOnce(t, s, "a", "1")
	if got, err := s.ListHistory(ctx, "a", "1", scheduler.HistoryFilter{}); err != nil || len(got) != 1 {
		t.Errorf("ListHistory of a job made again = %d entries, %v; want 1", len(got), err)
	}
}

// TestDeleteDuringRecord races DeleteJob against Records of the same jobs
// and checks that no history outlives its job.
func TestDeleteDuringRecord(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	const n = 40
	putDueJobs(t, s, n)
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), n)
	if err != nil || len(claimed) != n {
		t.Fatalf("ClaimDue = %d jobs, %v", len(claimed), err)
	}
	var wg sync.WaitGroup
	for _, j := range claimed {
		wg.Go(func() {
			h := scheduler.HistoryEntry{Collection: "c", Job: j.Name, ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, EndTime: t0}
			s.Record(ctx, "me", j, []scheduler.HistoryEntry{h}) // recorded, or the job is gone
		})
		wg.Go(func() {
			if err := s.DeleteJob(ctx, "c", j.Name, ""); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if rows, orphans := historyRows(t, schema); rows != 0 || orphans != 0 {
		t.Errorf("after deleting every job: %d history rows, %d of them orphans; want none", rows, orphans)
	}
}

// waitForLockWait waits until a session other than c's waits for a lock
// while running a statement of schema's that contains what.
func waitForLockWait(t *testing.T, c *pgx.Conn, schema, what string) {
	t.Helper()
	lit := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	// The activity view is read once per transaction unless its snapshot
	// is cleared.
	_, err := c.Exec(ctx, `DO $$ BEGIN
		WHILE NOT EXISTS (SELECT FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND wait_event_type = 'Lock'
			AND strpos(query, `+lit(schema)+`) > 0 AND strpos(query, `+lit(what)+`) > 0) LOOP
			PERFORM pg_sleep(0.01), pg_stat_clear_snapshot();
		END LOOP;
	END $$`)
	if err != nil {
		t.Fatalf("waiting for a statement %q of schema %s to wait for a lock: %v", what, schema, err)
	}
}

// TestRecordAfterDeleteAcrossStores: a Record or RecordBatch of one store
// (on connections of its own, as another process's) that reaches a job
// whose delete has not committed yet waits for the delete, then records
// nothing of that job (ErrNotFound) and writes no history for it, while
// the other job is recorded.
func TestRecordAfterDeleteAcrossStores(t *testing.T) {
	for _, tc := range []struct {
		name   string
		record func(s *postgres.Store, batch []scheduler.RecordRequest) []error
	}{
		{"Record", func(s *postgres.Store, batch []scheduler.RecordRequest) []error {
			var errs []error
			for _, r := range batch {
				errs = append(errs, s.Record(ctx, "other", r.Job, r.History))
			}
			return errs
		}},
		{"RecordBatch", func(s *postgres.Store, batch []scheduler.RecordRequest) []error {
			return s.RecordBatch(ctx, "other", batch)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := newSchema(t)
			s, other := open(t, schema), open(t, schema)
			putDueJobs(t, s, 2)
			claimed, err := other.ClaimDue(ctx, t0, "other", t0.Add(time.Minute), 2)
			if err != nil || len(claimed) != 2 {
				t.Fatalf("ClaimDue = %d jobs, %v", len(claimed), err)
			}
			batch := make([]scheduler.RecordRequest, len(claimed))
			for i, j := range claimed {
				h := scheduler.HistoryEntry{Collection: "c", Job: j.Name, ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, EndTime: t0}
				j.State, j.Schedule.DueAt = scheduler.JobCompleted, time.Time{}
				batch[i] = scheduler.RecordRequest{Job: j, History: []scheduler.HistoryEntry{h}}
			}
			done := make(chan []error, 1)
			inHostTx(t, hostPool(t), s, true, func(v scheduler.TxStore) {
				if err := v.DeleteJob(ctx, "c", claimed[0].Name, ""); err != nil {
					t.Fatal(err)
				}
				go func() { done <- tc.record(other, batch) }()
				waitForLockWait(t, connect(t), schema, "UPDATE")
			})
			errs := <-done
			if len(errs) != 2 || !errors.Is(errs[0], scheduler.ErrNotFound) || errs[1] != nil {
				t.Errorf("%s of a deleted job and another = %v; want ErrNotFound and nil", tc.name, errs)
			}
			if rows, orphans := historyRows(t, schema); rows != 1 || orphans != 0 {
				t.Errorf("history: %d rows, %d of them orphans; want 1 (the other job's) and 0", rows, orphans)
			}
		})
	}
}

// TestDeleteAfterRecordAcrossStores: a delete (DeleteJob, DeleteCollection,
// Prune of final jobs) that reaches a job whose record holds its row, from
// another session, waits for the record, then deletes the history that the
// record committed too: it deletes the job first and its history after, by
// a statement that sees what committed meanwhile. A record is one
// statement, which a test cannot hold open: a transaction of another
// connection runs one like it (the job's row updated and an entry of its
// history inserted) and commits once the delete waits for it.
func TestDeleteAfterRecordAcrossStores(t *testing.T) {
	for _, tc := range []struct {
		name   string
		delete func(s *postgres.Store) error
	}{
		{"DeleteJob", func(s *postgres.Store) error { return s.DeleteJob(ctx, "c", "j", "") }},
		{"DeleteCollection", func(s *postgres.Store) error { return s.DeleteCollection(ctx, "c", "") }},
		{"Prune", func(s *postgres.Store) error {
			_, err := s.Prune(ctx, scheduler.PruneRequest{FinalJobsBefore: t0.Add(time.Second)})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := newSchema(t)
			s := open(t, schema)
			if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
				t.Fatal(err)
			}
			runOnce(t, s, "c", "j") // Completed at t0, with one entry
			q := pgx.Identifier{schema}.Sanitize()
			deleter := open(t, schema)
			done := make(chan error, 1)
			// The record's statement, held open: the job's row updated
			// and an entry of its history inserted.
			err := pgx.BeginFunc(ctx, connect(t), func(tx pgx.Tx) error {
				_, err := tx.Exec(ctx, "WITH u AS (UPDATE "+q+".jobs SET version = version + 1 WHERE collection = 'c' AND name = 'j' RETURNING collection, name) "+
					"INSERT INTO "+q+".history (collection, job, status, end_time, entry, action_name, retry_count) "+
					"SELECT h.collection, h.job, h.status, h.end_time, h.entry, h.action_name, h.retry_count FROM "+q+".history h JOIN u ON h.collection = u.collection AND h.job = u.name")
				if err != nil {
					return err
				}
				go func() { done <- tc.delete(deleter) }()
				waitForLockWait(t, connect(t), schema, "DELETE FROM")
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if rows, orphans := historyRows(t, schema); rows != 0 || orphans != 0 {
				t.Errorf("after %s: %d history rows, %d of them orphans; want none", tc.name, rows, orphans)
			}
		})
	}
}

// putDueJobs puts collection c and jobs j00, j01, … (n of them) due at t0.
func putDueJobs(t *testing.T, s scheduler.Store, n int) {
	t.Helper()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		j := &scheduler.JobRecord{Collection: "c", Name: fmt.Sprintf("j%02d", i), Job: &scheduler.Job{}, State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}
		if err := s.PutJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
}

// TestHistoryEntryColumns: an entry's JSON leaves out what the columns of
// history hold (the job's collection and name, the status, the end time,
// the action name and the retry count), and reads back whole from them;
// rows written before, with every member in the JSON, read back the same.
func TestHistoryEntryColumns(t *testing.T) {
	schema := newSchema(t)
	storetest.CheckHistoryRows(t, open(t, schema), func(hist []scheduler.HistoryEntry, exact int) {
		c := connect(t)
		q := pgx.Identifier{schema}.Sanitize()
		rows, err := c.Query(ctx, "SELECT entry::text FROM "+q+".history ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range texts[:exact] {
			for _, member := range []string{`"collection"`, `"job"`, `"status"`, `"endTime"`, `"actionName"`, `"retryCount"`} {
				if strings.Contains(text, member) {
					t.Errorf("stored entry %s holds %s, which a column holds", text, member)
				}
			}
		}
		writeWholeEntries(t, c, q, hist)
	})
}

// writeWholeEntries writes the entries of hist, in recording order, into
// the rows of schema q's history as stores wrote them before entries left
// out what columns hold: every member in the JSON.
func writeWholeEntries(t *testing.T, c *pgx.Conn, q string, hist []scheduler.HistoryEntry) {
	t.Helper()
	for i, h := range hist {
		full, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, "UPDATE "+q+".history SET entry = $1::text::json WHERE id = (SELECT id FROM "+q+".history ORDER BY id OFFSET $2 LIMIT 1)", string(full), i); err != nil {
			t.Fatal(err)
		}
	}
}
