package postgres_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
)

// jobCounts returns, for each collection of the schema, the job count
// its row keeps and the number of its jobs.
func jobCounts(t *testing.T, schema string) map[string][2]int {
	t.Helper()
	q := pgx.Identifier{schema}.Sanitize()
	rows, err := connect(t).Query(ctx, "SELECT c.name, c.job_count, (SELECT count(*) FROM "+q+".jobs j WHERE j.collection = c.name) FROM "+q+".collections c")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]int{}
	for rows.Next() {
		var name string
		var kept, n int
		if err := rows.Scan(&name, &kept, &n); err != nil {
			t.Fatal(err)
		}
		out[name] = [2]int{kept, n}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func putQuotaCollection(t *testing.T, s scheduler.Store, name string, limit int) {
	t.Helper()
	c := &scheduler.CollectionRecord{Name: name}
	c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: limit}
	if err := s.PutCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
}

func newJobRecord(coll, name string) *scheduler.JobRecord {
	return &scheduler.JobRecord{Collection: coll, Name: name, Job: &scheduler.Job{}, State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}
}

// TestQuotaRace: creates racing for the last place of a collection, from
// two instances and through hosts' transactions, admit exactly one.
func TestQuotaRace(t *testing.T) {
	schema := newSchema(t)
	s, s2 := open(t, schema), open(t, schema)
	pool := hostPool(t)
	for round := range 3 {
		coll := fmt.Sprintf("c%d", round)
		putQuotaCollection(t, s, coll, 5)
		for i := range 4 {
			if err := s.PutJob(ctx, newJobRecord(coll, fmt.Sprintf("old%d", i))); err != nil {
				t.Fatal(err)
			}
		}
		const racers = 12
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				j := newJobRecord(coll, fmt.Sprintf("new%02d", i))
				switch i % 3 {
				case 0:
					errs[i] = s.PutJob(ctx, j)
				case 1:
					errs[i] = s2.PutJob(ctx, j)
				default:
					tx, err := pool.Begin(ctx)
					if err != nil {
						errs[i] = err
						return
					}
					defer tx.Rollback(ctx)
					v, err := s.InTx(ctx, tx)
					if err == nil {
						err = v.PutJob(ctx, j)
					}
					if err == nil {
						err = tx.Commit(ctx)
					}
					errs[i] = err
				}
			})
		}
		wg.Wait()
		ok := 0
		for i, err := range errs {
			var qe *scheduler.QuotaError
			switch {
			case err == nil:
				ok++
			case !errors.As(err, &qe):
				t.Errorf("racer %d: %v, want success or a quota error", i, err)
			}
		}
		if ok != 1 {
			t.Errorf("round %d: %d of %d racing creates succeeded, want 1", round, ok, racers)
		}
		if got := jobCounts(t, schema)[coll]; got != [2]int{5, 5} {
			t.Errorf("round %d: job count %d, jobs %d; want 5 and 5", round, got[0], got[1])
		}
	}
}

