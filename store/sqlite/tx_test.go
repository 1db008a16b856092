package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/store/sqlite"
	"github.com/jobclock/scheduler/store/storetest"
)

// hostDB opens a database as a host that writes in its own transactions
// does (see Store.InTx): BEGIN IMMEDIATE for every transaction, a busy
// timeout, and temp_store MEMORY.
func hostDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=temp_store(2)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(8)
	t.Cleanup(func() { db.Close() })
	return db
}

func txBackend(t testing.TB) *storetest.TxBackend {
	db := hostDB(t, filepath.Join(t.TempDir(), "app.db"))
	st, err := sqlite.New(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &storetest.TxBackend{Store: st, Begin: func(ctx context.Context) (*storetest.HostTx, error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return nil, err
		}
		return &storetest.HostTx{Tx: tx,
			Commit:   func(context.Context) error { return tx.Commit() },
			Rollback: func(context.Context) error { return tx.Rollback() }}, nil
	}}
}

func TestTransactions(t *testing.T) {
	storetest.RunTx(t, txBackend)
}

// TestInTxTakesTheWriteLock: once a job is put in a host's transaction, no
// other connection writes until it ends.
func TestInTxTakesTheWriteLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "app.db")
	db := hostDB(t, path)
	st, err := sqlite.New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	// A deferred transaction, so that only InTx takes the lock.
	plain, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	tx, err := plain.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := st.InTx(ctx, tx); err != nil {
		t.Fatalf("InTx: %v", err)
	}
	other, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ExecContext(ctx, "BEGIN IMMEDIATE"); err == nil || !strings.Contains(err.Error(), "locked") {
		t.Errorf("BEGIN IMMEDIATE on another connection while the host's transaction holds the lock = %v, want database is locked", err)
	}
	tx.Rollback()
	if _, err := other.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Errorf("BEGIN IMMEDIATE after the host's transaction ended: %v", err)
	} else {
		other.ExecContext(ctx, "ROLLBACK")
	}
}

// TestInTxStaleDeferredTransaction: a deferred transaction that read before
// the scheduler wrote cannot take the lock, and says how to begin it.
func TestInTxStaleDeferredTransaction(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "app.db")
	db := hostDB(t, path)
	_, s := hostScheduler(t, db)
	if _, err := s.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	plain, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(1000)")
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	tx, err := plain.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM jobs").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "c", "other", &scheduler.Job{Action: action.Action{Type: "Tx"}, StartTime: ptr(time.Now().Add(time.Hour))}, nil); err != nil {
		t.Fatal(err)
	}
	_, err = s.PutJobTx(ctx, tx, "c", "j", &scheduler.Job{Action: action.Action{Type: "Tx"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "_txlock=immediate") {
		t.Errorf("PutJobTx in a stale deferred transaction = %v, want an error that names _txlock=immediate", err)
	}
}

// TestInTxOneViewPerTransaction: InTx makes one view of a transaction,
// whatever number of puts it serves, and a new one for the next
// transaction: the quota holds across the puts of each, a rolled-back one
// leaves nothing, and a put in a transaction that has ended fails.
func TestInTxOneViewPerTransaction(t *testing.T) {
	ctx := context.Background()
	db := hostDB(t, filepath.Join(t.TempDir(), "app.db"))
	st, s := hostScheduler(t, db)
	if _, err := s.PutCollection(ctx, "c", &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 3}}}, nil); err != nil {
		t.Fatal(err)
	}
	job := func() *scheduler.Job {
		return &scheduler.Job{Action: action.Action{Type: "Tx"}, StartTime: ptr(time.Now().Add(time.Hour))}
	}
	put := func(tx *sql.Tx, name string) error {
		_, err := s.PutJobTx(ctx, tx, "c", name, job(), nil)
		return err
	}

	first, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	v1, err1 := st.InTx(ctx, first)
	v2, err2 := st.InTx(ctx, first)
	if err1 != nil || err2 != nil || v1 != v2 {
		t.Errorf("InTx twice with one transaction = %p, %v and %p, %v; want the same view twice", v1, err1, v2, err2)
	}
	for _, name := range []string{"a", "b"} {
		if err := put(first, name); err != nil {
			t.Fatalf("PutJobTx(%s) in the first transaction: %v", name, err)
		}
	}
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := put(first, "late"); !errors.Is(err, sql.ErrTxDone) {
		t.Errorf("PutJobTx in a committed transaction = %v, want sql.ErrTxDone", err)
	}

	second, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v3, err := st.InTx(ctx, second); err != nil || v3 == v1 {
		t.Errorf("InTx with the next transaction = %p, %v; want a view other than the first's (%p)", v3, err, v1)
	}
	if err := put(second, "c"); err != nil {
		t.Fatalf("PutJobTx(c) in the second transaction: %v", err)
	}
	if err := put(second, "d"); !errors.Is(err, scheduler.ErrQuotaExceeded) {
		t.Errorf("PutJobTx(d), one more than the quota, = %v, want ErrQuotaExceeded", err)
	}
	if err := second.Rollback(); err != nil {
		t.Fatal(err)
	}

	third, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Rollback()
	if err := put(third, "e"); err != nil {
		t.Fatalf("PutJobTx(e) into the place the rollback freed: %v", err)
	}
	if err := third.Commit(); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.ListJobs(ctx, "c", nil)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(jobs))
	for i, j := range jobs {
		names[i] = j.Name
	}
	if got, want := strings.Join(names, ","), "a,b,e"; got != want {
		t.Errorf("jobs after the three transactions: %s, want %s", got, want)
	}
}

