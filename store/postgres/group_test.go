package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
)

// TestGroupedCreates: creates that wait for a group of creates into their
// collection run together in the next one; the server refusing one of
// them fails that one only, and one whose context ends while it waits
// leaves without creating its job.
func TestGroupedCreates(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	q := pgx.Identifier{schema}.Sanitize()
	if _, err := conn.Exec(ctx, `CREATE FUNCTION `+q+`.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.name = 'refused' THEN RAISE EXCEPTION 'job refused'; END IF; RETURN NEW; END $$;
		CREATE TRIGGER refuse BEFORE INSERT ON `+q+`.jobs FOR EACH ROW EXECUTE FUNCTION `+q+`.refuse()`); err != nil {
		t.Fatal(err)
	}
	// The collection's row locked: the creates wait for it.
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT 1 FROM "+q+".collections WHERE name = 'c' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	errs := make(map[string]error)
	var mu sync.Mutex
	put := func(ctx context.Context, name string) {
		wg.Go(func() {
			err := s.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: name, Job: &scheduler.Job{},
				State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}})
			mu.Lock()
			errs[name] = err
			mu.Unlock()
		})
	}
	until := func(what string, cond func(running, waiting int) bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			if cond(s.Creates("c")) {
				return
			}
			if time.Now().After(deadline) {
				running, waiting := s.Creates("c")
				t.Fatalf("waiting for %s: %d groups run, %d creates wait", what, running, waiting)
			}
		}
	}
	put(ctx, "first")
	put(ctx, "second")
	until("two groups", func(running, _ int) bool { return running == 2 })
	gone, cancel := context.WithCancel(ctx)
	put(gone, "gone")
	until("a create waiting", func(_, waiting int) bool { return waiting == 1 })
	cancel()
	until("the create given up", func(_, waiting int) bool { return waiting == 0 })
	names := []string{"a", "b", "refused", "c", "d"}
	for _, name := range names {
		put(ctx, name)
	}
	until("the group's creates waiting", func(_, waiting int) bool { return waiting == len(names) })
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	for _, name := range []string{"first", "second", "a", "b", "c", "d"} {
		if err := errs[name]; err != nil {
			t.Errorf("PutJob(c/%s): %v", name, err)
		}
		if _, err := s.GetJob(ctx, "c", name); err != nil {
			t.Errorf("GetJob(c/%s) after its put: %v", name, err)
		}
	}
	if err := errs["refused"]; err == nil || !strings.Contains(err.Error(), "job refused") {
		t.Errorf("PutJob(c/refused) = %v, want the trigger's error", err)
	}
	if err := errs["gone"]; !errors.Is(err, context.Canceled) {
		t.Errorf("PutJob(c/gone) with its context canceled while it waited = %v, want context.Canceled", err)
	}
	for _, name := range []string{"refused", "gone"} {
		if _, err := s.GetJob(ctx, "c", name); !errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("GetJob(c/%s) after its put failed = %v, want ErrNotFound", name, err)
		}
	}
	if running, waiting := s.Creates("c"); running != 0 || waiting != 0 {
		t.Errorf("after the puts: %d groups run, %d creates wait; want none", running, waiting)
	}
}
