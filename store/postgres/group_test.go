package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/postgres"
)

// groupEnv is a store with collection c, a connection of its own to the
// store's schema (q, quoted), and the creates of jobs of c that a test
// runs on the store's pool, each on its own goroutine.
type groupEnv struct {
	t      *testing.T
	s      *postgres.Store
	conn   *pgx.Conn
	schema string
	q      string
	wg     sync.WaitGroup
}

func newGroupEnv(t *testing.T) *groupEnv {
	t.Helper()
	schema := newSchema(t)
	return groupEnvOf(t, schema, open(t, schema))
}

// groupEnvOf is newGroupEnv with store s in schema.
func groupEnvOf(t *testing.T, schema string, s *postgres.Store) *groupEnv {
	t.Helper()
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	c := &groupEnv{t: t, s: s, conn: conn, schema: schema, q: pgx.Identifier{schema}.Sanitize()}
	t.Cleanup(func() {
		c.wg.Wait()
		conn.Close(ctx)
	})
	return c
}

// exec runs sql on c's connection.
func (c *groupEnv) exec(sql string) {
	c.t.Helper()
	if _, err := c.conn.Exec(ctx, sql); err != nil {
		c.t.Fatal(err)
	}
}

// put creates job c/name with PutJob under ctx, and sends its error.
func (c *groupEnv) put(ctx context.Context, name string) <-chan error {
	done := make(chan error, 1)
	c.wg.Go(func() {
		done <- c.s.PutJob(ctx, &scheduler.JobRecord{Collection: "c", Name: name, Job: &scheduler.Job{},
			State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}})
	})
	return done
}

// until waits until cond holds of the groups of creates into c running
// and the creates waiting for one.
func (c *groupEnv) until(what string, cond func(running, waiting int) bool) {
	c.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if cond(c.s.Creates("c")) {
			return
		}
		if time.Now().After(deadline) {
			running, waiting := c.s.Creates("c")
			c.t.Fatalf("waiting for %s: %d groups run, %d creates wait", what, running, waiting)
		}
	}
}

// TestGroupedCreates: creates that wait for a group of creates into their
// collection run together in the next one; the server refusing one of
// them fails that one only, and one whose context ends while it waits
// leaves without creating its job.
func TestGroupedCreates(t *testing.T) {
	c := newGroupEnv(t)
	c.exec(`CREATE FUNCTION ` + c.q + `.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.name = 'refused' THEN RAISE EXCEPTION 'job refused'; END IF; RETURN NEW; END $$;
		CREATE TRIGGER refuse BEFORE INSERT ON ` + c.q + `.jobs FOR EACH ROW EXECUTE FUNCTION ` + c.q + `.refuse()`)
	// The collection's row locked: the creates wait for it.
	tx, err := c.conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT 1 FROM "+c.q+".collections WHERE name = 'c' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}

	errs := make(map[string]<-chan error)
	for _, name := range []string{"first", "second"} {
		errs[name] = c.put(ctx, name)
	}
	c.until("two groups", func(running, _ int) bool { return running == 2 })
	gone, cancel := context.WithCancel(ctx)
	errs["gone"] = c.put(gone, "gone")
	c.until("a create waiting", func(_, waiting int) bool { return waiting == 1 })
	cancel()
	c.until("the create given up", func(_, waiting int) bool { return waiting == 0 })
	names := []string{"a", "b", "refused", "c", "d"}
	for _, name := range names {
		errs[name] = c.put(ctx, name)
	}
	c.until("the group's creates waiting", func(_, waiting int) bool { return waiting == len(names) })
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(map[string]error)
	for name, done := range errs {
		got[name] = <-done
	}

	for _, name := range []string{"first", "second", "a", "b", "c", "d"} {
		if err := got[name]; err != nil {
			t.Errorf("PutJob(c/%s): %v", name, err)
		}
		if _, err := c.s.GetJob(ctx, "c", name); err != nil {
			t.Errorf("GetJob(c/%s) after its put: %v", name, err)
		}
	}
	if err := got["refused"]; err == nil || !strings.Contains(err.Error(), "job refused") {
		t.Errorf("PutJob(c/refused) = %v, want the trigger's error", err)
	}
	if err := got["gone"]; !errors.Is(err, context.Canceled) {
		t.Errorf("PutJob(c/gone) with its context canceled while it waited = %v, want context.Canceled", err)
	}
	for _, name := range []string{"refused", "gone"} {
		if _, err := c.s.GetJob(ctx, "c", name); !errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("GetJob(c/%s) after its put failed = %v, want ErrNotFound", name, err)
		}
	}
	if running, waiting := c.s.Creates("c"); running != 0 || waiting != 0 {
		t.Errorf("after the puts: %d groups run, %d creates wait; want none", running, waiting)
	}
}

