package postgres_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/syncbuf"
	"github.com/jobclock/scheduler/store/postgres"
)

// TestNotifyWritesNames: each notification names what was written,
// through this store or another on the same schema: a PutJob its job, a
// PutJobs their collection, a write in a host's transaction every job.
func TestNotifyWritesNames(t *testing.T) {
	schema := newSchema(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	listener, writer := open(t, schema), open(t, schema)
	ch, err := listener.NotifyWrites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	next := func(what string) []scheduler.Written {
		t.Helper()
		select {
		case ws := <-ch:
			return ws
		case <-time.After(10 * time.Second):
			t.Fatalf("no notification after %s", what)
			return nil
		}
	}
	if err := writer.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	rec := &scheduler.JobRecord{Collection: "c", Name: "j", Job: &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://127.0.0.1/", Method: "GET"}}}}
	if err := writer.PutJob(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]scheduler.Written{{Collection: "c", Name: "j"}}, next("PutJob")); diff != "" {
		t.Errorf("PutJob notified (-want +got):\n%s", diff)
	}
	rec2 := *rec
	rec2.Name = "k"
	if err := listener.PutJobs(ctx, "c", []*scheduler.JobRecord{&rec2}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]scheduler.Written{{Collection: "c"}}, next("PutJobs")); diff != "" {
		t.Errorf("PutJobs notified (-want +got):\n%s", diff)
	}
	tx, err := connect(t).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	txs, err := writer.InTx(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	rec3 := *rec
	rec3.Name = "l"
	if err := txs.PutJob(ctx, &rec3); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]scheduler.Written{{}}, next("a put in a host's transaction")); diff != "" {
		t.Errorf("a put in a host's transaction notified (-want +got):\n%s", diff)
	}
}

// nopObserver observes nothing.
type nopObserver struct{}

func (nopObserver) Attach(*scheduler.Scheduler) func() { return func() {} }
func (nopObserver) StartAttempt(ctx context.Context, _ scheduler.Attempt) context.Context {
	return ctx
}
func (nopObserver) EndAttempt(context.Context, scheduler.AttemptEnd) {}
func (nopObserver) HistoryStored(scheduler.StoredHistory)            {}
func (nopObserver) StoreCalled(scheduler.StoreCall)                  {}
func (nopObserver) Missed(scheduler.Misfire)                         {}
func (nopObserver) TookOver(scheduler.Takeover)                      {}
func (nopObserver) Pruned(int)                                       {}
func (nopObserver) TraceParent(context.Context) (string, string)     { return "", "" }

// giveBacks counts the GiveBack calls a Scheduler tells its Observer of.
type giveBacks struct {
	scheduler.Observer
	n atomic.Int64
}

func (o *giveBacks) StoreCalled(c scheduler.StoreCall) {
	if c.Op == "GiveBack" {
		o.n.Add(1)
	}
}

