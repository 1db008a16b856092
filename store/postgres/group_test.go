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
	"github.com/jobclock/scheduler/store/postgres"
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

// hostCreated creates job c/name in a host transaction on its own
// connection, left open until the test ends, so that a create of the same
// name on the store's pool waits for it.
func hostCreated(t *testing.T, s *postgres.Store, name string) pgx.Tx {
	t.Helper()
	conn, err := pgx.Connect(ctx, dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	view, err := s.InTx(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	if err := view.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: name, Job: &scheduler.Job{},
		State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}); err != nil {
		t.Fatal(err)
	}
	return tx
}

// TestGroupedCreatesNotHeldByLocks: a create is not held up for long
// behind creates of other jobs that wait for a lock, whatever holds it:
// here a host's transaction that created job y and, before it commits,
// puts job z on the store's pool (had z waited for the creates of y, the
// host would wait for itself). Both while z waits for a group (two creates
// of y run, each alone), and when z runs in a group with a create of y.
func TestGroupedCreatesNotHeldByLocks(t *testing.T) {
	for _, inGroup := range []bool{false, true} {
		name := "waiting for a group"
		if inGroup {
			name = "in a group"
		}
		t.Run(name, func(t *testing.T) {
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
			if _, err := conn.Exec(ctx, `CREATE FUNCTION `+q+`.slow() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN IF NEW.name IN ('a', 'b') THEN PERFORM pg_sleep(1); END IF; RETURN NEW; END $$;
				CREATE TRIGGER slow BEFORE INSERT ON `+q+`.jobs FOR EACH ROW EXECUTE FUNCTION `+q+`.slow()`); err != nil {
				t.Fatal(err)
			}
			host := hostCreated(t, s, "y")
			var wg sync.WaitGroup
			defer wg.Wait()
			put := func(ctx context.Context, name string) <-chan error {
				done := make(chan error, 1)
				wg.Go(func() {
					done <- s.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: name, Job: &scheduler.Job{},
						State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}})
				})
				return done
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
			var ys []<-chan error
			if inGroup {
				// The two groups running are slow creates of other jobs (the
				// trigger sleeps); z waits with a create of y until they
				// end, as long as it takes, and then runs in y's group.
				s.SetCreatesWait("c", time.Hour)
				ys = append(ys, put(ctx, "a"), put(ctx, "b"))
				until("two groups", func(running, _ int) bool { return running == 2 })
				ys = append(ys, put(ctx, "y"))
				until("y waiting", func(_, waiting int) bool { return waiting == 1 })
				zctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				z := put(zctx, "z")
				until("z waiting", func(_, waiting int) bool { return waiting == 2 })
				if err := <-z; err != nil {
					t.Errorf("PutJob(c/z) in a group with a create of y, which waits for the host's transaction: %v", err)
				}
			} else {
				ys = append(ys, put(ctx, "y"), put(ctx, "y"))
				until("two groups", func(running, _ int) bool { return running == 2 })
				zctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				if err := <-put(zctx, "z"); err != nil {
					t.Errorf("PutJob(c/z) while two creates of y wait for the host's transaction: %v", err)
				}
			}
			if err := host.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			for _, y := range ys {
				<-y // the host's y exists: the pool's creates of y fail, each with its own error
			}
			for _, name := range []string{"y", "z"} {
				if _, err := s.GetJob(ctx, "c", name); err != nil {
					t.Errorf("GetJob(c/%s): %v", name, err)
				}
			}
		})
	}
}
