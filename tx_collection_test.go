package scheduler_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/sqlite"
)

// jobsOnlyTx is a Transactional store whose views of a transaction write
// jobs only, as a host's own store written before collections could be
// written in a transaction.
type jobsOnlyTx struct{ *sqlite.Store }

func (s jobsOnlyTx) InTx(ctx context.Context, tx any) (scheduler.TxStore, error) {
	st, err := s.Store.InTx(ctx, tx)
	if err != nil {
		return nil, err
	}
	return struct{ scheduler.TxStore }{st}, nil
}

// TestCollectionTxIsOptional: PutCollectionTx and PutCalendarTx over a
// Transactional store whose view is not a CollectionTxStore refuse with
// ErrUnsupported and write nothing.
func TestCollectionTxIsOptional(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "j.db")+"?_pragma=temp_store(2)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := sqlite.New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheduler.New(jobsOnlyTx{st}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := s.PutCollectionTx(ctx, tx, "c", nil, nil); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("PutCollectionTx over a view without collection writes = %v, want ErrUnsupported", err)
	}
	if _, err := s.PutCalendarTx(ctx, tx, "c", "h", &scheduler.Calendar{}, nil); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("PutCalendarTx over a view without collection writes = %v, want ErrUnsupported", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetCollection(ctx, "c"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("collection after the refused PutCollectionTx: %v, want ErrNotFound", err)
	}
}
