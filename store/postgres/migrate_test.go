package postgres_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/postgres"
)

// TestMigrateFromVersion1 opens a schema of version 1 that holds history
// (one made by this build, with what migrations 2 and 3 added taken away)
// and checks that Open migrates it and keeps the data.
func TestMigrateFromVersion1(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	j := &scheduler.JobRecord{Collection: "c", Name: "j", Job: &scheduler.Job{}, State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}
	if err := s.PutJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	claimed, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 1)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("ClaimDue = %v, %v", claimed, err)
	}
	hist := []scheduler.HistoryEntry{
		{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusFailed, EndTime: t0, Message: "1 \x00 \"actionName\":\"x\""},
		{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, EndTime: t0, RetryCount: 12, Message: "2"},
		{Collection: "c", Job: "j", ActionName: scheduler.ErrorAction, Status: scheduler.StatusCompleted, EndTime: t0, Message: "3"},
	}
	if err := s.Record(ctx, "me", claimed[0], hist); err != nil {
		t.Fatal(err)
	}
	s.Close()

	c := connect(t)
	q := pgx.Identifier{schema}.Sanitize()
	if _, err := c.Exec(ctx, "DROP INDEX "+q+".history_status; ALTER TABLE "+q+".history DROP COLUMN action_name, DROP COLUMN retry_count, DROP COLUMN faulted; UPDATE "+q+".schema_version SET version = 1"); err != nil {
		t.Fatal(err)
	}

	s = open(t, schema)
	got, err := s.RecentHistory(ctx, scheduler.HistoryFilter{Status: scheduler.StatusFailed})
	if err != nil || len(got) != 1 || got[0].Message != hist[0].Message {
		t.Errorf("RecentHistory(Failed) after migration = %+v, %v; want entry 1", got, err)
	}
	// The new columns were filled from the entries, \x00 and all.
	counts, err := s.CountHistory(ctx, t0, t0.Add(time.Minute), time.Minute, nil)
	want := []scheduler.HistoryCount{
		{Start: t0, ActionName: scheduler.ErrorAction, Status: scheduler.StatusCompleted, Entries: 1},
		{Start: t0, ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, Entries: 1, Retries: 1},
		{Start: t0, ActionName: scheduler.MainAction, Status: scheduler.StatusFailed, Entries: 1},
	}
	if diff := cmp.Diff(want, counts); err != nil || diff != "" {
		t.Errorf("CountHistory after migration: %v (-want +got):\n%s", err, diff)
	}
	var version, indexes int
	if err := c.QueryRow(ctx, "SELECT version FROM "+q+".schema_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND indexname IN ('history_status', 'history_faulted')", schema).Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if version != postgres.SchemaVersion || indexes != 2 {
		t.Errorf("after migration: schema version %d, history_status and history_faulted indexes %d; want %d and 2", version, indexes, postgres.SchemaVersion)
	}
}