// TestClaimAheadKeepsClaimsOnOtherWrites: a write through another
// instance to another job does not make an instance give back the claim
// it holds ahead; a write to the held job does.
func TestClaimAheadKeepsClaimsOnOtherWrites(t *testing.T) {
	schema := newSchema(t)
	ctx := context.Background()
	var runs atomic.Int64
	reg := &action.Registry{}
	reg.Register(action.HTTP, action.ExecutorFunc(func(ctx context.Context, req *action.Request) (*action.Result, error) {
		runs.Add(1)
		return nil, nil
	}))
	obs := &giveBacks{Observer: nopObserver{}}
	holder, err := scheduler.New(open(t, schema), &scheduler.Config{Logger: slog.New(slog.DiscardHandler), Executors: reg,
		InstanceID: "holder", LeaseDuration: 30 * time.Second, ClaimAhead: 3 * time.Second, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	writer, err := scheduler.New(open(t, schema), &scheduler.Config{Logger: slog.New(slog.DiscardHandler), InstanceID: "writer"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.PutCollection(ctx, "c", nil, nil); err != nil {
		t.Fatal(err)
	}
	due := time.Now().Add(2 * time.Second)
	at := func(t time.Time) *scheduler.Job {
		j, err := scheduler.ParseJob([]byte(`{"action": {"type": "Http", "request": {"uri": "http://127.0.0.1:9/x", "method": "GET"}}, "startTime": "`+t.UTC().Format(time.RFC3339Nano)+`"}`), nil)
		if err != nil {
			panic(err)
		}
		return j
	}
	if _, err := writer.PutJob(ctx, "c", "held", at(due), nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the put's notification goes before the holder listens
	if err := holder.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer holder.Stop(ctx)
	time.Sleep(500 * time.Millisecond)
	if r, err := holder.GetJob(ctx, "c", "held"); err != nil || r.LeaseOwner != "holder" {
		t.Fatalf("held job's lease owner = %q, %v; want holder, holding it ahead", r.LeaseOwner, err)
	}
	if _, err := writer.PutJob(ctx, "c", "other", at(time.Now().Add(time.Hour)), nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if n := obs.n.Load(); n != 0 {
		t.Errorf("%d give-backs after a write to another job, want 0", n)
	}
	// A put that changes the held job (its tags: a put of the same
	// definition, state and tags writes nothing).
	if _, err := writer.PutJob(ctx, "c", "held", at(due), &scheduler.PutJobOptions{Tags: map[string]string{"v": "2"}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for obs.n.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := obs.n.Load(); n == 0 {
		t.Errorf("no give-back after a write to the held job, want one")
	}
	for runs.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if n := runs.Load(); n != 1 {
		t.Errorf("the held job ran %d times, want once", n)
	}
}

// tracedPool returns a pool of connections to the test database whose
// statements go through tracer, as a host's may; closed at the end of
// the test.
func tracedPool(t testing.TB, tracer pgx.QueryTracer) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = tracer
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// cutNotify is a pgx tracer that, while cuts is positive, terminates the
// server process of a connection about to send a pg_notify (the
// connection is lost under the statement), counting cuts down.
type cutNotify struct {
	admin *pgx.Conn
	mu    sync.Mutex
	cuts  int
}

func (c *cutNotify) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if !strings.Contains(data.SQL, "pg_notify") {
		return ctx
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cuts <= 0 {
		return ctx
	}
	c.cuts--
	var ok bool
	if err := c.admin.QueryRow(ctx, "SELECT pg_terminate_backend($1, 5000)", conn.PgConn().PID()).Scan(&ok); err != nil || !ok {
		panic(fmt.Sprintf("pg_terminate_backend: %v, %v", ok, err))
	}
	return ctx
}

func (c *cutNotify) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestNotifyWritesAfterLostConnection: the notification of a PutJob is
// sent over a connection that is lost (its server process terminated),
// twice: it is sent again until it goes through, and still names the
// job. The store's log says so once when the sends start failing, a
// warning, and once when one goes through, at info level, with the number
// of failed sends, not at each retry; a second streak (one lost
// connection) is logged the same way.
func TestNotifyWritesAfterLostConnection(t *testing.T) {
	schema := newSchema(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cut := &cutNotify{admin: connect(t)}
	pool := tracedPool(t, cut)
	var log syncbuf.Buffer
	writer, err := postgres.New(ctx, pool, &postgres.Options{Schema: schema, Logger: slog.New(slog.NewJSONHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	listener := open(t, schema)
	ch, err := listener.NotifyWrites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := writer.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	const failed, wentThrough = "send a wake-up notification: it failed; sending it again until it goes through", "a wake-up notification went through again"
	for streak, cuts := range []int{2, 1} {
		cut.mu.Lock()
		cut.cuts = cuts
		cut.mu.Unlock()
		name := fmt.Sprintf("j%d", streak)
		rec := &scheduler.JobRecord{Collection: "c", Name: name, Job: &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://127.0.0.1/", Method: "GET"}}}}
		if err := writer.PutJob(ctx, rec); err != nil {
			t.Fatal(err)
		}
		var got []scheduler.Written
		deadline := time.After(10 * time.Second)
		for !slices.Contains(got, scheduler.Written{Collection: "c", Name: name}) {
			select {
			case ws := <-ch:
				got = append(got, ws...)
			case <-deadline:
				t.Fatalf("no notification of job %s's put after lost connections (got %v)", name, got)
			}
		}
		cut.mu.Lock()
		if cut.cuts != 0 {
			t.Errorf("%d connections left to cut, want 0: the notification was not sent over them", cut.cuts)
		}
		cut.mu.Unlock()
		// The send that went through is logged after it.
		ends := waitLogged(t, &log, wentThrough, streak+1)
		if fails := logged(t, &log, failed); len(fails) != streak+1 {
			t.Fatalf("after streak %d: %d warnings %q, want %d: once per streak (log:\n%s)", streak+1, len(fails), failed, streak+1, log.String())
		} else if f := fails[streak]; f["level"] != "WARN" || f["err"] == nil || f["channel"] != "jobclock:"+schema || f["store"] != "postgres" {
			t.Errorf("warning of streak %d = %v, want level WARN, err, channel jobclock:%s and store postgres", streak+1, f, schema)
		}
		if e := ends[streak]; e["level"] != "INFO" || e["failures"] != float64(cuts) || e["failing_for"] == nil {
			t.Errorf("end of streak %d logged as %v, want level INFO, failures %d and failing_for", streak+1, e, cuts)
		}
		if warns := leveled(t, &log, "WARN"); len(warns) != streak+1 {
			t.Errorf("after streak %d: %d warnings logged, want one per streak (log:\n%s)", streak+1, len(warns), log.String())
		}
	}
}

// TestNotifyListenerReconnectLogged: the listener of Notify whose
// connection is lost (its server process terminated) connects again and
// wakes its receiver, as notifications may have been lost meanwhile; the
// store's log has one warning per lost connection, with its error, and
// says at info level that the listener is connected again.
func TestNotifyListenerReconnectLogged(t *testing.T) {
	schema := newSchema(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var log syncbuf.Buffer
	s, err := postgres.Open(ctx, dsn(t), &postgres.Options{Schema: schema, Logger: slog.New(slog.NewJSONHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ch, err := s.Notify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	listen := "LISTEN " + pgx.Identifier{"jobclock:" + schema}.Sanitize()
	const lostMsg, againMsg = "the wake-up listener lost its connection; connecting again (meanwhile writes are found at the next poll)", "the wake-up listener is connected again"
	admin := connect(t)
	for n := 1; n <= 2; n++ {
		var killed int
		if err := admin.QueryRow(ctx, "SELECT count(pg_terminate_backend(pid, 5000)) FROM pg_stat_activity WHERE query = $1", listen).Scan(&killed); err != nil || killed != 1 {
			t.Fatalf("disconnect %d: terminated %d listening connections, %v; want 1", n, killed, err)
		}
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("disconnect %d: no wake-up within 10 s of the listener's lost connection", n)
		}
		again := waitLogged(t, &log, againMsg, n)
		lost := logged(t, &log, lostMsg)
		if len(lost) != n || lost[n-1]["level"] != "WARN" || lost[n-1]["err"] == nil || lost[n-1]["channel"] != "jobclock:"+schema {
			t.Errorf("disconnect %d: lost connections logged as %v, want %d warnings with err and channel", n, lost, n)
		}
		if len(again) != n || again[n-1]["level"] != "INFO" || again[n-1]["failing_for"] == nil || again[n-1]["failures"] != float64(1) {
			t.Errorf("disconnect %d: connections made again logged as %v, want %d at info level with failing_for and failures 1", n, again, n)
		}
		if warns := leveled(t, &log, "WARN"); len(warns) != n {
			t.Errorf("disconnect %d: %d warnings logged, want one per lost connection (log:\n%s)", n, len(warns), log.String())
		}
	}
}
