package sqlite_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/store/sqlite"
)

// TestTxCalendarJobWarnsNothing checks that a calendar job put in the transaction that creates
// its collection and calendar logs no warning (a read outside the
// transaction would find neither), and that the record PutJobTx returns
// is what the transaction holds, without a health read outside it.
func TestTxCalendarJobWarnsNothing(t *testing.T) {
	ctx := context.Background()
	db := hostDB(t, filepath.Join(t.TempDir(), "app.db"))
	st, err := sqlite.New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var logs syncbuf.Buffer
	s, err := scheduler.New(st, &scheduler.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollectionTx(ctx, tx, "c", &scheduler.JobCollection{}, nil); err != nil {
		t.Fatal(err)
	}
	cal, err := scheduler.ParseCalendar([]byte(`{"properties": {"dates": ["2030-12-25"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCalendarTx(ctx, tx, "c", "hol", cal, nil); err != nil {
		t.Fatal(err)
	}
	job, err := s.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:1/", "method": "GET"}},
	  "recurrence": {"frequency": "Day", "interval": 1, "calendar": "hol"}}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.PutJobTx(ctx, tx, "c", "j", job, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status.Health != "" {
		t.Errorf("PutJobTx returned health %q, read outside the transaction", r.Status.Health)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("warnings of a put inside its transaction:\n%s", logs.String())
	}
}
