package storetest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
)

// HostTx is a transaction of the host's on a store's database, as a test
// of [RunTx] begins it.
type HostTx struct {
	// Tx is what the store's InTx takes: a pgx.Tx, a *sql.Tx.
	Tx any
	// Commit and Rollback end it; the second call of either is a no-op
	// or an error that the suite ignores.
	Commit, Rollback func(ctx context.Context) error
}

// TxBackend is a store under test with the database it lives in.
type TxBackend struct {
	// Store is the store; it must be a [scheduler.Transactional].
	Store scheduler.Store
	// Begin begins a transaction of the host's on the store's database.
	Begin func(ctx context.Context) (*HostTx, error)
}

// RunTx checks a [scheduler.Transactional] store through a Scheduler's
// PutJobTx, PatchJobTx, DeleteJobTx (with and without IfMatch),
// PutCollectionTx and PutCalendarTx: a
// commit makes the job exist and run (waking a running scheduler that
// would otherwise sleep for an hour), a rollback leaves no trace and the
// quota as it was, errors leave the transaction usable, two transactions
// that take the last free slot of a collection at once do not both
// commit, a collection created with its calendar and jobs in one
// transaction exists whole after the commit and not at all after a
// rollback, a collection enabled in a transaction runs its jobs from the
// commit, and a transaction of another kind is refused. newBackend returns a fresh store and how to begin
// transactions on its database.
func RunTx(t *testing.T, newBackend func(tb testing.TB) *TxBackend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b *TxBackend)
	}{
		{"CommitRuns", txCommitRuns},
		{"RollbackLeavesNoTrace", txRollback},
		{"RollbackOfManyPuts", txRollbackMany},
		{"ErrorsBeforeCommit", txErrors},
		{"PatchAndDelete", txPatchAndDelete},
		{"LastSlotRace", txLastSlotRace},
		{"WrongTransaction", txWrongKind},
		{"CollectionWithItsJobs", txCollectionWithJobs},
		{"CollectionErrors", txCollectionErrors},
		{"CollectionEnabledRuns", txCollectionEnabledRuns},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, newBackend(t))
		})
	}
}

// txScheduler returns a Scheduler over b's store with an executor for
// type "Tx" that reports each job it runs on the returned channel. With
// start it runs, polling only every hour.
func txScheduler(t *testing.T, b *TxBackend, start bool) (*scheduler.Scheduler, <-chan string) {
	t.Helper()
	ran := make(chan string, 100)
	reg := new(action.Registry)
	reg.Register("Tx", action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		ran <- req.JobID()
		return &action.Result{Message: "ran"}, nil
	}))
	s, err := scheduler.New(b.Store, &scheduler.Config{Executors: reg, PollInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if start {
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Stop(context.Background()) })
	}
	return s, ran
}

func txJob() *scheduler.Job { return &scheduler.Job{Action: action.Action{Type: "Tx"}} }

func begin(t *testing.T, b *TxBackend) *HostTx {
	t.Helper()
	tx, err := b.Begin(context.Background())
	if err != nil {
		t.Fatalf("begin the host's transaction: %v", err)
	}
	t.Cleanup(func() { tx.Rollback(context.Background()) })
	return tx
}

func txCollection(t *testing.T, s *scheduler.Scheduler, name string, maxJobs int) {
	t.Helper()
	def := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: maxJobs}}}
	if _, err := s.PutCollection(context.Background(), name, def, nil); err != nil {
		t.Fatal(err)
	}
}

func txCount(t *testing.T, s *scheduler.Scheduler, collection string) int {
	t.Helper()
	jobs, err := s.ListJobs(context.Background(), collection, nil)
	if err != nil {
		t.Fatal(err)
	}
	return len(jobs)
}

