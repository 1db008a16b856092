package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobclock/scheduler/store/sqlite"
)

var ctx = context.Background()

func TestOpenNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	s := open(t, path)
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	newer := sqlite.SchemaVersion + 1
	if _, err := db.Exec("UPDATE schema_version SET version = ?", newer); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = sqlite.Open(ctx, path, nil)
	var ns *sqlite.NewerSchemaError
	if !errors.As(err, &ns) || ns.Found != newer || ns.Known != sqlite.SchemaVersion {
		t.Fatalf("Open(schema version %d) = %v, want a *NewerSchemaError for %[1]d", newer, err)
	}
	want := fmt.Sprintf("store/sqlite: database schema version %d is newer than this build supports (%d); upgrade jobclock", newer, sqlite.SchemaVersion)
	if err.Error() != want {
		t.Errorf("Open(schema version %d) error %q, want %q", newer, err, want)
	}
}

func TestOpenNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "garbage.db")
	garbage := []byte(strings.Repeat("this is not a database, just text. ", 200))
	if err := os.WriteFile(path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := sqlite.Open(ctx, path, nil)
	if err == nil || !strings.Contains(err.Error(), "not a SQLite database, or a corrupt one") || !strings.Contains(err.Error(), path) {
		t.Errorf("Open(garbage) = %v, want an error naming the file as not a SQLite database", err)
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(garbage) {
		t.Errorf("Open(garbage) changed the file")
	}
}

func TestOpenForeignDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL); CREATE TABLE customers (id INTEGER)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = sqlite.Open(ctx, path, nil)
	if err == nil || !strings.Contains(err.Error(), "tables of another application (customers, invoices)") {
		t.Errorf("Open(foreign database) = %v, want an error naming its tables", err)
	}

	// Another application's id in the header.
	path2 := filepath.Join(t.TempDir(), "app.db")
	db, err = sql.Open("sqlite", path2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA application_id = 42"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = sqlite.Open(ctx, path2, nil)
	if err == nil || !strings.Contains(err.Error(), "belongs to another application (application_id 0x2a)") {
		t.Errorf("Open(application_id 42) = %v, want an error about another application", err)
	}
}

func TestOpenOptions(t *testing.T) {
	tests := []struct {
		name string
		path string
		opts *sqlite.Options
		want string
	}{
		{"empty path", "", nil, "path is empty"},
		{"query in path", "a?b", nil, "without '?'"},
		{"synchronous", "x.db", &sqlite.Options{Synchronous: "sometimes"}, `Options.Synchronous is "sometimes"`},
		{"busy timeout", "x.db", &sqlite.Options{BusyTimeout: -1}, "Options.BusyTimeout is negative"},
	}
	for _, tt := range tests {
		_, err := sqlite.Open(ctx, tt.path, tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Open = %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestNewHostDB(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := sqlite.New(ctx, db, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	putAndGet(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(); err != nil {
		t.Errorf("Close closed the host's database: %v", err)
	}
	// The schema is there for the next Store.
	s2, err := sqlite.New(ctx, db, nil)
	if err != nil {
		t.Fatalf("New again: %v", err)
	}
	defer s2.Close()
	if _, err := s2.GetCollection(ctx, "c"); err != nil {
		t.Errorf("GetCollection after reopening: %v", err)
	}
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}
