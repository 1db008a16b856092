package postgres_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/postgres"
)

// TestMigrateFromVersion1 opens a schema of version 1 that holds history
// (one made by this build, with what migration 2 added taken away) and
// checks that Open migrates it and keeps the data.
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
		{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusFailed, EndTime: t0, Message: "1"},
		{Collection: "c", Job: "j", ActionName: scheduler.MainAction, Status: scheduler.StatusCompleted, EndTime: t0, Message: "2"},
	}
	if err := s.Record(ctx, "me", claimed[0], hist); err != nil {
		t.Fatal(err)
	}
	s.Close()

	c := connect(t)
	q := pgx.Identifier{schema}.Sanitize()
	if _, err := c.Exec(ctx, "DROP INDEX "+q+".history_status; UPDATE "+q+".schema_version SET version = 1"); err != nil {
		t.Fatal(err)
	}

	s = open(t, schema)
	got, err := s.RecentHistory(ctx, scheduler.HistoryFilter{Status: scheduler.StatusFailed})
	if err != nil || len(got) != 1 || got[0].Message != "1" {
		t.Errorf("RecentHistory(Failed) after migration = %+v, %v; want entry 1", got, err)
	}
	var version, indexes int
	if err := c.QueryRow(ctx, "SELECT version FROM "+q+".schema_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_indexes WHERE schemaname = $1 AND indexname = 'history_status'", schema).Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if version != postgres.SchemaVersion || indexes != 1 {
		t.Errorf("after migration: schema version %d, history_status indexes %d; want %d and 1", version, indexes, postgres.SchemaVersion)
	}
}
