package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/postgres"
)

var ctx = context.Background()

var t0 = time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)

func connect(t *testing.T) *pgx.Conn {
	t.Helper()
	return connectTo(t, dsn(t))
}

// connectTo connects to the database at address d.
func connectTo(t *testing.T, d string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	return c
}

func TestOpenNewerSchema(t *testing.T) {
	schema := newSchema(t)
	open(t, schema).Close()
	c := connect(t)
	newer := postgres.SchemaVersion + 1
	if _, err := c.Exec(ctx, "UPDATE "+pgx.Identifier{schema}.Sanitize()+".schema_version SET version = $1", newer); err != nil {
		t.Fatal(err)
	}
	_, err := postgres.Open(ctx, dsn(t), &postgres.Options{Schema: schema})
	var ns *postgres.NewerSchemaError
	if !errors.As(err, &ns) || ns.Found != newer {
		t.Fatalf("Open(schema version %d) = %v, want a *NewerSchemaError", newer, err)
	}
	want := fmt.Sprintf("store/postgres: database schema version %d is newer than this build supports (%d); upgrade jobclock", newer, postgres.SchemaVersion)
	if err.Error() != want {
		t.Errorf("Open(schema version %d) error %q, want %q", newer, err, want)
	}
}

func TestOpenForeignSchema(t *testing.T) {
	schema := newSchema(t)
	c := connect(t)
	q := pgx.Identifier{schema}.Sanitize()
	if _, err := c.Exec(ctx, "CREATE SCHEMA "+q+"; CREATE TABLE "+q+".invoices (id int)"); err != nil {
		t.Fatal(err)
	}
	_, err := postgres.Open(ctx, dsn(t), &postgres.Options{Schema: schema})
	if err == nil || !strings.Contains(err.Error(), "holds tables of another application (invoices)") {
		t.Errorf("Open(foreign schema) = %v, want an error naming its tables", err)
	}
}

func TestOpenConcurrently(t *testing.T) {
	schema := newSchema(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			s, err := postgres.Open(ctx, dsn(t), &postgres.Options{Schema: schema})
			if err != nil {
				t.Errorf("Open: %v", err)
				return
			}
			s.Close()
		})
	}
	wg.Wait()
}

// terminateAt returns a hook that kills the transaction's server process
// from another connection before step.
func terminateAt(t *testing.T, step string) func(context.Context, pgx.Tx, string) {
	killer := connect(t)
	return func(ctx context.Context, tx pgx.Tx, s string) {
		if s != step {
			return
		}
		var pid int
		if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
			t.Errorf("pg_backend_pid: %v", err)
			return
		}
		if _, err := killer.Exec(ctx, "SELECT pg_terminate_backend($1, 5000)", pid); err != nil {
			t.Errorf("pg_terminate_backend: %v", err)
		}
	}
}

func TestDroppedConnectionMidTransaction(t *testing.T) {
	s := open(t, newSchema(t))
	coll := &scheduler.CollectionRecord{Name: "c", ETag: "1"}
	if err := s.PutCollection(ctx, coll); err != nil {
		t.Fatal(err)
	}
	job := &scheduler.JobRecord{Collection: "c", Name: "j", Job: &scheduler.Job{}, State: scheduler.JobEnabled,
		Schedule: scheduler.JobSchedule{DueAt: t0}}
	if err := s.PutJob(ctx, job); err != nil {
		t.Fatal(err)
	}

	// Disabling the collection writes the collection, then its jobs.
	s.SetHook(terminateAt(t, "update jobs"))
	c, _ := s.GetCollection(ctx, "c")
	c.Definition.Properties.State = scheduler.CollectionDisabled
	c.ETag = "2"
	if err := s.PutCollection(ctx, c); err == nil {
		t.Fatal("PutCollection with its connection killed mid-transaction succeeded")
	}
	s.SetHook(nil)
	after, err := s.GetCollection(ctx, "c")
	if err != nil || after.Version != 1 || after.ETag != "1" || after.Definition.State() != scheduler.CollectionEnabled {
		t.Errorf("collection after the failed write = %+v, %v; want version 1, etag 1, Enabled", after, err)
	}
	if n, _ := s.NextDue(ctx); !n.Equal(t0) {
		t.Errorf("NextDue after the failed write = %v, want %v (the job still claimable)", n, t0)
	}

	// The pool recovers.
	if err := s.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: "k", Job: &scheduler.Job{}, State: scheduler.JobEnabled}); err != nil {
		t.Errorf("PutJob after the failures: %v", err)
	}
}