func txCommitRuns(t *testing.T, b *TxBackend) {
	ctx := context.Background()
	s, ran := txScheduler(t, b, true)
	txCollection(t, s, "c", 10)
	time.Sleep(50 * time.Millisecond) // the loop is asleep, for an hour
	tx := begin(t, b)
	r, err := s.PutJobTx(ctx, tx.Tx, "c", "j", txJob(), nil)
	if err != nil {
		t.Fatalf("PutJobTx: %v", err)
	}
	if r.Version != 1 || r.Name != "j" {
		t.Errorf("PutJobTx = %+v, want version 1 of c/j", r)
	}
	time.Sleep(200 * time.Millisecond)
	select {
	case id := <-ran:
		t.Fatalf("%s ran before the host committed", id)
	default:
	}
	committed := time.Now()
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	select {
	case id := <-ran:
		if id != "c/j" {
			t.Errorf("ran %s, want c/j", id)
		}
		t.Logf("ran %v after the commit", time.Since(committed).Round(time.Millisecond))
	case <-time.After(20 * time.Second):
		t.Fatal("the job committed in the host's transaction did not run; the running scheduler was not woken")
	}
	if got, err := s.GetJob(ctx, "c", "j"); err != nil || got.ETag != r.ETag {
		t.Errorf("GetJob after commit = %+v, %v; want the record PutJobTx returned", got, err)
	}
}

