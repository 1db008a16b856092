package postgres

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

// maxGroups is how many groups of creates into one collection (see
// grouper) run at once, each on a connection of its own: two keep a
// server of two cores busy while the next group gathers. The grouper
// holds a group's place only beside the one other group running (see
// grouper.next), so it counts on two; the array below does not compile
// with any other.
const maxGroups = 2

var _ = [1]struct{}{}[maxGroups-2]

// groupWait bounds how long a create waits for a group to run in, and
// groupLockTimeout how long a group's statements wait for a lock (a job of
// the same name or place that another transaction is creating, the
// collection's row under a bulk put): past either, the create runs alone,
// as it would without groups. So a create is never held up behind other
// jobs' creates by more than about groupWait + groupLockTimeout, whatever
// holds their locks: a host's transaction that created a job of the same
// name, say, while the host waits for a create of another job.
const (
	groupWait        = 50 * time.Millisecond
	groupLockTimeout = "50ms"
)

// grouper runs the single creates of jobs of one collection on the store's
// pool (PutJob, CreateJob), each one statement and its own transaction,
// with group commit: at most maxGroups groups run at once, and a create
// that finds no place for a group waits, and then runs together with the
// creates that waited with it, their statements sent in one round trip
// and committed in one transaction. A create that finds a place free runs
// at once, alone, as one statement. When a group ends while another runs,
// its place is held for the creates that come back (see next) until they
// are as many as the next group should hold, until the other group ends,
// or until the first of them has waited groupWait: sent together while
// the other group's commit flushes the WAL, they commit in the next flush,
// where the first to come back would otherwise take the place alone and
// leave the others a whole commit behind. A create that finds a place held
// waits too, beside the group running, but no longer than groupWait; and a
// group that ends holds its place for no more creates than it held and
// wait, so a lone writer beside a group that runs long waits groupWait at
// most once, and then goes at once again (the place held for one: its own
// create). So concurrent puts share the round trips, the commits (one
// flush of the WAL on a durable server) and the collection row's share
// lock that each would take on its own; creates into other collections
// have groups of their own.
//
// Every statement of a group commits, or none: when the server refuses
// one (a deadlock with a create of another process, a lock waited for
// longer than groupLockTimeout), it aborts the group's transaction, and
// each create of the group runs again alone, so that one create's failure
// is not another's. A create that waited groupWait without a group runs
// alone; one that waited groupWait in a place held, or until the group
// running beside it ended, runs in that place with the creates waiting
// with it. A create whose context ends while it waits leaves without
// running; one whose context ends while its group runs returns when the
// group ends (its statement may have committed, as a single statement
// cancelled late may have), and the group runs until it ends or every
// caller in it has given up (each then gets its own context's error).
// The group's statements run under the context of the create that runs
// them (a host pool's tracer and hooks see its values).
type grouper struct {
	pool    *pgxpool.Pool
	maxWait time.Duration // groupWait, but in tests

	mu       sync.Mutex
	running  int          // groups running
	inGroups int          // creates in the groups running
	waiting  []*groupCall // creates waiting for a group, in order of arrival
	gather   int          // while > 0, a group's place held for this many creates (see next)
}

// groupCall is one create of a group: its statement, its context, and
// once the group has run, its result; alone says that the group failed
// without committing and the create must run again on its own.
type groupCall struct {
	ctx   context.Context
	query string
	args  []any

	n     int64
	err   error
	alone bool
	group []*groupCall // set when the call is to run this group
	done  chan struct{}
}

// exec runs query, a job's create, with args, in a group with the
// creates that run at the same time, and returns the number of rows it
// changed.
func (g *grouper) exec(ctx context.Context, query string, args []any) (int64, error) {
	g.mu.Lock()
	if g.running < maxGroups && g.gather == 0 { // a group of its own: the statement alone
		g.running++
		g.inGroups++
		g.mu.Unlock()
		defer g.next(1)
		return pgConn{g.pool}.Exec(ctx, query, args...)
	}
	c := &groupCall{ctx: ctx, query: query, args: args, done: make(chan struct{})}
	g.waiting = append(g.waiting, c)
	var start []*groupCall
	if g.gather > 0 && len(g.waiting) >= g.gather {
		start = g.startLocked()
	}
	g.mu.Unlock()
	g.hand(start)
	switch g.wait(c) {
	case gaveUp:
		return 0, ctx.Err()
	case waitedLong:
		return pgConn{g.pool}.Exec(ctx, query, args...)
	}
	// Set before c.done was closed, if not by this goroutine.
	if c.group != nil {
		func() {
			defer g.next(len(c.group))
			g.run(c.group)
		}()
	}
	if c.alone {
		return pgConn{g.pool}.Exec(ctx, query, args...)
	}
	return c.n, c.err
}

// How a wait for a group ended (see grouper.wait).
const (
	grouped    = iota // c ran in a group, or is to run the next one
	gaveUp            // c's context ended first
	waitedLong        // groupWait passed first
)

// wait waits until c has run in a group of another caller's, or is to
// run the next group; while c waits still, it leaves when its context
// ends, or when groupWait passes: then, when a place is held, the creates
// waiting go in it as a group, c with them, and otherwise c runs in no
// group.
func (g *grouper) wait(c *groupCall) int {
	t := time.NewTimer(g.maxWait)
	defer t.Stop()
	ended := waitedLong
	select {
	case <-c.done:
		return grouped
	case <-c.ctx.Done():
		ended = gaveUp
	case <-t.C:
	}
	g.mu.Lock()
	i := slices.Index(g.waiting, c)
	var start []*groupCall
	switch {
	case i < 0: // in a group already
	case ended == waitedLong && g.gather > 0:
		start = g.startLocked()
	default:
		g.waiting = slices.Delete(g.waiting, i, i+1)
	}
	g.mu.Unlock()
	if i >= 0 && start == nil {
		return ended
	}
	g.hand(start)
	<-c.done
	return grouped
}