// TestInTxContextEnded: once the context a host's transaction was begun
// with ends, database/sql rolls the transaction back, and a put in it with
// that context fails with an error that matches both the context's error
// and sql.ErrTxDone; with a context that has not ended, it matches
// sql.ErrTxDone alone.
func TestInTxContextEnded(t *testing.T) {
	bg := context.Background()
	db := hostDB(t, filepath.Join(t.TempDir(), "app.db"))
	_, s := hostScheduler(t, db)
	if _, err := s.PutCollection(bg, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	job := &scheduler.Job{Action: action.Action{Type: "Tx"}, StartTime: ptr(time.Now().Add(time.Hour))}
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJobTx(ctx, tx, "c", "a", job, nil); err != nil {
		t.Fatal(err)
	}
	cancel()
	// database/sql rolls tx back in a goroutine of its own.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := tx.ExecContext(bg, "SELECT 1"); errors.Is(err, sql.ErrTxDone) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the transaction was not rolled back within 10 s of its context's end")
		}
	}
	if _, err := s.PutJobTx(ctx, tx, "c", "b", job, nil); !errors.Is(err, context.Canceled) || !errors.Is(err, sql.ErrTxDone) {
		t.Errorf("PutJobTx with the canceled context of its rolled-back transaction = %v, want an error matching context.Canceled and sql.ErrTxDone", err)
	}
	if _, err := s.PutJobTx(bg, tx, "c", "b", job, nil); !errors.Is(err, sql.ErrTxDone) || errors.Is(err, context.Canceled) {
		t.Errorf("PutJobTx with a live context in the rolled-back transaction = %v, want sql.ErrTxDone alone", err)
	}
	if jobs, err := s.ListJobs(bg, "c", nil); err != nil || len(jobs) != 0 {
		t.Errorf("ListJobs after the rollback = %d jobs, %v; want none", len(jobs), err)
	}
}

