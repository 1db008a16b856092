package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/store/postgres"
)

// TestPutOverStaleCollection: a Scheduler creates jobs over the record of
// their collection that its last put read, without reading it again
// (scheduler.JobCreator); when another instance wrote the collection
// since, the create writes nothing and the put reads the collection and
// obeys its stored maxJobCount and maxRecurrence.
func TestPutOverStaleCollection(t *testing.T) {
	schema := newSchema(t)
	a, err := scheduler.New(open(t, schema), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := scheduler.New(open(t, schema), nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	once := &scheduler.Job{StartTime: &start, Action: action.Action{Type: action.HTTP,
		Request: &action.HTTPRequest{URI: "http://127.0.0.1/", Method: "GET"}}}
	minutely := once.Clone()
	minutely.Recurrence = &recurrence.Recurrence{Frequency: recurrence.Minute, Interval: 1}
	quota := func(q scheduler.Quota) *scheduler.JobCollection {
		return &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &q}}
	}
	absent := func(step, name string) {
		t.Helper()
		if j, err := a.GetJob(ctx, "c", name); !errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("%s: GetJob(c/%s) = %v, %v; want ErrNotFound", step, name, j, err)
		}
	}
	if _, err := a.PutCollection(ctx, "c", quota(scheduler.Quota{MaxJobCount: 3}), nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"j0", "j1"} {
		if _, err := a.PutJob(ctx, "c", name, once, nil); err != nil {
			t.Fatalf("PutJob(c/%s): %v", name, err)
		}
	}

	if _, err := b.PutCollection(ctx, "c", quota(scheduler.Quota{MaxJobCount: 2}), nil); err != nil {
		t.Fatal(err)
	}
	// As many tries as the old quota has places: one of them is free.
	for _, name := range []string{"x0", "x1", "x2"} {
		_, err = a.PutJob(ctx, "c", name, once, nil)
		if !errors.Is(err, scheduler.ErrQuotaExceeded) {
			t.Errorf("PutJob(c/%s) after another instance lowered maxJobCount to 2: %v, want ErrQuotaExceeded", name, err)
		}
		absent("maxJobCount lowered", name)
	}

	if _, err := b.PutCollection(ctx, "c", quota(scheduler.Quota{MaxJobCount: 5, MaxRecurrence: &scheduler.MaxRecurrence{Frequency: recurrence.Hour, Interval: 1}}), nil); err != nil {
		t.Fatal(err)
	}
	_, err = a.PutJob(ctx, "c", "m", minutely, nil)
	if !errors.Is(err, scheduler.ErrQuotaExceeded) {
		t.Errorf("PutJob(c/m, every minute) after another instance set maxRecurrence to an hour: %v, want ErrQuotaExceeded", err)
	}
	absent("maxRecurrence set", "m")
	if _, err := a.PutJob(ctx, "c", "j2", once, nil); err != nil {
		t.Errorf("PutJob(c/j2) under maxJobCount 5: %v", err)
	}

	// Deleted and created again by the other instance.
	if err := b.DeleteCollection(ctx, "c", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.PutCollection(ctx, "c", quota(scheduler.Quota{MaxJobCount: 1}), nil); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"k0", "k1"} {
		_, err := a.PutJob(ctx, "c", name, once, nil)
		if i == 0 && err != nil {
			t.Errorf("PutJob(c/%s) into the collection created again: %v", name, err)
		}
		if i == 1 && !errors.Is(err, scheduler.ErrQuotaExceeded) {
			t.Errorf("PutJob(c/%s) into the collection created again with maxJobCount 1: %v, want ErrQuotaExceeded", name, err)
		}
	}
	absent("collection created again", "k1")
}

// TestDeleteCollectionTakesLateCreates: a collection deleted while a
// host's transaction that created a job in it is open takes that job
// too, once the transaction commits (jobs have no foreign key to
// collections: the store deletes them).
func TestDeleteCollectionTakesLateCreates(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	putQuotaCollection(t, s, "c", 10)
	if err := s.PutJob(ctx, newJobRecord("c", "before")); err != nil {
		t.Fatal(err)
	}
	tx, err := hostPool(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	v, err := s.InTx(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.PutJob(ctx, newJobRecord("c", "late")); err != nil {
		t.Fatal(err)
	}
	deleted := make(chan error, 1)
	go func() { deleted <- s.DeleteCollection(ctx, "c", "") }()
	select {
	case err := <-deleted:
		t.Fatalf("DeleteCollection returned (%v) while a create in the collection was not committed", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-deleted; err != nil {
		t.Fatalf("DeleteCollection: %v", err)
	}
	var n int
	if err := connect(t).QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema}.Sanitize()+".jobs").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d jobs left after DeleteCollection, want 0", n)
	}
	putQuotaCollection(t, s, "c", 10)
	for _, name := range []string{"before", "late"} {
		if j, err := s.GetJob(ctx, "c", name); !errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("GetJob(c/%s) in the collection created again = %v, %v; want ErrNotFound", name, j, err)
		}
	}
}

// creates counts the creates a Scheduler tries without reading first.
type creates struct {
	*postgres.Store
	n int
}

func (c *creates) CreateJob(ctx context.Context, col *scheduler.CollectionRecord, j *scheduler.JobRecord) error {
	c.n++
	return c.Store.CreateJob(ctx, col, j)
}

// TestReplaceReadsFirst: puts that replace jobs do not try a create
// first, except the first after a create, so a replacement costs no
// failed statement while only replacements come.
func TestReplaceReadsFirst(t *testing.T) {
	st := &creates{Store: open(t, newSchema(t))}
	s, err := scheduler.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutCollection(ctx, "c", &scheduler.JobCollection{}, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	job := &scheduler.Job{StartTime: &start, Action: action.Action{Type: action.HTTP,
		Request: &action.HTTPRequest{URI: "http://127.0.0.1/", Method: "GET"}}}
	put := func(name string, want int) {
		t.Helper()
		if _, err := s.PutJob(ctx, "c", name, job, nil); err != nil {
			t.Fatalf("PutJob(c/%s): %v", name, err)
		}
		if st.n != want {
			t.Errorf("after PutJob(c/%s): %d creates tried, want %d", name, st.n, want)
		}
	}
	put("a", 0) // nothing known of c yet: read, then create
	put("b", 1) // created over the record read for a
	put("a", 2) // the create fails (a exists): read, replace
	put("b", 2) // replacements read first
	put("a", 2)
	put("c", 2) // read first too (the last put was a replacement)
	put("d", 3) // created without reading again
}