// heldAtCommit makes the commit of a transaction that created a job of c
// whose name starts with "held" wait until the returned func runs (for
// an advisory lock that c's connection holds), and the commit of one
// that created job "refused" fail, by a deferred trigger.
func (c *groupEnv) heldAtCommit() (release func()) {
	c.t.Helper()
	c.exec(`CREATE FUNCTION ` + c.q + `.at_commit() RETURNS trigger LANGUAGE plpgsql SET lock_timeout = 0 AS $$
		BEGIN
			IF NEW.name LIKE 'held%' THEN PERFORM pg_advisory_xact_lock_shared(hashtext(TG_TABLE_SCHEMA)); END IF;
			IF NEW.name = 'refused' THEN RAISE EXCEPTION 'job refused at commit'; END IF;
			RETURN NULL;
		END $$;
		CREATE CONSTRAINT TRIGGER at_commit AFTER INSERT ON ` + c.q + `.jobs DEFERRABLE INITIALLY DEFERRED
			FOR EACH ROW EXECUTE FUNCTION ` + c.q + `.at_commit()`)
	if _, err := c.conn.Exec(ctx, "SELECT pg_advisory_lock(hashtext($1))", c.schema); err != nil {
		c.t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if _, err := c.conn.Exec(ctx, "SELECT pg_advisory_unlock(hashtext($1))", c.schema); err != nil {
				c.t.Error(err)
			}
		})
	}
	c.t.Cleanup(release)
	return release
}

// heldCommits waits until n commits wait in heldAtCommit.
func (c *groupEnv) heldCommits(n int) {
	c.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		var got int
		if err := c.conn.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = hashtext($1)::oid", c.schema).Scan(&got); err != nil {
			c.t.Fatal(err)
		}
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("waiting for %d commits held: %d", n, got)
		}
	}
}

// lockCollection locks c's row until the returned transaction ends: the
// creates into c wait for it.
func (c *groupEnv) lockCollection() pgx.Tx {
	c.t.Helper()
	conn, err := pgx.Connect(ctx, dsn(c.t))
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { conn.Close(ctx) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, "SELECT 1 FROM "+c.q+".collections WHERE name = 'c' FOR UPDATE"); err != nil {
		c.t.Fatal(err)
	}
	return tx
}

// groupOf runs the creates of names as one group: the collection's row
// locked, two creates of other jobs (x1, x2) take the two groups and
// wait for it, and names wait for a group; then the row is unlocked.
func (c *groupEnv) groupOf(names ...string) map[string]<-chan error {
	c.t.Helper()
	tx := c.lockCollection()
	errs := make(map[string]<-chan error)
	for _, name := range []string{"x1", "x2"} {
		errs[name] = c.put(ctx, name)
	}
	c.until("two groups", func(running, _ int) bool { return running == 2 })
	for _, name := range names {
		errs[name] = c.put(ctx, name)
		c.until(name+" waiting", func(_, waiting int) bool { return waiting == len(errs)-2 })
	}
	if err := tx.Rollback(ctx); err != nil {
		c.t.Fatal(err)
	}
	return errs
}

// TestGroupedCreatesExecModes: groups of creates, and creates alone, run
// on a host's pool of each query exec mode, whether or not its
// connections prepare statements; in a group, the create of a job that
// exists fails with ErrConflict, and the others are created.
func TestGroupedCreatesExecModes(t *testing.T) {
	for _, mode := range execModes {
		t.Run(mode.String(), func(t *testing.T) {
			cfg, err := pgxpool.ParseConfig(dsn(t))
			if err != nil {
				t.Fatal(err)
			}
			cfg.ConnConfig.DefaultQueryExecMode = mode
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			schema := newSchema(t)
			s, err := postgres.New(ctx, pool, &postgres.Options{Schema: schema})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			c := groupEnvOf(t, schema, s)
			c.s.SetCreatesWait("c", time.Hour)
			if err := <-c.put(ctx, "alone"); err != nil {
				t.Fatalf("PutJob(c/alone): %v", err)
			}
			errs := c.groupOf("a", "b", "alone")
			for name, done := range errs {
				err := <-done
				if name == "alone" {
					if !errors.Is(err, scheduler.ErrConflict) {
						t.Errorf("PutJob(c/alone) again, in a group = %v, want ErrConflict", err)
					}
					continue
				}
				if err != nil {
					t.Errorf("PutJob(c/%s): %v", name, err)
				}
			}
			for _, name := range []string{"x1", "x2", "a", "b"} {
				if _, err := c.s.GetJob(ctx, "c", name); err != nil {
					t.Errorf("GetJob(c/%s): %v", name, err)
				}
			}
		})
	}
}

