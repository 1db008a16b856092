package sqlite_test

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/storetest"
)

// TestHistoryEntryColumns: an entry's JSON leaves out what the columns of
// history hold (the job's collection and name, the status and the end
// time), and reads back whole from them; rows written before, with every
// member in the JSON, read back the same.
func TestHistoryEntryColumns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.db")
	storetest.CheckHistoryRows(t, open(t, path), func(hist []scheduler.HistoryEntry, exact int) {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var texts []string
		rows, err := db.Query("SELECT entry FROM history ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var text string
			if err := rows.Scan(&text); err != nil {
				t.Fatal(err)
			}
			texts = append(texts, text)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		for _, text := range texts[:exact] {
			for _, member := range []string{`"collection"`, `"job"`, `"status"`, `"endTime"`} {
				if strings.Contains(text, member) {
					t.Errorf("stored entry %s holds %s, which a column holds", text, member)
				}
			}
		}
		// The entries as stores wrote them before: every member in the JSON.
		for i, h := range hist {
			full, err := json.Marshal(h)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("UPDATE history SET entry = ? WHERE id = (SELECT id FROM history ORDER BY id LIMIT 1 OFFSET ?)", string(full), i); err != nil {
				t.Fatal(err)
			}
		}
	})
}
