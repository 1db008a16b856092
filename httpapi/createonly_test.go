package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/httpapi"
	"github.com/jobclock/scheduler/store/memory"
	"github.com/jobclock/scheduler/store/postgres"
	"github.com/jobclock/scheduler/store/sqlite"
)

// createOnlyStores are the stores the create-only PUTs race on: memory,
// SQLite, and PostgreSQL when JOBCLOCK_POSTGRES_DSN is set (in a schema
// of the test's own).
var createOnlyStores = map[string]func(t *testing.T) scheduler.Store{
	"memory": func(*testing.T) scheduler.Store { return memory.New() },
	"sqlite": func(t *testing.T) scheduler.Store {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "jobs.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	},
	"postgres": func(t *testing.T) scheduler.Store {
		dsn := os.Getenv("JOBCLOCK_POSTGRES_DSN")
		if dsn == "" {
			t.Skip(`JOBCLOCK_POSTGRES_DSN is not set; run eval "$(bash scripts/start-postgres.sh DIR)" first`)
		}
		schema := fmt.Sprintf("httpapi_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
		t.Cleanup(func() {
			c, err := pgx.Connect(context.Background(), dsn)
			if err != nil {
				t.Logf("drop schema %s: %v", schema, err)
				return
			}
			defer c.Close(context.Background())
			if _, err := c.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
				t.Logf("drop schema %s: %v", schema, err)
			}
		})
		st, err := postgres.Open(context.Background(), dsn, &postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	},
}

// slowMiss is a store whose reads of a collection or job that does not
// exist take 20 ms: every PUT of several at once that reads before it
// writes finds none, and all of them try to create it.
type slowMiss struct{ scheduler.Store }

func (s slowMiss) GetJob(ctx context.Context, collection, name string) (*scheduler.JobRecord, error) {
	j, err := s.Store.GetJob(ctx, collection, name)
	if errors.Is(err, scheduler.ErrNotFound) {
		time.Sleep(20 * time.Millisecond)
	}
	return j, err
}

func (s slowMiss) GetCollection(ctx context.Context, name string) (*scheduler.CollectionRecord, error) {
	c, err := s.Store.GetCollection(ctx, name)
	if errors.Is(err, scheduler.ErrNotFound) {
		time.Sleep(20 * time.Millisecond)
	}
	return c, err
}

// TestCreateOnlyPutsAtOnce: of several PUTs with If-None-Match: * of one
// collection, one calendar or one job at the same moment, on each store,
// exactly one answers 201 and the others 412 PreconditionFailed at
// If-None-Match; the resource is the one the 201 answered.
func TestCreateOnlyPutsAtOnce(t *testing.T) {
	for name, newStore := range createOnlyStores {
		t.Run(name, func(t *testing.T) {
			s, err := scheduler.New(slowMiss{newStore(t)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			// Without admission's one write at a time, so that the
			// PUTs run at once.
			h := httpapi.New(s, &httpapi.Options{Admission: &httpapi.Admission{Disabled: true}})
			star := map[string]string{"If-None-Match": "*"}
			for _, res := range []struct {
				what, path string
				body       func(i int) string
			}{
				{"collection", jcNew + v, func(i int) string {
					return fmt.Sprintf(`{"location": "West Europe", "tags": {"i": "%d"}, "properties": {}}`, i)
				}},
				{"calendar", jcNew + "/calendars/holidays" + v, func(i int) string {
					return fmt.Sprintf(`{"properties": {"dates": ["2030-12-%02d"]}}`, 10+i)
				}},
				{"job", jcNew + "/jobs/j1" + v, func(i int) string {
					return fmt.Sprintf(`{"properties": {"action": {"type": "Http", "request": {"uri": "http://example.com/%d", "method": "GET"}},
						"recurrence": {"frequency": "Hour"}, "state": "Disabled"}}`, i)
				}},
			} {
				const n = 8
				codes, etags, targets := make([]int, n), make([]string, n), make([]string, n)
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() {
						rec := serveWith(h, "PUT", res.path, res.body(i), star)
						codes[i], etags[i] = rec.Code, rec.Header().Get("ETag")
						if rec.Code != http.StatusCreated {
							targets[i] = decodeError(t, rec).Target
						}
					})
				}
				wg.Wait()
				created := ""
				for i, code := range codes {
					switch {
					case code == http.StatusCreated && created == "":
						created = etags[i]
					case code == http.StatusPreconditionFailed && targets[i] == "If-None-Match":
					default:
						t.Errorf("%s PUT %d of %d at once with If-None-Match: * = %d at %q, want one 201 and the others 412 at If-None-Match", res.what, i, n, code, targets[i])
					}
				}
				if created == "" {
					t.Errorf("none of %d %s PUTs at once with If-None-Match: * answered 201: %v", n, res.what, codes)
				}
				if rec := serveWith(h, "GET", res.path, "", nil); rec.Code != http.StatusOK || rec.Header().Get("ETag") != created {
					t.Errorf("GET %s after the PUTs = %d with ETag %s, want 200 with the created one's, %s", res.what, rec.Code, rec.Header().Get("ETag"), created)
				}
			}
		})
	}
}

// TestIdenticalPutsAtOnce: of several PUTs at once that create one job
// with one definition, on each store, exactly one answers 201, the one
// whose write created the job; the others find it as they would write it,
// write nothing and answer 200 with its ETag.
func TestIdenticalPutsAtOnce(t *testing.T) {
	for name, newStore := range createOnlyStores {
		t.Run(name, func(t *testing.T) {
			s, err := scheduler.New(slowMiss{newStore(t)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.PutCollection(t.Context(), "sub1/rg1/jc-new", nil, nil); err != nil {
				t.Fatal(err)
			}
			h := httpapi.New(s, &httpapi.Options{Admission: &httpapi.Admission{Disabled: true}})
			const n = 8
			path := jcNew + "/jobs/j1" + v
			body := `{"properties": {"action": {"type": "Http", "request": {"uri": "http://example.com/", "method": "GET"}},
				"recurrence": {"frequency": "Hour"}, "state": "Disabled"}}`
			codes, etags := make([]int, n), make([]string, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					rec := serveWith(h, "PUT", path, body, nil)
					codes[i], etags[i] = rec.Code, rec.Header().Get("ETag")
				})
			}
			wg.Wait()
			created := 0
			for i, code := range codes {
				switch code {
				case http.StatusCreated:
					created++
				case http.StatusOK:
				default:
					t.Errorf("PUT %d of %d at once = %d, want 201 or 200", i, n, code)
				}
				if etags[i] != etags[0] {
					t.Errorf("PUT %d of %d at once answered ETag %s, PUT 0 %s; want one ETag, the created job's", i, n, etags[i], etags[0])
				}
			}
			if created != 1 {
				t.Errorf("%d of %d identical PUTs at once answered 201 (%v), want exactly 1", created, n, codes)
			}
		})
	}
}