// TestRecordCancelled cancels Record at many points of its run and checks
// that each either wrote everything (job, lease release and history) or
// nothing.
func TestRecordCancelled(t *testing.T) {
	s := open(t, newSchema(t))
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: "j", Job: &scheduler.Job{}, State: scheduler.JobEnabled,
		Schedule: scheduler.JobSchedule{DueAt: t0}}); err != nil {
		t.Fatal(err)
	}
	killer := connect(t)
	// Reads retry: a killed server process leaves a dead connection in
	// the pool, which fails the next query that uses it.
	hist := func() int {
		var err error
		for range 5 {
			var h []scheduler.HistoryEntry
			if h, err = s.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{}); err == nil {
				return len(h)
			}
		}
		t.Fatal(err)
		return 0
	}
	get := func() *scheduler.JobRecord {
		var err error
		for range 5 {
			var j *scheduler.JobRecord
			if j, err = s.GetJob(ctx, "c", "j"); err == nil {
				return j
			}
		}
		t.Fatal(err)
		return nil
	}
	failed, done, ambiguous := 0, 0, 0
	for i := range 40 {
		now := t0.Add(time.Duration(i) * time.Hour)
		claimed, err := s.ClaimDue(ctx, now, "me", now.Add(time.Minute), 1)
		if err != nil {
			claimed, err = s.ClaimDue(ctx, now, "me", now.Add(time.Minute), 1)
		}
		if err != nil || len(claimed) != 1 {
			t.Fatalf("ClaimDue = %v, %v", claimed, err)
		}
		j := claimed[0]
		before := hist()
		j.Status.ExecutionCount++
		j.Schedule.DueAt = now.Add(time.Hour)
		entries := make([]scheduler.HistoryEntry, 20)
		for k := range entries {
			entries[k] = scheduler.HistoryEntry{Collection: "c", Job: "j", Status: scheduler.StatusCompleted, StartTime: now, EndTime: now,
				Message: strings.Repeat("x", 200)}
		}
		rctx, cancel := context.WithCancel(ctx)
		delay := time.Duration(i%10) * 200 * time.Microsecond
		killed := make(chan struct{})
		go func() {
			defer close(killed)
			time.Sleep(delay)
			if i%2 == 0 {
				cancel()
			} else {
				// Kill every other server process of the pool.
				killer.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND query LIKE '%INSERT INTO%history%' AND state = 'active'")
			}
		}()
		err = s.Record(rctx, "me", j, entries)
		<-killed
		cancel()
		// A cancelled statement may still run on the server: wait for it
		// to end, so that the job and its history are read as it left
		// them.
		for range 100 {
			var active int
			if killer.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND query LIKE '%INSERT INTO%history%' AND state = 'active'").Scan(&active); active == 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cur, n := get(), hist()
		if err == nil {
			done++
			if cur.Version != j.Version+1 || cur.LeaseOwner != "" || n != before+len(entries) {
				t.Errorf("after a Record that succeeded: version %d owner %q history %d; want %d, none, %d", cur.Version, cur.LeaseOwner, n, j.Version+1, before+len(entries))
			}
			continue
		}
		failed++
		switch {
		case cur.Version == j.Version && cur.LeaseOwner == "me" && n == before && cur.Status.ExecutionCount != j.Status.ExecutionCount:
			// Nothing written; release the lease for the next round. A
			// dead connection of the pool may fail the release although
			// it committed (a Record without history is not recognised
			// when repeated): then the lease is gone all the same.
			var err error
			for range 5 {
				if err = s.Record(ctx, "me", cur, nil); err == nil || errors.Is(err, scheduler.ErrLeaseLost) && get().LeaseOwner == "" {
					err = nil
					break
				}
			}
			if err != nil {
				t.Fatal(err)
			}
		case cur.Version == j.Version+1 && cur.LeaseOwner == "" && n == before+len(entries) && cur.Status.ExecutionCount == j.Status.ExecutionCount:
			// Everything written, though the caller could not learn it:
			// a repeat of the Record is recognised and writes nothing.
			ambiguous++
			// Repeated as the Scheduler does, also over the dead
			// connections the kill left in the pool.
			var err error
			for range 5 {
				if err = s.Record(ctx, "me", j, entries); err == nil || errors.Is(err, scheduler.ErrLeaseLost) || errors.Is(err, scheduler.ErrConflict) {
					break
				}
			}
			if err != nil {
				t.Errorf("Record repeated after one that committed = %v, want nil", err)
			}
			if again := hist(); again != n {
				t.Errorf("Record repeated after one that committed: history %d, want %d", again, n)
			}
		default:
			t.Errorf("after a Record that failed (%v): version %d owner %q history %d count %d; want all of %d, me, %d, %d or none of it",
				err, cur.Version, cur.LeaseOwner, n, cur.Status.ExecutionCount, j.Version+1, before+len(entries), j.Status.ExecutionCount)
		}
	}
	t.Logf("%d records failed part-way (%d of them had committed), %d completed", failed, ambiguous, done)
	if failed == 0 {
		t.Errorf("no Record was interrupted; the test checks nothing")
	}
}