func txRollback(t *testing.T, b *TxBackend) {
	ctx := context.Background()
	s, ran := txScheduler(t, b, true)
	txCollection(t, s, "c", 1)
	tx := begin(t, b)
	if _, err := s.PutJobTx(ctx, tx.Tx, "c", "j", txJob(), nil); err != nil {
		t.Fatalf("PutJobTx: %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if _, err := s.GetJob(ctx, "c", "j"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("GetJob after rollback = %v, want ErrNotFound", err)
	}
	if n := txCount(t, s, "c"); n != 0 {
		t.Errorf("%d jobs after rollback, want 0", n)
	}
	// The quota is as it was: the collection's one slot is free.
	if _, err := s.PutJob(ctx, "c", "k", txJob(), nil); err != nil {
		t.Errorf("PutJob into the only slot after a rollback: %v", err)
	}
	select {
	case id := <-ran:
		if id != "c/k" {
			t.Errorf("%s ran, want only c/k", id)
		}
	case <-time.After(20 * time.Second):
		t.Error("c/k did not run")
	}
}

// txRollbackMany fills a collection to its quota in one host transaction
// and rolls it back: the places are free again, for as many jobs and no
// more.
func txRollbackMany(t *testing.T, b *TxBackend) {
	ctx := context.Background()
	const limit = 30
	s, _ := txScheduler(t, b, false)
	txCollection(t, s, "c", limit)
	tx := begin(t, b)
	for i := range limit {
		if _, err := s.PutJobTx(ctx, tx.Tx, "c", fmt.Sprintf("t%02d", i), txJob(), nil); err != nil {
			t.Fatalf("PutJobTx(%d): %v", i, err)
		}
	}
	if _, err := s.PutJobTx(ctx, tx.Tx, "c", "more", txJob(), nil); !errors.Is(err, scheduler.ErrQuotaExceeded) {
		t.Errorf("PutJobTx(one more than the quota) = %v, want ErrQuotaExceeded", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if n := txCount(t, s, "c"); n != 0 {
		t.Errorf("%d jobs after rollback, want 0", n)
	}
	for i := range limit {
		if _, err := s.PutJob(ctx, "c", fmt.Sprintf("p%02d", i), txJob(), nil); err != nil {
			t.Errorf("PutJob(%d of %d) after the rollback: %v", i, limit, err)
		}
	}
	if _, err := s.PutJob(ctx, "c", "more", txJob(), nil); !errors.Is(err, scheduler.ErrQuotaExceeded) {
		t.Errorf("PutJob(one more than the quota) = %v, want ErrQuotaExceeded", err)
	}
}

func txErrors(t *testing.T, b *TxBackend) {
	ctx := context.Background()
	s, _ := txScheduler(t, b, false)
	txCollection(t, s, "c", 1)
	if _, err := s.PutJob(ctx, "c", "full", txJob(), nil); err != nil {
		t.Fatal(err)
	}
	txCollection(t, s, "d", 5)
	tx := begin(t, b)
	_, err := s.PutJobTx(ctx, tx.Tx, "d", "bad", &scheduler.Job{Action: action.Action{Type: "Nope"}}, nil)
	if !errors.Is(err, scheduler.ErrInvalid) {
		t.Errorf("PutJobTx of an invalid job = %v, want ErrInvalid", err)
	}
	_, err = s.PutJobTx(ctx, tx.Tx, "c", "over", txJob(), nil)
	if !errors.Is(err, scheduler.ErrQuotaExceeded) {
		t.Errorf("PutJobTx into a full collection = %v, want ErrQuotaExceeded", err)
	}
	_, err = s.PutJobTx(ctx, tx.Tx, "nope", "j", txJob(), nil)
	if !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("PutJobTx into a missing collection = %v, want ErrNotFound", err)
	}
	// The transaction is still usable.
	if _, err := s.PutJobTx(ctx, tx.Tx, "d", "good", txJob(), nil); err != nil {
		t.Fatalf("PutJobTx after the errors: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if _, err := s.GetJob(ctx, "d", "good"); err != nil {
		t.Errorf("GetJob of the job committed after errors: %v", err)
	}
	if n := txCount(t, s, "d"); n != 1 {
		t.Errorf("%d jobs in d, want 1", n)
	}
}

func txPatchAndDelete(t *testing.T, b *TxBackend) {
	ctx := context.Background()
	s, _ := txScheduler(t, b, false)
	txCollection(t, s, "c", 5)
	for _, name := range []string{"p", "d"} {
		job := &scheduler.Job{Action: action.Action{Type: "Tx"}, Recurrence: &recurrence.Recurrence{Frequency: recurrence.Hour}, State: scheduler.JobDisabled}
		if _, err := s.PutJob(ctx, "c", name, job, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Rolled back: nothing changes.
	tx := begin(t, b)
	if r, err := s.PatchJobTx(ctx, tx.Tx, "c", "p", []byte(`{"state": "Enabled"}`), nil); err != nil || r.State != scheduler.JobEnabled {
		t.Fatalf("PatchJobTx = %+v, %v", r, err)
	}
	if err := s.DeleteJobTx(ctx, tx.Tx, "c", "d", nil); err != nil {
		t.Fatalf("DeleteJobTx: %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := s.GetJob(ctx, "c", "p"); err != nil || r.State != scheduler.JobDisabled {
		t.Errorf("after a rolled-back patch: %+v, %v; want Disabled", r, err)
	}
	if _, err := s.GetJob(ctx, "c", "d"); err != nil {
		t.Errorf("after a rolled-back delete: %v", err)
	}
	// Committed: both take effect. A delete naming another ETag than
	// the job's deletes nothing and leaves tx usable.
	d, err := s.GetJob(ctx, "c", "d")
	if err != nil {
		t.Fatal(err)
	}
	tx = begin(t, b)
	if _, err := s.PatchJobTx(ctx, tx.Tx, "c", "p", []byte(`{"state": "Enabled"}`), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteJobTx(ctx, tx.Tx, "c", "d", &scheduler.DeleteJobOptions{IfMatch: d.ETag + "0"}); !errors.Is(err, scheduler.ErrPreconditionFailed) {
		t.Errorf("DeleteJobTx with a stale IfMatch = %v, want ErrPreconditionFailed", err)
	}
	if err := s.DeleteJobTx(ctx, tx.Tx, "c", "d", &scheduler.DeleteJobOptions{IfMatch: d.ETag}); err != nil {
		t.Fatalf("DeleteJobTx with the job's ETag as IfMatch: %v", err)
	}
	if err := s.DeleteJobTx(ctx, tx.Tx, "c", "d", &scheduler.DeleteJobOptions{IfMatch: "*"}); !errors.Is(err, scheduler.ErrPreconditionFailed) {
		t.Errorf("DeleteJobTx of the job deleted in tx, IfMatch *: %v, want ErrPreconditionFailed", err)
	}
	if err := s.DeleteJobTx(ctx, tx.Tx, "c", "missing", nil); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("DeleteJobTx of a missing job = %v, want ErrNotFound", err)
	}
	if _, err := s.PatchJobTx(ctx, tx.Tx, "c", "p", []byte(`{"state": "Completed"}`), nil); !errors.Is(err, scheduler.ErrInvalid) {
		t.Errorf("PatchJobTx to Completed = %v, want ErrInvalid", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if r, err := s.GetJob(ctx, "c", "p"); err != nil || r.State != scheduler.JobEnabled {
		t.Errorf("after a committed patch: %+v, %v; want Enabled", r, err)
	}
	if _, err := s.GetJob(ctx, "c", "d"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("after a committed delete: %v, want ErrNotFound", err)
	}
}

// txLastSlotRace: two transactions add a job to a collection with one free
// slot at the same time. The second waits for the first; once the first
// commits, the second is refused with ErrQuotaExceeded (or cannot
// proceed), so the collection never holds more than its quota.
func txLastSlotRace(t *testing.T, b *TxBackend) {
	ctx := context.Background()
	s, _ := txScheduler(t, b, false)
	txCollection(t, s, "c", 2)
	if _, err := s.PutJob(ctx, "c", "first", txJob(), nil); err != nil {
		t.Fatal(err)
	}
	tx1 := begin(t, b)
	if _, err := s.PutJobTx(ctx, tx1.Tx, "c", "a", txJob(), nil); err != nil {
		t.Fatalf("PutJobTx in the first transaction: %v", err)
	}
	var wg sync.WaitGroup
	var err2 error
	started := make(chan struct{})
	wg.Go(func() {
		close(started)
		tx2, err := b.Begin(ctx)
		if err != nil {
			err2 = fmt.Errorf("begin: %w", err)
			return
		}
		defer tx2.Rollback(ctx)
		if _, err2 = s.PutJobTx(ctx, tx2.Tx, "c", "b", txJob(), nil); err2 == nil {
			err2 = tx2.Commit(ctx)
		}
	})
	<-started
	time.Sleep(300 * time.Millisecond) // the second transaction waits for the first
	if err := tx1.Commit(ctx); err != nil {
		t.Fatalf("commit the first transaction: %v", err)
	}
	wg.Wait()
	if !errors.Is(err2, scheduler.ErrQuotaExceeded) {
		t.Errorf("the second transaction: %v, want ErrQuotaExceeded", err2)
	}
	jobs, err := s.ListJobs(ctx, "c", nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range jobs {
		names = append(names, j.Name)
	}
	if strings.Join(names, ",") != "a,first" {
		t.Errorf("jobs after the race: %v, want a and first", names)
	}
}

func txWrongKind(t *testing.T, b *TxBackend) {
	ctx := context.Background()
	s, _ := txScheduler(t, b, false)
	txCollection(t, s, "c", 5)
	_, err := s.PutJobTx(ctx, "not a transaction", "c", "j", txJob(), nil)
	if err == nil || !strings.Contains(err.Error(), "string") {
		t.Errorf("PutJobTx with a string for a transaction = %v, want an error naming its type", err)
	}
	if _, err := s.GetJob(ctx, "c", "j"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("GetJob after a refused PutJobTx = %v", err)
	}
}

// txFile writes in tx what a file of a collection holds: the collection
// "n" (at most maxJobs jobs), its calendar "h" and the jobs a and b, b
// naming h.
func txFile(t *testing.T, s *scheduler.Scheduler, tx any, maxJobs int) error {
	t.Helper()
	ctx := context.Background()
	def := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: maxJobs}}}
	if _, err := s.PutCollectionTx(ctx, tx, "n", def, nil); err != nil {
		return fmt.Errorf("PutCollectionTx: %w", err)
	}
	cal := &scheduler.Calendar{Properties: scheduler.CalendarProperties{Dates: []string{"2030-12-25"}}}
	if _, err := s.PutCalendarTx(ctx, tx, "n", "h", cal, nil); err != nil {
		return fmt.Errorf("PutCalendarTx: %w", err)
	}
	if _, err := s.PutJobTx(ctx, tx, "n", "a", txJob(), nil); err != nil {
		return fmt.Errorf("PutJobTx(a): %w", err)
	}
	b := &scheduler.Job{Action: action.Action{Type: "Tx"}, Recurrence: &recurrence.Recurrence{Frequency: recurrence.Day, Extensions: &recurrence.Extensions{Calendar: "h"}}}
	if _, err := s.PutJobTx(ctx, tx, "n", "b", b, nil); err != nil {
		return fmt.Errorf("PutJobTx(b): %w", err)
	}
	return nil
}

// txCollectionWithJobs creates a collection, its calendar and its jobs in
// one transaction: rolled back, none of them exists; committed, all do.
func txCollectionWithJobs(t *testing.T, b *TxBackend) {
	ctx := context.Background()
	s, _ := txScheduler(t, b, false)
	tx := begin(t, b)
	if err := txFile(t, s, tx.Tx, 5); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if _, err := s.GetCollection(ctx, "n"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("GetCollection after rollback = %v, want ErrNotFound", err)
	}
	if _, err := s.GetJob(ctx, "n", "a"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("GetJob after rollback = %v, want ErrNotFound", err)
	}
	// The same writes again, committed.
	tx = begin(t, b)
	if err := txFile(t, s, tx.Tx, 5); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	c, err := s.GetCollection(ctx, "n")
	if err != nil || c.Definition.MaxJobCount() != 5 {
		t.Fatalf("GetCollection after commit = %+v, %v; want maxJobCount 5", c, err)
	}
	if _, err := s.GetCalendar(ctx, "n", "h"); err != nil {
		t.Errorf("GetCalendar after commit: %v", err)
	}
	if n := txCount(t, s, "n"); n != 2 {
		t.Errorf("%d jobs after commit, want 2", n)
	}
	// Written again as it is, in a transaction: the calendar is the
	// same, the jobs are replaced.
	tx = begin(t, b)
	if err := txFile(t, s, tx.Tx, 5); err != nil {
		t.Fatalf("the same writes over what is stored: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if c2, err := s.GetCollection(ctx, "n"); err != nil || c2.Version != c.Version+2 {
		t.Errorf("GetCollection after a second commit = %+v, %v; want version %d (the collection and its calendar written)", c2, err, c.Version+2)
	}
}

// txCollectionErrors: a replace refused for the jobs the collection holds,
// a stricter maxRecurrence and a changed calendar are refused in the
// transaction, which stays usable and writes nothing of them.
func txCollectionErrors(t *testing.T, b *TxBackend) {
	ctx := context.Background()
	s, _ := txScheduler(t, b, false)
	tx := begin(t, b)
	if err := txFile(t, s, tx.Tx, 5); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := s.GetCollection(ctx, "n")
	if err != nil {
		t.Fatal(err)
	}
	tx = begin(t, b)
	one := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 1}}}
	if _, err := s.PutCollectionTx(ctx, tx.Tx, "n", one, nil); !errors.Is(err, scheduler.ErrQuotaExceeded) {
		t.Errorf("PutCollectionTx with maxJobCount 1 over 2 jobs = %v, want ErrQuotaExceeded", err)
	}
	hourly := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 5,
		MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Hour, Interval: 2}}}}
	if _, err := s.PutCollectionTx(ctx, tx.Tx, "n", hourly, nil); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("PutCollectionTx with a stricter maxRecurrence = %v, want ErrUnsupported", err)
	}
	other := &scheduler.Calendar{Properties: scheduler.CalendarProperties{Dates: []string{"2030-12-26"}}}
	if _, err := s.PutCalendarTx(ctx, tx.Tx, "n", "h", other, nil); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("PutCalendarTx of a changed calendar = %v, want ErrUnsupported", err)
	}
	if _, err := s.PutCollectionTx(ctx, tx.Tx, "n", nil, &scheduler.PutCollectionOptions{IfMatch: "nope"}); !errors.Is(err, scheduler.ErrPreconditionFailed) {
		t.Errorf("PutCollectionTx with a wrong IfMatch = %v, want ErrPreconditionFailed", err)
	}
	// The transaction is still usable.
	if _, err := s.PutJobTx(ctx, tx.Tx, "n", "c", txJob(), nil); err != nil {
		t.Fatalf("PutJobTx after the errors: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	after, err := s.GetCollection(ctx, "n")
	if err != nil {
		t.Fatal(err)
	}
	if after.Version != before.Version || after.ETag != before.ETag {
		t.Errorf("collection after the refused writes: version %d, ETag %q; want %d, %q", after.Version, after.ETag, before.Version, before.ETag)
	}
	if n := txCount(t, s, "n"); n != 3 {
		t.Errorf("%d jobs, want 3", n)
	}
}

// txCollectionEnabledRuns: a job of a disabled collection runs once a
// transaction that enables the collection commits, waking a running
// scheduler that would otherwise sleep for an hour.
func txCollectionEnabledRuns(t *testing.T, b *TxBackend) {
	ctx := context.Background()
	s, ran := txScheduler(t, b, true)
	off := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{State: scheduler.CollectionDisabled}}
	if _, err := s.PutCollection(ctx, "c", off, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutJob(ctx, "c", "j", txJob(), nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the loop is asleep, for an hour
	select {
	case id := <-ran:
		t.Fatalf("%s ran in a disabled collection", id)
	default:
	}
	tx := begin(t, b)
	if _, err := s.PutCollectionTx(ctx, tx.Tx, "c", nil, nil); err != nil {
		t.Fatalf("PutCollectionTx(Enabled): %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	select {
	case id := <-ran:
		if id != "c/j" {
			t.Errorf("%s ran, want c/j", id)
		}
	case <-time.After(20 * time.Second):
		t.Error("c/j did not run within 20s of the commit that enabled its collection")
	}
}