// next ends a group of n creates. The creates waiting, if any, go as the
// next group in its place, handed to the first of them to run, when no
// other group runs, or when they are as many as the group should hold:
// half of the creates in groups and waiting, those of the group that
// ended included (they come back), or all of those not in the other group
// if fewer. Otherwise the place is held (gather) until that many wait,
// until the first of them has waited groupWait (see wait), or until the
// other group ends; a place held when the other group ends goes at once,
// to the creates waiting then.
func (g *grouper) next(n int) {
	g.mu.Lock()
	g.running--
	g.inGroups -= n
	var held, start []*groupCall
	if g.gather > 0 { // the group the place was held beside has ended
		g.gather = 0
		if len(g.waiting) > 0 {
			held = g.startLocked()
		}
	}
	if g.running > 0 {
		all := n + g.inGroups + len(g.waiting)
		want := min(all-g.inGroups, (all+1)/2)
		if len(g.waiting) >= want { // want > 0: n > 0
			start = g.startLocked()
		} else {
			g.gather = want
		}
	} else if len(g.waiting) > 0 {
		start = g.startLocked()
	}
	g.mu.Unlock()
	g.hand(held)
	g.hand(start)
}

// startLocked takes the creates waiting as a group that runs now.
func (g *grouper) startLocked() []*groupCall {
	w := g.waiting
	g.waiting = nil
	g.gather = 0
	g.running++
	g.inGroups += len(w)
	return w
}

// hand gives the group w, if any, to the first of its creates to run.
func (g *grouper) hand(w []*groupCall) {
	if len(w) > 0 {
		w[0].group = w
		close(w[0].done)
	}
}

// run runs the statements of group in one round trip and one
// transaction, and wakes each of its callers but the first (which runs
// it) with its result.
func (g *grouper) run(group []*groupCall) {
	ran := false
	defer func() {
		if !ran { // a panic: nobody knows what was written
			for _, c := range group {
				c.n, c.err, c.alone = 0, errGroupPanicked, false
			}
		}
		for _, c := range group[1:] {
			close(c.done)
		}
	}()
	g.runGroup(group)
	ran = true
}

// errGroupPanicked is the error of the creates of a group whose run
// panicked.
var errGroupPanicked = errors.New("postgres: create jobs: a group of creates panicked; what it wrote is unknown")

// runGroup is run's work.
func (g *grouper) runGroup(group []*groupCall) {
	if len(group) == 1 {
		c := group[0]
		c.n, c.err = pgConn{g.pool}.Exec(c.ctx, c.query, c.args...)
		return
	}
	// The group runs until every caller has given up on it.
	ctx, cancel := context.WithCancel(context.WithoutCancel(group[0].ctx))
	defer cancel()
	var left atomic.Int64
	left.Store(int64(len(group)))
	for _, c := range group {
		stop := context.AfterFunc(c.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}
	b := &pgx.Batch{QueuedQueries: make([]*pgx.QueuedQuery, 0, len(group)+1)}
	// For this transaction only (the batch is one, see run).
	b.Queue("SELECT set_config('lock_timeout', '" + groupLockTimeout + "', true)")
	for _, c := range group {
		b.Queue(c.query, c.args...)
	}
	br := g.pool.SendBatch(ctx, b)
	_, err := br.Exec()
	for _, c := range group {
		var tag pgconn.CommandTag
		if tag, c.err = br.Exec(); c.err != nil && err == nil {
			err = c.err
		}
		c.n = tag.RowsAffected()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		return
	}
	if ctx.Err() != nil {
		// Every caller gave up, and the group's context was cancelled
		// for it (see left): each learns of its own context's end, as of
		// its statement run alone, which may have committed too.
		for _, c := range group {
			c.n, c.err, c.alone = 0, c.ctx.Err(), false
		}
		return
	}
	var pe *pgconn.PgError
	var unsent pgx.ErrPreprocessingBatch
	committed := !(errors.As(err, &pe) || errors.As(err, &unsent) || pgconn.SafeToRetry(err))
	for _, c := range group {
		// Refused by the server, or never sent: nothing committed, and
		// each create runs again alone. Otherwise nobody knows.
		c.n, c.err, c.alone = 0, err, !committed
	}
}

// groupConn is the [sqlstore.Conn] of the single creates of jobs of a
// collection on the store's pool: its Exec runs the statement through
// the collection's grouper (see grouper), its QueryRow on the pool.
type groupConn struct{ g *grouper }

var _ sqlstore.Conn = groupConn{}

func (c groupConn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return c.g.exec(ctx, query, args)
}

func (c groupConn) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return pgConn{c.g.pool}.QueryRow(ctx, query, args...)
}

// creating returns the Conn of the single creates of jobs of collection
// on the pool.
func (s *Store) creating(collection string) groupConn {
	g, ok := s.creates.Load(collection)
	if !ok {
		g, _ = s.creates.LoadOrStore(collection, &grouper{pool: s.pool, maxWait: groupWait})
	}
	return groupConn{g.(*grouper)}
}