// TestInTxEndedTransaction: the view of the last transaction given to
// InTx, given again after the transaction ended, fails with sql.ErrTxDone
// at each of its methods, those whose statements it prepared in the
// transaction before its end and those it did not; InTx fails with
// sql.ErrTxDone for an ended transaction that is not the last one.
func TestInTxEndedTransaction(t *testing.T) {
	ctx := context.Background()
	db := hostDB(t, filepath.Join(t.TempDir(), "app.db"))
	st := hostStore(t, db)
	if err := st.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	for _, end := range []string{"Commit", "Rollback"} {
		first, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		v, err := st.InTx(ctx, first)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.GetCollection(ctx, "c"); err != nil { // its statement is prepared in first
			t.Fatal(err)
		}
		if end == "Commit" {
			err = first.Commit()
		} else {
			err = first.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
		if v, err = st.InTx(ctx, first); err != nil && !errors.Is(err, sql.ErrTxDone) {
			t.Fatalf("InTx with the last transaction after its %s = %v, want the view or sql.ErrTxDone", end, err)
		}
		if v != nil {
			for _, call := range []struct {
				name string
				err  error
			}{
				{"GetCollection", func() error { _, err := v.GetCollection(ctx, "c"); return err }()},
				{"GetJob", func() error { _, err := v.GetJob(ctx, "c", "j"); return err }()},
				{"PutJob", v.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: "j", Job: &scheduler.Job{}, State: scheduler.JobEnabled})},
				{"DeleteJob", v.DeleteJob(ctx, "c", "j", "")},
			} {
				if !errors.Is(call.err, sql.ErrTxDone) {
					t.Errorf("%s in the view of the last transaction after its %s = %v, want sql.ErrTxDone", call.name, end, call.err)
				}
			}
		}
		second, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.InTx(ctx, second); err != nil {
			t.Fatal(err)
		}
		if _, err := st.InTx(ctx, first); !errors.Is(err, sql.ErrTxDone) {
			t.Errorf("InTx with an earlier transaction after its %s = %v, want sql.ErrTxDone", end, err)
		}
		if err := second.Rollback(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInTxForgetsEndedTransaction: the Store keeps no transaction alive
// once it has seen it end, nor after Close.
func TestInTxForgetsEndedTransaction(t *testing.T) {
	ctx := context.Background()
	db := hostDB(t, filepath.Join(t.TempDir(), "app.db"))
	st := hostStore(t, db)
	// committed begins a transaction, gives it to InTx and commits it,
	// keeping no reference to it but a weak one.
	committed := func() weak.Pointer[sql.Tx] {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.InTx(ctx, tx); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		return weak.Make(tx)
	}
	// collected reports whether w's transaction is collected within 5 s:
	// database/sql's goroutine that watches the transaction's context may
	// hold it a little longer.
	collected := func(w weak.Pointer[sql.Tx]) bool {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if runtime.GC(); w.Value() == nil {
				return true
			}
		}
		return false
	}

	seen := committed()
	// used uses the view of w's transaction, which has ended.
	used := func(w weak.Pointer[sql.Tx]) error {
		v, err := st.InTx(ctx, w.Value())
		if err != nil {
			return err
		}
		_, err = v.GetCollection(ctx, "c")
		return err
	}
	if err := used(seen); !errors.Is(err, sql.ErrTxDone) {
		t.Fatalf("the view of a transaction after its Commit = %v, want sql.ErrTxDone", err)
	}
	if !collected(seen) {
		t.Error("a transaction InTx saw ended is still reachable")
	}

	unseen := committed()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if !collected(unseen) {
		t.Error("the last transaction given to InTx is still reachable after Close")
	}
}

// hostScheduler returns a Store over db, the host's database, and a
// Scheduler over it that runs jobs of action type "Tx".
func hostScheduler(t *testing.T, db *sql.DB) (*sqlite.Store, *scheduler.Scheduler) {
	t.Helper()
	st := hostStore(t, db)
	reg := new(action.Registry)
	reg.Register("Tx", action.ExecutorFunc(func(context.Context, *action.Request) (*action.Result, error) { return nil, nil }))
	s, err := scheduler.New(st, &scheduler.Config{Executors: reg})
	if err != nil {
		t.Fatal(err)
	}
	return st, s
}

// hostStore returns a Store over db, the host's database, closed when the
// test ends.
func hostStore(t *testing.T, db *sql.DB) *sqlite.Store {
	t.Helper()
	st, err := sqlite.New(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func ptr[T any](v T) *T { return &v }

// TestInTxWarnsOfTempStoreOnDisk: a host's database opened without
// temp_store(2) gets one warning in the store's log, naming the fix,
// however many transactions InTx is given; one opened with it none, and
// after its first 16 transactions InTx checks no more (a connection that
// then drops temp_store(2) goes unwarned: the checks cost a PRAGMA each).
func TestInTxWarnsOfTempStoreOnDisk(t *testing.T) {
	for _, tc := range []struct {
		name  string
		db    func(t *testing.T, path string) *sql.DB
		warns int
		drop  int // after this many transactions the host sets temp_store to 0 (0: never)
	}{
		{name: "temp_store default", warns: 1, db: func(t *testing.T, path string) *sql.DB {
			db, err := sql.Open("sqlite", path+"?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		}},
		{name: "temp_store(2)", warns: 0, db: func(t *testing.T, path string) *sql.DB { return hostDB(t, path) }},
		{name: "temp_store(2), dropped before the 16th", warns: 1, drop: 15, db: func(t *testing.T, path string) *sql.DB { return hostDB(t, path) }},
		{name: "temp_store(2), dropped after the 16th", warns: 0, drop: 16, db: func(t *testing.T, path string) *sql.DB { return hostDB(t, path) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := tc.db(t, filepath.Join(t.TempDir(), "app.db"))
			var log syncbuf.Buffer
			st, err := sqlite.New(ctx, db, &sqlite.Options{Logger: slog.New(slog.NewJSONHandler(&log, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			// The transactions run on one connection of the host's, so
			// that a PRAGMA run on it holds for those after.
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			n := 3
			if tc.drop > 0 {
				n = tc.drop + 1
			}
			for i := range n {
				if tc.drop > 0 && i == tc.drop {
					if _, err := conn.ExecContext(ctx, "PRAGMA temp_store = 0"); err != nil {
						t.Fatal(err)
					}
				}
				tx, err := conn.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := st.InTx(ctx, tx); err != nil {
					t.Fatal(err)
				}
				if err := tx.Rollback(); err != nil {
					t.Fatal(err)
				}
			}
			var warns []map[string]any
			for line := range strings.Lines(log.String()) {
				var r map[string]any
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatalf("log line %q: %v", line, err)
				}
				if r["level"] == "WARN" {
					warns = append(warns, r)
				}
			}
			if len(warns) != tc.warns {
				t.Fatalf("%d warnings after InTx in %d transactions, want %d (log:\n%s)", len(warns), n, tc.warns, log.String())
			}
			for _, w := range warns {
				if msg, _ := w["msg"].(string); !strings.Contains(msg, "_pragma=temp_store(2)") || w["temp_store"] != float64(0) || w["store"] != "sqlite" {
					t.Errorf("warning = %v, want one naming _pragma=temp_store(2), with temp_store 0 and store sqlite", w)
				}
			}
		})
	}
}
