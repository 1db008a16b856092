package postgres_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

// places returns, for each collection of the schema with jobs, the
// number of its jobs and the highest place one of them holds.
func places(t *testing.T, schema string) map[string][2]int {
	t.Helper()
	q := pgx.Identifier{schema}.Sanitize()
	rows, err := connect(t).Query(ctx, "SELECT collection, count(*), max(slot) FROM "+q+".jobs GROUP BY collection")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][2]int{}
	for rows.Next() {
		var name string
		var n, top int
		if err := rows.Scan(&name, &n, &top); err != nil {
			t.Fatal(err)
		}
		out[name] = [2]int{n, top}
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
		if got := places(t, schema)[coll]; got[0] != 5 || got[1] >= 5 {
			t.Errorf("round %d: %d jobs, highest place %d; want 5 jobs below place 5", round, got[0], got[1])
		}
	}
}

// TestPlacesKept: creates and deletes (of the same names, at once, from
// two instances), a host's transaction rolled back and one committed, Prune
// of final jobs and a deleted collection leave every job in a place below
// its collection's quota, and the places decide the quota, also after it
// is lowered to the jobs held.
func TestPlacesKept(t *testing.T) {
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
					err = st.DeleteJob(ctx, coll, name, "")
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
		inHostTx(t, pool, s, commit, func(v scheduler.TxStore) {
			_ = v.DeleteJob(ctx, "a", "j1", "") // may be gone already
			if err := v.PutJob(ctx, newJobRecord("a", fmt.Sprintf("tx%v", commit))); err != nil {
				t.Fatal(err)
			}
		})
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
	if n, err := s.Prune(ctx, scheduler.PruneRequest{FinalJobsBefore: t0.Add(time.Second)}); err != nil || n != 3 {
		t.Errorf("Prune = %d, %v; want the 3 final jobs", n, err)
	}
	if err := s.DeleteCollection(ctx, "gone", ""); err != nil {
		t.Fatal(err)
	}
	got := places(t, schema)
	for coll, p := range got {
		if p[1] >= 1000 {
			t.Errorf("collection %s: a job holds place %d, above its quota of 1000", coll, p[1])
		}
	}
	if _, ok := got["gone"]; ok {
		t.Errorf("the deleted collection still has jobs: %v", got["gone"])
	}
	// A quota lowered to exactly the jobs held moves them into its places
	// and takes no more; one more takes one.
	c, err := s.GetCollection(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	held := got["b"][0]
	c.Definition.Properties.Quota = &scheduler.Quota{MaxJobCount: held}
	if err := s.PutCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	if p := places(t, schema)["b"]; p[0] != held || p[1] != held-1 {
		t.Errorf("after lowering the quota to the %d jobs held: %d jobs, highest place %d; want places 0 to %d", held, p[0], p[1], held-1)
	}
	var qe *scheduler.QuotaError
	if err := s2.PutJob(ctx, newJobRecord("b", "one-more")); !errors.As(err, &qe) {
		t.Errorf("PutJob into a full collection (%d jobs) = %v, want a quota error", held, err)
	}
	c.Version++
	c.Definition.Properties.Quota.MaxJobCount = held + 1
	if err := s.PutCollection(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := s2.PutJob(ctx, newJobRecord("b", "one-more")); err != nil {
		t.Errorf("PutJob with a quota of one more than held: %v", err)
	}
	if err := s.PutJob(ctx, newJobRecord("b", "two-more")); !errors.As(err, &qe) {
		t.Errorf("PutJob into a full collection (%d jobs) = %v, want a quota error", held+1, err)
	}
	c.Version++
	c.Definition.Properties.Quota.MaxJobCount = held
	if err := s.PutCollection(ctx, c); !errors.As(err, &qe) {
		t.Errorf("PutCollection with a quota below the %d jobs held = %v, want a quota error", held+1, err)
	}
}

// TestLookupPlanOnNewTable: on a job table without statistics yet (a new
// store, before autovacuum analyzes it), the generic plan of a job's
// lookup by collection and name, which every put makes, does not use the
// index of the jobs' places, which would read every job of the collection
// (it did when that index began with the collection).
func TestLookupPlanOnNewTable(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	putQuotaCollection(t, s, "c", 1000)
	for i := range 50 {
		if err := s.PutJob(ctx, newJobRecord("c", fmt.Sprintf("j%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	conn := connect(t)
	q := pgx.Identifier{schema}.Sanitize()
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		t.Fatal(err)
	}
	for i, lookup := range []string{
		"SELECT * FROM {s}.jobs WHERE collection = $1 AND name = $2",
		sqlstore.GetJobSQL, // GetJob's, which a put makes
	} {
		if _, err := conn.Exec(ctx, fmt.Sprintf("PREPARE lookup%d(text, text) AS ", i)+strings.ReplaceAll(lookup, "{s}.", q+".")); err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(ctx, fmt.Sprintf("EXPLAIN EXECUTE lookup%d('c', 'j07')", i))
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		if plan := strings.Join(lines, "\n"); !strings.Contains(plan, "jobs_pkey") {
			t.Errorf("the lookup of a job by collection and name (%s) does not use the primary key (another index with the collection first reads every job of the collection):\n%s", lookup, plan)
		}
	}
}

// TestPutJobsPastCountThatOverstates: a job count above the jobs stored
// (here the jobs were truncated, which changes no count) refuses no put
// that the places allow, in a collection whose places all fit in the
// search's first look and in one whose places do not.
func TestPutJobsPastCountThatOverstates(t *testing.T) {
	schema := newSchema(t)
	s := open(t, schema)
	c := connect(t)
	for _, limit := range []int{3, 1000} {
		coll := fmt.Sprintf("c%d", limit)
		putQuotaCollection(t, s, coll, limit)
		var jobs []*scheduler.JobRecord
		for k := range limit {
			jobs = append(jobs, newJobRecord(coll, fmt.Sprintf("j%05d", k)))
		}
		if err := s.PutJobs(ctx, coll, jobs); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, "TRUNCATE "+pgx.Identifier{schema}.Sanitize()+".jobs"); err != nil {
			t.Fatal(err)
		}
		if err := s.PutJobs(ctx, coll, []*scheduler.JobRecord{newJobRecord(coll, "again")}); err != nil {
			t.Errorf("PutJobs(1 create into %s, emptied, of quota %d, counted full): %v, want it put", coll, limit, err)
		}
	}
}
