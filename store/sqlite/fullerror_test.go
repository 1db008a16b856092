package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestFullErrorSaysItOnce: an error that already carries ErrFull (a
// record batch's element, answered again with the rest of its group) is
// not joined with ErrFull a second time, so its message says the database
// is full once.
func TestFullErrorSaysItOnce(t *testing.T) {
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "full.db")+"?_pragma=max_page_count(3)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var full error
	if _, full = db.ExecContext(ctx, "CREATE TABLE b (x BLOB)"); full == nil {
		for range 100 {
			if _, full = db.ExecContext(ctx, "INSERT INTO b VALUES (randomblob(3000))"); full != nil {
				break
			}
		}
	}
	if full == nil {
		t.Fatal("the database never became full")
	}
	once := fullError(full)
	if !errors.Is(once, ErrFull) {
		t.Fatalf("fullError(%v) = %v, want ErrFull in it", full, once)
	}
	for _, err := range []error{
		fullError(once),
		fullError(fmt.Errorf("wrapped: %w", once)),
		fullError(fmt.Errorf("redo: %w", fullError(fmt.Errorf("element: %w", full)))),
	} {
		if n := strings.Count(err.Error(), ErrFull.Error()); n != 1 || !errors.Is(err, ErrFull) {
			t.Errorf("%q says the database is full %d times, want once (and ErrFull)", err, n)
		}
	}
	if err := fullError(errors.New("other")); errors.Is(err, ErrFull) {
		t.Errorf("fullError of another error = %v, carries ErrFull", err)
	}
}