// TestGroupCommitRefused: when the server refuses a group's commit, each
// create of the group runs again alone: the one refused fails, the
// others are created once. A create whose context ends while its group
// commits returns when the group ends, with the group's outcome.
func TestGroupCommitRefused(t *testing.T) {
	c := newGroupEnv(t)
	c.s.SetCreatesWait("c", time.Hour)
	release := c.heldAtCommit()
	errs := c.groupOf("a", "refused", "b")
	for name, done := range errs {
		err := <-done
		if name == "refused" {
			if err == nil || !strings.Contains(err.Error(), "job refused at commit") {
				t.Errorf("PutJob(c/refused) = %v, want the trigger's error", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("PutJob(c/%s): %v", name, err)
		}
	}
	for _, name := range []string{"a", "b"} {
		if _, err := c.s.GetJob(ctx, "c", name); err != nil {
			t.Errorf("GetJob(c/%s): %v", name, err)
		}
	}
	if _, err := c.s.GetJob(ctx, "c", "refused"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("GetJob(c/refused) after its commit was refused = %v, want ErrNotFound", err)
	}

	// A put whose context ends while its group commits.
	gone, cancel := context.WithCancel(ctx)
	defer cancel()
	tx := c.lockCollection()
	errs = map[string]<-chan error{"x3": c.put(ctx, "x3"), "x4": c.put(ctx, "x4")}
	c.until("two groups", func(running, _ int) bool { return running == 2 })
	errs["held-gone"] = c.put(gone, "held-gone")
	errs["held-stays"] = c.put(ctx, "held-stays")
	c.until("two creates waiting", func(_, waiting int) bool { return waiting == 2 })
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	c.heldCommits(1)
	cancel()
	release()
	for name, done := range errs {
		if err := <-done; err != nil {
			t.Errorf("PutJob(c/%s): %v", name, err)
		}
		if _, err := c.s.GetJob(ctx, "c", name); err != nil {
			t.Errorf("GetJob(c/%s): %v", name, err)
		}
	}
	if running, waiting := c.s.Creates("c"); running != 0 || waiting != 0 {
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
			c := newGroupEnv(t)
			c.exec(`CREATE FUNCTION ` + c.q + `.slow() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN IF NEW.name IN ('a', 'b') THEN PERFORM pg_sleep(1); END IF; RETURN NEW; END $$;
				CREATE TRIGGER slow BEFORE INSERT ON ` + c.q + `.jobs FOR EACH ROW EXECUTE FUNCTION ` + c.q + `.slow()`)
			host := hostCreated(t, c.s, "y")
			zctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			var ys []<-chan error
			var z <-chan error
			if inGroup {
				// The two groups running are slow creates of other jobs (the
				// trigger sleeps); z waits with a create of y until they
				// end, as long as it takes, and then runs in y's group.
				c.s.SetCreatesWait("c", time.Hour)
				ys = append(ys, c.put(ctx, "a"), c.put(ctx, "b"))
				c.until("two groups", func(running, _ int) bool { return running == 2 })
				ys = append(ys, c.put(ctx, "y"))
				c.until("y waiting", func(_, waiting int) bool { return waiting == 1 })
				z = c.put(zctx, "z")
				c.until("z waiting", func(_, waiting int) bool { return waiting == 2 })
			} else {
				ys = append(ys, c.put(ctx, "y"), c.put(ctx, "y"))
				c.until("two groups", func(running, _ int) bool { return running == 2 })
				z = c.put(zctx, "z")
			}
			if err := <-z; err != nil {
				t.Errorf("PutJob(c/z), while creates of y wait for the host's transaction: %v", err)
			}
			if err := host.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			for _, y := range ys {
				<-y // the host's y exists: the pool's creates of y fail, each with its own error
			}
			for _, name := range []string{"y", "z"} {
				if _, err := c.s.GetJob(ctx, "c", name); err != nil {
					t.Errorf("GetJob(c/%s): %v", name, err)
				}
			}
		})
	}
}