// TestJobCountKept: creates, deletes (of the same names, at once, from two
// instances), a host's transaction rolled back and one committed, Prune of
// final jobs and a deleted collection leave every collection's job count
// equal to its jobs, and the count decides the quota.
func TestJobCountKept(t *testing.T) {
	schema := newSchema(t)
	s, s2 := open(t, schema), open(t, schema)
	for _, c := range []string{"a", "b"} {
		putQuotaCollection(t, s, c, 1000)
	}
	putQuotaCollection(t, s, "gone", 10)
	var wg sync.WaitGroup
	for w := range 8 {
		st := []scheduler.Store{s, s2}[w%2]
		wg.Go(func() {
			for i := range 40 {
				coll := []string{"a", "b"}[(w/2+i)%2]
				name := fmt.Sprintf("j%d", (w*7+i)%10) // names shared by the workers
				var err error
				if i%3 == 2 {
					err = st.DeleteJob(ctx, coll, name)
				} else {
					err = st.PutJob(ctx, newJobRecord(coll, name))
				}
				if err != nil && !errors.Is(err, scheduler.ErrNotFound) && !errors.Is(err, scheduler.ErrConflict) {
					t.Errorf("worker %d op %d: %v", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	pool := hostPool(t)
	for _, commit := range []bool{false, true} {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		v, err := s.InTx(ctx, tx)
		if err != nil {
			t.Fatal(err)
		}
		_ = v.DeleteJob(ctx, "a", "j1") // may be gone already
		if err := v.PutJob(ctx, newJobRecord("a", fmt.Sprintf("tx%v", commit))); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit(ctx)
		} else {
			err = tx.Rollback(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		runOnce(t, s, "b", fmt.Sprintf("final%d", i)) // Completed at t0
		if err := s.PutJob(ctx, newJobRecord("gone", fmt.Sprintf("x%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutJob(ctx, newJobRecord("b", "keep")); err != nil { // b holds a job after Prune
		t.Fatal(err)
	}
	for coll, got := range jobCounts(t, schema) {
		if got[0] != got[1] {
			t.Errorf("before Prune: collection %s keeps a job count of %d, holds %d jobs", coll, got[0], got[1])
		}
	}
	if n, err := s.Prune(ctx, scheduler.PruneRequest{FinalJobsBefore: t0.Add(time.Second)}); err != nil || n != 3 {
		t.Errorf("Prune = %d, %v; want the 3 final jobs", n, err)
	}
	if err := s.DeleteCollection(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	counts := jobCounts(t, schema)
	for coll, got := range counts {
		if got[0] != got[1] {
			t.Errorf("collection %s keeps a job count of %d, holds %d jobs", coll, got[0], got[1])
		}
	}
	// The count decides the quota: a quota of exactly the jobs held takes
	// no more, one more takes one.
	c, err := s.GetCollection(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	held := counts["b"][1]
	c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: held}
	if err := s.PutCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	var qe *scheduler.QuotaError
	if err := s.PutJob(ctx, newJobRecord("b", "one-more")); !errors.As(err, &qe) {
		t.Errorf("PutJob into a full collection (%d jobs) = %v, want a quota error", held, err)
	}
	c.Version++
	c.Definition.Properties.Quota.MaxJobCount = held - 1
	if err := s.PutCollection(ctx, c); !errors.As(err, &qe) {
		t.Errorf("PutCollection with a quota below the %d jobs held = %v, want a quota error", held, err)
	}
}

// TestPutCollectionRecounts: a collection's kept job count that went wrong
// (as when a process of an older schema creates or deletes jobs after the
// upgrade) is counted afresh by putting the collection, which then checks
// its new quota against the jobs it holds, and later creates against the
// right count.
func TestPutCollectionRecounts(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	putQuotaCollection(t, s, "c", 10)
	for _, name := range []string{"j1", "j2"} {
		if err := s.PutJob(ctx, newJobRecord("c", name)); err != nil {
			t.Fatal(err)
		}
	}
	q := pgx.Identifier{schema}.Sanitize()
	for _, wrong := range []int{99, 0} {
		if _, err := connect(t).Exec(ctx, "UPDATE "+q+".collections SET job_count = $1 WHERE name = 'c'", wrong); err != nil {
			t.Fatal(err)
		}
		c, err := s.GetCollection(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		// A quota of 3 fits the 2 jobs held, whatever the kept count says.
		c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: 3}
		if err := s.PutCollection(ctx, c); err != nil {
			t.Fatalf("PutCollection with a kept count of %d: %v", wrong, err)
		}
		if got := jobCounts(t, schema)["c"]; got != [2]int{2, 2} {
			t.Fatalf("after PutCollection with a kept count of %d: kept %d, held %d; want 2 and 2", wrong, got[0], got[1])
		}
		if err := s.PutJob(ctx, newJobRecord("c", "j3")); err != nil {
			t.Fatalf("the third job of a quota of 3: %v", err)
		}
		var qe *scheduler.QuotaError
		if err := s.PutJob(ctx, newJobRecord("c", "j4")); !errors.As(err, &qe) {
			t.Errorf("a fourth job in a quota of 3 = %v, want a quota error", err)
		}
		if err := s.DeleteJob(ctx, "c", "j3"); err != nil {
			t.Fatal(err)
		}
	}
}
