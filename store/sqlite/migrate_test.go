package sqlite_test

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/sqlite"
	"github.com/jobclock/scheduler/store/storetest"
)

// TestMigrateFromVersion1 opens a file of schema version 1 that holds
// history (one made by this build, with what migrations 2 to 4 added
// taken away)
// and checks that Open migrates it and keeps the data.
func TestMigrateFromVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	s := open(t, path)
	t0 := time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)
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

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(dropCounts + "DROP INDEX history_status; DROP INDEX history_faulted; DROP INDEX jobs_slot; ALTER TABLE jobs DROP COLUMN slot; ALTER TABLE jobs DROP COLUMN tags; ALTER TABLE jobs DROP COLUMN incarnation; UPDATE schema_version SET version = 1"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s = open(t, path)
	got, err := s.RecentHistory(ctx, scheduler.HistoryFilter{Status: scheduler.StatusFailed})
	if err != nil || len(got) != 1 || got[0].Message != "1" {
		t.Errorf("RecentHistory(Failed) after migration = %+v, %v; want entry 1", got, err)
	}
	storetest.CheckMigratedJob(t, s, "c", "j")
	s.Close()
	db, err = sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version, indexes int
	if err := db.QueryRow("SELECT version FROM schema_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN ('history_status', 'history_faulted')").Scan(&indexes); err != nil {
		t.Fatal(err)
	}
	if version != sqlite.SchemaVersion || indexes != 2 {
		t.Errorf("after migration: schema version %d, history_status and history_faulted indexes %d; want %d and 2", version, indexes, sqlite.SchemaVersion)
	}
	// The latest faulted entries are read backwards through the partial
	// index, not by scanning the history.
	var plan strings.Builder
	rows, err := db.Query("EXPLAIN QUERY PLAN SELECT entry FROM history WHERE true AND json_extract(entry, '$.faulted') = 1 ORDER BY id DESC LIMIT 10")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(detail + "\n")
	}
	if !strings.Contains(plan.String(), "history_faulted") {
		t.Errorf("query plan of the faulted entries:\n%s\nwant one that uses index history_faulted", plan.String())
	}
}

// TestMigrateToSlots opens a file of schema version 3, whose jobs hold no
// places, and checks that Open gives them the places of their collections
// from 0 up in name order, which then decide the quota.
func TestMigrateToSlots(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v3.db")
	s := open(t, path)
	for _, c := range []string{"c", "d"} {
		if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: c}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range [][2]string{{"c", "x"}, {"c", "a"}, {"d", "j"}, {"c", "m"}} {
		if err := s.PutJob(ctx, &scheduler.JobRecord{Collection: id[0], Name: id[1], Job: &scheduler.Job{}, State: scheduler.JobEnabled}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(dropCounts + "DROP INDEX jobs_slot; ALTER TABLE jobs DROP COLUMN slot; ALTER TABLE jobs DROP COLUMN tags; ALTER TABLE jobs DROP COLUMN incarnation; UPDATE schema_version SET version = 3"); err != nil {
		t.Fatal(err)
	}

	s = open(t, path)
	rows, err := db.Query("SELECT collection || '/' || name || '=' || slot FROM jobs ORDER BY collection, name")
	if err != nil {
		t.Fatal(err)
	}
	var slots []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		slots = append(slots, v)
	}
	rows.Close()
	if want := []string{"c/a=0", "c/m=1", "c/x=2", "d/j=0"}; strings.Join(slots, " ") != strings.Join(want, " ") {
		t.Errorf("places after migration = %q, want %q", slots, want)
	}
	c, err := s.GetCollection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: 4}
	if err := s.PutCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		err := s.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: fmt.Sprintf("n%d", i), Job: &scheduler.Job{}, State: scheduler.JobEnabled})
		if (err == nil) != want || !want && !errors.Is(err, scheduler.ErrQuotaExceeded) {
			t.Errorf("PutJob(c/n%d) with a quota of 4 = %v; want success %v, else a quota error", i, err, want)
		}
	}
}

// dropCounts takes away what migrations 6 and 7 added.
const dropCounts = "DROP TABLE limit_permits; DROP TABLE limit_rates; DROP TRIGGER jobs_count_created; DROP TRIGGER jobs_count_deleted; DROP TRIGGER jobs_count_moved; DROP TABLE job_counts; "

// TestMigrateJobCounts opens a file of schema version 5, from before the
// job counts were kept, that holds jobs of two collections in two
// states, and checks that Open counts them, and that the counts follow
// the writes after it.
func TestMigrateJobCounts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v5.db")
	s := open(t, path)
	storetest.PutJobsForCounts(t, s)
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(dropCounts + "ALTER TABLE jobs DROP COLUMN incarnation; UPDATE schema_version SET version = 5"); err != nil {
		t.Fatal(err)
	}
	storetest.CheckCountsAfterMigration(t, open(t, path))
}

// TestMigrateIncarnation opens a file of schema version 8, from before
// the store drew job incarnations, and checks that its job has none and is
// told apart by its Created, and that jobs created since have one.
func TestMigrateIncarnation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v8.db")
	s := open(t, path)
	storetest.PutJobFromBefore(t, s)
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("ALTER TABLE jobs DROP COLUMN incarnation; UPDATE schema_version SET version = 8"); err != nil {
		t.Fatal(err)
	}
	storetest.CheckJobFromBefore(t, open(t, path))
}