// TestGroupersOfDeletedCollections: deleting a collection forgets its
// grouper of creates, so a store's groupers are those of the collections
// it created jobs into that still exist; a create into the collection
// created again gets a new one.
func TestGroupersOfDeletedCollections(t *testing.T) {
	c := newGroupEnv(t)
	for _, name := range []string{"a", "b"} {
		if err := <-c.put(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "d"}); err != nil {
		t.Fatal(err)
	}
	put := func(collection string) {
		t.Helper()
		if err := c.s.PutJob(ctx, &scheduler.JobRecord{Collection: collection, Name: "j", Job: &scheduler.Job{},
			State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}); err != nil {
			t.Fatal(err)
		}
	}
	put("d")
	if n := c.s.Groupers(); n != 2 {
		t.Fatalf("after creates into c and d: %d groupers, want 2", n)
	}
	if err := c.s.DeleteCollection(ctx, "d", ""); err != nil {
		t.Fatal(err)
	}
	if n := c.s.Groupers(); n != 1 {
		t.Errorf("after deleting d: %d groupers, want 1", n)
	}
	if err := c.s.DeleteCollection(ctx, "d", ""); !errors.As(err, new(*scheduler.NotFoundError)) {
		t.Errorf("deleting d again: %v, want NotFoundError", err)
	}
	if err := c.s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "d"}); err != nil {
		t.Fatal(err)
	}
	put("d")
	if n := c.s.Groupers(); n != 2 {
		t.Errorf("after creating d again and a job in it: %d groupers, want 2", n)
	}
}

// heldAtInsert makes the create of a job of c whose name starts with
// "slow" wait before it inserts, until the returned func runs (for an
// advisory lock that c's connection holds).
func (c *groupEnv) heldAtInsert() (release func()) {
	c.t.Helper()
	c.exec(`CREATE FUNCTION ` + c.q + `.at_insert() RETURNS trigger LANGUAGE plpgsql SET lock_timeout = 0 AS $$
		BEGIN
			IF NEW.name LIKE 'slow%' THEN PERFORM pg_advisory_xact_lock_shared(hashtext(TG_TABLE_SCHEMA || '.slow')); END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER at_insert BEFORE INSERT ON ` + c.q + `.jobs FOR EACH ROW EXECUTE FUNCTION ` + c.q + `.at_insert()`)
	if _, err := c.conn.Exec(ctx, "SELECT pg_advisory_lock(hashtext($1 || '.slow'))", c.schema); err != nil {
		c.t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if _, err := c.conn.Exec(ctx, "SELECT pg_advisory_unlock(hashtext($1 || '.slow'))", c.schema); err != nil {
				c.t.Error(err)
			}
		})
	}
	c.t.Cleanup(release)
	return release
}

