// Command txjob shows jobs written in the host's own transaction on
// PostgreSQL: the orders table is created together with the job
// collection of the follow-ups, and each order is inserted together with
// its follow-up job in one transaction, so the job exists exactly when the
// order does. An
// order whose transaction rolls back (here, a declined payment) leaves no
// job behind.
//
//	eval "$(bash scripts/start-postgres.sh /tmp/jobclock-pg)"
//	go run ./examples/txjob -postgres "$JOBCLOCK_POSTGRES_DSN"
//
// The follow-up is a typed Go handler that marks the order as followed up,
// a few seconds after it was placed (-delay).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/postgres"
)

func main() {
	dsn := flag.String("postgres", os.Getenv("JOBCLOCK_POSTGRES_DSN"), "PostgreSQL DSN (default $JOBCLOCK_POSTGRES_DSN)")
	schema := flag.String("schema", "txjob", "schema of the example's tables; the scheduler's live in SCHEMA_jobs")
	delay := flag.Duration("delay", 2*time.Second, "how long after an order its follow-up runs")
	flag.Parse()
	if *dsn == "" {
		log.Fatal("no database: give -postgres DSN or set JOBCLOCK_POSTGRES_DSN")
	}
	ctx := context.Background()
	a, err := open(ctx, *dsn, *schema, os.Stdout)
	if err != nil {
		log.Fatal(err)
	}
	defer a.close()
	if err := a.demo(ctx, *delay); err != nil {
		log.Fatal(err)
	}
}

// FollowUp is the payload of an order's follow-up job.
type FollowUp struct {
	Order    string `json:"order"`
	Customer string `json:"customer"`
}

// app is the shop: its tables and its scheduler, in one database.
type app struct {
	pool   *pgxpool.Pool
	orders string // quoted table name
	s      *scheduler.Scheduler
	store  *postgres.Store
	// followUps makes the follow-up jobs' actions.
	followUps *action.Handler[FollowUp]

	mu   sync.Mutex
	out  io.Writer
	done chan string // follow-up jobs completed
}

// ordersCollection is the job collection of the follow-ups.
const ordersCollection = "orders"

// open connects, creates the example's table, and starts the scheduler
// over the same database.
func open(ctx context.Context, dsn, schema string, out io.Writer) (*app, error) {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return nil, err
	}
	a := &app{pool: pool, out: out, done: make(chan string, 16),
		orders: pgx.Identifier{schema, "orders"}.Sanitize()}
	if err := a.setup(ctx, schema); err != nil {
		pool.Close()
		return nil, err
	}
	return a, nil
}

func (a *app) setup(ctx context.Context, schema string) error {
	if _, err := a.pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return err
	}
	// The store logs (a failed wake-up notification, an upgrade waiting
	// for its tables) to Options.Logger, slog.Default() when nil as for
	// the Scheduler's Config.Logger.
	st, err := postgres.New(ctx, a.pool, &postgres.Options{Schema: schema + "_jobs"})
	if err != nil {
		return err
	}
	a.store = st
	reg := new(action.Registry)
	a.followUps = action.Handle(reg, "FollowUp", a.followUp)
	// The demo waits for each follow-up's outcome to be stored.
	onHistory := func(h scheduler.HistoryEntry) {
		if h.Status == scheduler.StatusCompleted {
			select {
			case a.done <- h.Job:
			default:
			}
		}
	}
	if a.s, err = scheduler.New(st, &scheduler.Config{Executors: reg, OnHistory: onHistory}); err != nil {
		return err
	}
	if err := a.createTables(ctx); err != nil {
		return err
	}
	return a.s.Start(ctx)
}

// createTables creates the orders table and the job collection of their
// follow-ups in one transaction: both exist, or neither does.
func (a *app) createTables(ctx context.Context) error {
	tx, err := a.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) // after a commit, a no-op
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+a.orders+` (
		id text PRIMARY KEY, customer text NOT NULL, total_cents bigint NOT NULL, followed_up boolean NOT NULL DEFAULT false)`); err != nil {
		return err
	}
	quota := &scheduler.JobCollection{Properties: scheduler.CollectionProperties{Quota: &scheduler.Quota{MaxJobCount: 100_000}}}
	if _, err := a.s.PutCollectionTx(ctx, tx, ordersCollection, quota, nil); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func (a *app) close() {
	a.s.Stop(context.Background())
	a.store.Close()
	a.pool.Close()
}

func (a *app) printf(format string, args ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fmt.Fprintf(a.out, format, args...)
}

// followUp is the follow-up job: it marks the order as followed up.
func (a *app) followUp(ctx context.Context, req *action.Request, f FollowUp) error {
	tag, err := a.pool.Exec(ctx, "UPDATE "+a.orders+" SET followed_up = true WHERE id = $1", f.Order)
	if err != nil {
		return err
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("order %s does not exist", f.Order)
	}
	a.printf("followed up order %s for %s\n", f.Order, f.Customer)
	return nil
}

var errDeclined = errors.New("payment declined")

// placeOrder inserts the order and its follow-up job in one transaction.
// With declined, the payment fails after both were written, and the
// transaction rolls back: neither the order nor the job remains.
func (a *app) placeOrder(ctx context.Context, id, customer string, totalCents int64, delay time.Duration, declined bool) error {
	tx, err := a.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) // after a commit, a no-op
	if _, err := tx.Exec(ctx, "INSERT INTO "+a.orders+" (id, customer, total_cents) VALUES ($1, $2, $3)", id, customer, totalCents); err != nil {
		return err
	}
	due := time.Now().Add(delay)
	job := &scheduler.Job{StartTime: &due, Action: a.followUps.Action(FollowUp{Order: id, Customer: customer})}
	if _, err := a.s.PutJobTx(ctx, tx, ordersCollection, "follow-up-"+id, job, nil); err != nil {
		return err // invalid or over quota: the order is not placed either
	}
	if declined {
		return errDeclined
	}
	return tx.Commit(ctx)
}

// demo places an order that goes through and one that is declined, waits
// for the follow-up, and shows what the database holds.
func (a *app) demo(ctx context.Context, delay time.Duration) error {
	suffix := fmt.Sprintf("%d", time.Now().UnixNano()%1_000_000)
	okID, declinedID := "A"+suffix, "B"+suffix
	if err := a.placeOrder(ctx, okID, "ada@example.com", 4200, delay, false); err != nil {
		return err
	}
	a.printf("placed order %s\n", okID)
	if err := a.placeOrder(ctx, declinedID, "bob@example.com", 999, delay, true); !errors.Is(err, errDeclined) {
		return fmt.Errorf("order %s: %v, want a declined payment", declinedID, err)
	}
	a.printf("order %s declined: rolled back\n", declinedID)
	select {
	case <-a.done:
	case <-time.After(delay + time.Minute):
		return fmt.Errorf("the follow-up of order %s did not run", okID)
	}
	for _, id := range []string{okID, declinedID} {
		var followed bool
		err := a.pool.QueryRow(ctx, "SELECT followed_up FROM "+a.orders+" WHERE id = $1", id).Scan(&followed)
		order := fmt.Sprintf("followed up: %v", followed)
		if errors.Is(err, pgx.ErrNoRows) {
			order = "no such order"
		} else if err != nil {
			return err
		}
		job := "no job"
		if r, err := a.s.GetJob(ctx, ordersCollection, "follow-up-"+id); err == nil {
			job = "job " + string(r.State)
		} else if !errors.Is(err, scheduler.ErrNotFound) {
			return err
		}
		a.printf("order %s: %s, %s\n", id, order, job)
	}
	return nil
}