func TestNotify(t *testing.T) {
	schema := newSchema(t)
	a, b := open(t, schema), open(t, schema)
	nctx, cancel := context.WithCancel(ctx)
	ch, err := a.Notify(nctx)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Fatal("wake-up before any write")
	case <-time.After(50 * time.Millisecond):
	}
	if err := b.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := b.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: "j", Job: &scheduler.Job{}, State: scheduler.JobEnabled}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up within 5s of a PutJob in another instance")
	}
	// Another schema's writes do not wake this one.
	other := open(t, newSchema(t))
	if err := other.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := other.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: "j", Job: &scheduler.Job{}, State: scheduler.JobEnabled}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
		t.Error("wake-up from another schema")
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case _, ok := <-ch:
		if ok {
			// A last buffered value is fine; the close must follow.
			if _, ok := <-ch; ok {
				t.Error("channel still open after ctx ended")
			}
		}
	case <-time.After(5 * time.Second):
		t.Error("channel not closed within 5s of ctx's end")
	}
}

// TestRecordRepeated: a Record repeated after it committed (its caller
// heard an error) is recognised by its history, also after the job was
// written since, and writes nothing; a different outcome, or one without
// history, still fails with ErrLeaseLost.
func TestRecordRepeated(t *testing.T) {
	s := open(t, newSchema(t))
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: "j", Job: &scheduler.Job{}, State: scheduler.JobEnabled,
		Schedule: scheduler.JobSchedule{DueAt: t0}}); err != nil {
		t.Fatal(err)
	}
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 1)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimDue = %v, %v", claimed, err)
	}
	j := claimed[0]
	j.Schedule.DueAt = t0.Add(time.Hour)
	start := t0.Add(123456789 * time.Nanosecond)
	entry := func(start time.Time) []scheduler.HistoryEntry {
		return []scheduler.HistoryEntry{
			{Collection: "c", Job: "j", Status: scheduler.StatusCompleted, ExecutionTag: "tag1", StartTime: start, EndTime: start.Add(time.Second)},
			{Collection: "c", Job: "j", Status: scheduler.StatusPostponed, StartTime: start, EndTime: start},
		}
	}
	if err := s.Record(ctx, "me", j, entry(start)); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		h, err := s.ListHistory(ctx, "c", "j", scheduler.HistoryFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return len(h)
	}
	if err := s.Record(ctx, "me", j, entry(start)); err != nil {
		t.Errorf("Record repeated = %v, want nil", err)
	}
	cur, err := s.GetJob(ctx, "c", "j")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutJob(ctx, cur); err != nil { // a write through the API meanwhile
		t.Fatal(err)
	}
	if err := s.Record(ctx, "me", j, entry(start)); err != nil {
		t.Errorf("Record repeated after a PutJob = %v, want nil", err)
	}
	if n := count(); n != 2 {
		t.Errorf("history holds %d entries after the repeats, want 2", n)
	}
	if err := s.RecordBatch(ctx, "me", []scheduler.RecordRequest{{Job: j, History: entry(start)}})[0]; err != nil {
		t.Errorf("RecordBatch repeating the Record = %v, want nil", err)
	}
	if err := s.Record(ctx, "me", j, entry(start.Add(time.Nanosecond))); !errors.Is(err, scheduler.ErrLeaseLost) {
		t.Errorf("Record of another attempt = %v, want ErrLeaseLost", err)
	}
	// Entries that differ from those stored only in what the columns of
	// history hold, which their JSON leaves out.
	for name, change := range map[string]func(h *scheduler.HistoryEntry){
		"status":      func(h *scheduler.HistoryEntry) { h.Status = scheduler.StatusFailed },
		"action name": func(h *scheduler.HistoryEntry) { h.ActionName = scheduler.ErrorAction },
		"retry count": func(h *scheduler.HistoryEntry) { h.RetryCount = 1 },
		"end time":    func(h *scheduler.HistoryEntry) { h.EndTime = h.EndTime.Add(time.Nanosecond) },
	} {
		other := entry(start)
		change(&other[0])
		if err := s.Record(ctx, "me", j, other); !errors.Is(err, scheduler.ErrLeaseLost) {
			t.Errorf("Record of an entry with another %s = %v, want ErrLeaseLost", name, err)
		}
	}
	if err := s.Record(ctx, "me", j, nil); !errors.Is(err, scheduler.ErrLeaseLost) {
		t.Errorf("Record without history = %v, want ErrLeaseLost", err)
	}
	if n := count(); n != 2 {
		t.Errorf("history holds %d entries, want 2", n)
	}
}