// TestGroupPlaceHeld: when a group ends while another runs, its place is
// held for the creates that come back, until the group they should make
// has gathered: a create that arrives first waits for the next one, and
// both commit in one transaction, instead of the first taking the place
// alone. A create gathering waits no longer than the group beside it.
func TestGroupPlaceHeld(t *testing.T) {
	c := newGroupEnv(t)
	c.s.SetCreatesWait("c", time.Hour)
	releaseCommit := c.heldAtCommit()
	releaseInsert := c.heldAtInsert()
	errs := map[string]<-chan error{"held": c.put(ctx, "held")}
	c.heldCommits(1)
	errs["slow"] = c.put(ctx, "slow")
	c.until("two groups", func(running, _ int) bool { return running == 2 })
	errs["a1"] = c.put(ctx, "a1")
	c.until("a1 waiting", func(_, waiting int) bool { return waiting == 1 })

	// slow's group ends beside held's: its place is held for two creates,
	// a1 and the next.
	releaseInsert()
	if err := <-errs["slow"]; err != nil {
		t.Fatalf("PutJob(c/slow): %v", err)
	}
	delete(errs, "slow")
	if running, waiting := c.s.Creates("c"); running != 1 || waiting != 1 {
		t.Errorf("after slow's group ended beside held's: %d groups run, %d creates wait; want 1 and a1", running, waiting)
	}
	errs["a2"] = c.put(ctx, "a2")
	for _, name := range []string{"a1", "a2"} {
		if err := <-errs[name]; err != nil {
			t.Errorf("PutJob(c/%s): %v", name, err)
		}
		delete(errs, name)
	}
	var txs int
	if err := c.conn.QueryRow(ctx, "SELECT count(DISTINCT xmin::text) FROM "+c.q+".jobs WHERE name IN ('a1', 'a2')").Scan(&txs); err != nil {
		t.Fatal(err)
	}
	if txs != 1 {
		t.Errorf("a1 and a2 created in %d transactions, want 1 (one group)", txs)
	}

	// The place is held again for two: a3 alone waits until held's group
	// ends.
	errs["a3"] = c.put(ctx, "a3")
	c.until("a3 waiting", func(_, waiting int) bool { return waiting == 1 })
	if running, _ := c.s.Creates("c"); running != 1 {
		t.Errorf("a3 waiting for a second create: %d groups run, want 1 (held's)", running)
	}
	releaseCommit()
	for name, done := range errs {
		if err := <-done; err != nil {
			t.Errorf("PutJob(c/%s): %v", name, err)
		}
	}
	for _, name := range []string{"held", "slow", "a1", "a2", "a3"} {
		if _, err := c.s.GetJob(ctx, "c", name); err != nil {
			t.Errorf("GetJob(c/%s): %v", name, err)
		}
	}
	if running, waiting := c.s.Creates("c"); running != 0 || waiting != 0 {
		t.Errorf("after the puts: %d groups run, %d creates wait; want none", running, waiting)
	}
}

// TestGroupPlaceHeldBesideStuckCreate: a place held beside a group that
// runs long (here a create of job y that waits for a host's transaction
// that created y) is given up when a create has waited groupWait in it:
// the creates waiting go in it. The place is then held for no more
// creates than come back, so a lone writer's next puts go at once,
// however long the create of y waits, even when a create would wait an
// hour for a group.
func TestGroupPlaceHeldBesideStuckCreate(t *testing.T) {
	c := newGroupEnv(t)
	puts, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel) // runs before the cleanup that waits for the puts
	releaseCommit := c.heldAtCommit()
	host := hostCreated(t, c.s, "y")
	y := c.put(puts, "y")
	c.until("y running", func(running, _ int) bool { return running == 1 })
	held := c.put(puts, "held")
	c.heldCommits(1)
	c.until("two groups", func(running, _ int) bool { return running == 2 })
	a1 := c.put(puts, "a1")
	c.until("a1 waiting", func(_, waiting int) bool { return waiting == 1 })

	// held's group ends beside y's while a1 waits: its place is held for
	// a1 and one more, until a1 has waited groupWait.
	releaseCommit()
	for name, done := range map[string]<-chan error{"held": held, "a1": a1} {
		if err := <-done; err != nil {
			t.Fatalf("PutJob(c/%s): %v", name, err)
		}
	}
	if n := c.s.CreatesHeld("c"); n != 1 {
		t.Errorf("after a1 ran beside y: a place held for %d creates, want 1 (a1's writer)", n)
	}
	c.s.SetCreatesWait("c", time.Hour)
	for i := range 3 {
		name := fmt.Sprintf("w%d", i)
		select {
		case err := <-c.put(puts, name):
			if err != nil {
				t.Fatalf("PutJob(c/%s): %v", name, err)
			}
		case <-time.After(10 * time.Second):
			running, waiting := c.s.Creates("c")
			t.Fatalf("PutJob(c/%s), the only writer beside a create that waits for a lock, still waits after 10s: %d groups run, %d creates wait, a place held for %d",
				name, running, waiting, c.s.CreatesHeld("c"))
		}
	}
	if err := host.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-y; err != nil {
		t.Fatalf("PutJob(c/y) after the host's transaction rolled back: %v", err)
	}
	for _, name := range []string{"y", "held", "a1", "w0", "w1", "w2"} {
		if _, err := c.s.GetJob(ctx, "c", name); err != nil {
			t.Errorf("GetJob(c/%s): %v", name, err)
		}
	}
	if running, waiting := c.s.Creates("c"); running != 0 || waiting != 0 {
		t.Errorf("after the puts: %d groups run, %d creates wait; want none", running, waiting)
	}
}

// TestGroupsOfWritersThatPause: writers that pause at random, and whose
// contexts end at random, while they put: every put returns, each job
// whose put succeeded exists, a put fails only when its context ended and
// with a context's error, and at the end no group runs, no create waits and no place is held.
func TestGroupsOfWritersThatPause(t *testing.T) {
	c := newGroupEnv(t)
	const writers, puts = 8, 100
	col, err := c.s.GetCollection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	col.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: writers * puts}
	if err := c.s.PutCollection(ctx, col); err != nil {
		t.Fatal(err)
	}
	created := make([][]string, writers)
	errs := make(chan error, writers*puts)
	var wg sync.WaitGroup
	for w := range writers {
		r := rand.New(rand.NewPCG(uint64(w), 1))
		wg.Go(func() {
			for i := range puts {
				if r.IntN(3) == 0 {
					time.Sleep(time.Duration(r.IntN(2000)) * time.Microsecond)
				}
				pctx, cancel := ctx, context.CancelFunc(func() {})
				if r.IntN(2) == 0 {
					pctx, cancel = context.WithTimeout(ctx, time.Millisecond+time.Duration(r.IntN(4000))*time.Microsecond)
				}
				name := fmt.Sprintf("w%d-%d", w, i)
				err := c.s.PutJob(pctx, &scheduler.JobRecord{Collection: "c", Name: name, Job: &scheduler.Job{},
					State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}})
				ended := pctx.Err() != nil
				cancel()
				switch {
				case err == nil:
					created[w] = append(created[w], name)
				case !ended || !(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)):
					errs <- fmt.Errorf("PutJob(c/%s) (its context ended: %t): %w", name, ended, err)
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		running, waiting := c.s.Creates("c")
		t.Fatalf("puts still running after 2 minutes: %d groups run, %d creates wait, a place held for %d", running, waiting, c.s.CreatesHeld("c"))
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n int
	for _, names := range created {
		for _, name := range names {
			n++
			if _, err := c.s.GetJob(ctx, "c", name); err != nil {
				t.Errorf("GetJob(c/%s) after its put succeeded: %v", name, err)
			}
		}
	}
	t.Logf("%d of %d puts succeeded", n, writers*puts)
	if running, waiting := c.s.Creates("c"); running != 0 || waiting != 0 || c.s.CreatesHeld("c") != 0 {
		t.Errorf("after the puts: %d groups run, %d creates wait, a place held for %d; want none", running, waiting, c.s.CreatesHeld("c"))
	}
}

// TestGroupOfCallersThatAllGaveUp: when every create of a group gives up
// while the group runs (their contexts' deadlines pass), the group's
// statements are cancelled, and each caller learns its own context's end,
// as it would of its statement run alone: here a deadline, not the
// cancellation of the group's own context. As of a statement cancelled
// late, the group may have committed (here the server runs it once the
// insert's lock is free): both jobs, or neither.
func TestGroupOfCallersThatAllGaveUp(t *testing.T) {
	c := newGroupEnv(t)
	c.s.SetCreatesWait("c", time.Hour)
	releaseCommit := c.heldAtCommit()
	releaseInsert := c.heldAtInsert()
	errs := map[string]<-chan error{"held1": c.put(ctx, "held1")}
	c.heldCommits(1)
	errs["held2"] = c.put(ctx, "held2")
	c.heldCommits(2)
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	slow := map[string]<-chan error{"slow3": c.put(dctx, "slow3"), "slow4": c.put(dctx, "slow4")}
	c.until("slow3 and slow4 waiting", func(_, waiting int) bool { return waiting == 2 })
	// held1 and held2 commit; slow3 and slow4 go as one group, which waits
	// at its insert until both have given up.
	releaseCommit()
	for name, done := range errs {
		if err := <-done; err != nil {
			t.Errorf("PutJob(c/%s): %v", name, err)
		}
	}
	for name, done := range slow {
		err := <-done
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("PutJob(c/%s) = %v, want its context's deadline exceeded", name, err)
		}
	}
	releaseInsert()
	var n int
	if err := c.conn.QueryRow(ctx, "SELECT count(*) FROM "+c.q+".jobs WHERE name IN ('slow3', 'slow4')").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 1 {
		t.Errorf("one of slow3 and slow4 created, want both or neither (one group)")
	}
}
