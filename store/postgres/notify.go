package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	scheduler "github.com/jobclock/scheduler"
)

var _ scheduler.WriteNotifier = (*Store)(nil)

// woken is what the writes that asked for a notification wrote, until
// the notifier sends it: the jobs, as collection/name pairs, or all of
// them.
type woken struct {
	mu   sync.Mutex
	jobs [][2]string
	all  bool // too many to name
}

// maxPayload bounds a notification's payload (PostgreSQL takes up to
// 8000 bytes); a notification that would name more jobs names none,
// standing for all of them.
const maxPayload = 7000

// wake asks the notifier to tell the listeners that job collection/name
// (every job of the collection when name is empty) was written, after a
// write that committed; see notifier.
func (s *Store) wake(collection, name string) {
	w := &s.woke
	w.mu.Lock()
	if !w.all {
		w.jobs = append(w.jobs, [2]string{collection, name})
		if len(w.jobs) > maxPayload/4 {
			w.all, w.jobs = true, nil
		}
	}
	w.mu.Unlock()
	select {
	case s.wakes <- struct{}{}:
	default: // a notification is asked for already, and follows this write
	}
}

// named is what a notification names: the jobs of the writes that asked
// for it, or every job (all); payload is its payload (see take).
type named struct {
	jobs    [][2]string
	all     bool
	payload string
}

// take returns what the next notification names, and forgets it; its
// payload is a JSON array of [collection, name] pairs, or empty (every
// job) when they are too many. ok is false when no write asked for a
// notification since the last take: a write that asks while the notifier
// takes the previous one is named by that one, and leaves a wake-up
// behind that must send nothing, as an empty payload would stand for
// every job.
func (w *woken) take() (n named, ok bool) {
	w.mu.Lock()
	n.jobs, n.all = w.jobs, w.all
	w.jobs, w.all = nil, false
	w.mu.Unlock()
	if !n.all && len(n.jobs) == 0 {
		return named{}, false
	}
	if n.all {
		return n, true
	}
	b, err := json.Marshal(n.jobs)
	if err != nil || len(b) > maxPayload {
		return named{all: true}, true
	}
	n.payload = string(b)
	return n, true
}

// putBack makes what n named (see take) pending again, after its
// notification failed, so that the next one names it too: ahead of what
// was written since, within the same bound (past it, every job).
func (w *woken) putBack(n named) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.all:
	case n.all || len(n.jobs)+len(w.jobs) > maxPayload/4:
		w.all, w.jobs = true, nil
	default:
		w.jobs = append(n.jobs, w.jobs...)
	}
}

// written returns what a notification's payload names (see take):
// every job when it names none, or cannot be read.
func written(payload string) []scheduler.Written {
	var jobs [][2]string
	if payload == "" || json.Unmarshal([]byte(payload), &jobs) != nil || len(jobs) == 0 {
		return []scheduler.Written{{}}
	}
	out := make([]scheduler.Written, len(jobs))
	for i, j := range jobs {
		out[i] = scheduler.Written{Collection: j[0], Name: j[1]}
	}
	return out
}

// notifier sends the notification that wakes the listeners of the schema
// (see Notify) after writes of the store's own that change due work,
// until the store is closed: one notification for all the writes that
// asked for one (wake) while the previous one was being sent, naming the
// jobs they wrote (see take), each sent after the writes it stands for
// committed, in a transaction of its own.
// A write does not wait for it, and does not notify from its own
// transaction: PostgreSQL holds a lock that serialises the commits of
// transactions that notify, from before the commit until it is durable,
// so that concurrent puts that notified would commit one at a time on a
// durable server. A notification that fails (a lost connection, a
// timeout) is sent again, with what was written since, after a backoff
// (from 10 ms, doubling up to a second) until it succeeds or the store
// is closed (then once more): a listener that missed it would keep the
// claims it holds ahead on the jobs written, and could run an old
// definition at the old instant. The first failure of a streak is logged
// as a warning, and the send that ends it at info level (see streak),
// not each retry.
func (s *Store) notifier() {
	defer s.wg.Done()
	st := s.newStreak(time.Second)
	var backoff time.Duration // 0: nothing failed to be sent
	for {
		wakes, retry := s.wakes, (<-chan time.Time)(nil)
		if backoff > 0 {
			wakes, retry = nil, time.After(backoff) // the writes meanwhile go with the retry
		}
		closing := false
		select {
		case <-wakes:
		case <-retry:
		case <-s.closedCh:
			select {
			case <-s.wakes:
			default:
				if backoff == 0 {
					return
				}
			}
			closing = true
		}
		err := s.sendWoken()
		switch {
		case err != nil && closing:
			s.log.Warn("send a wake-up notification as the store closes: it failed; the listeners find the writes at their next poll",
				"channel", s.channel, "err", err)
		case err != nil:
			backoff = st.failed("send a wake-up notification: it failed; sending it again until it goes through", err)
		default:
			st.ended("a wake-up notification went through again")
			backoff = 0
		}
		if closing {
			return
		}
	}
}

// sendWoken sends a notification of what the writes that asked for one
// wrote (see take), if any did, and returns the error of a send that
// failed, after which what it named is pending again.
func (s *Store) sendWoken() error {
	n, ok := s.woke.take()
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.pool.Exec(ctx, "SELECT pg_notify($1, $2)", s.channel, n.payload); err != nil {
		s.woke.putBack(n)
		return err
	}
	return nil
}

// streak follows a streak of failures of one of the store's background
// tasks (the notifier's sends, a listener's connection), so that its log
// has one warning per streak rather than one per failure: the first
// failure is logged as a warning, with its error; the others are counted;
// the success that ends the streak is logged at info level, with how long
// the streak lasted (failing_for) and how many failures it had
// (failures). It also paces the tries: from 10 ms after the first
// failure, doubling up to a maximum.
type streak struct {
	log      *slog.Logger
	channel  string
	maxWait  time.Duration
	wait     time.Duration // after the last failure; 0: no streak
	failures int
	since    time.Time // the first failure's
}

// newStreak returns a streak of the store's channel whose tries wait at
// most maxWait.
func (s *Store) newStreak(maxWait time.Duration) *streak {
	return &streak{log: s.log, channel: s.channel, maxWait: maxWait}
}

// failed notes a failure with err, logging msg when it starts a streak,
// and returns how long to wait before the next try.
func (st *streak) failed(msg string, err error) time.Duration {
	if st.failures == 0 {
		st.log.Warn(msg, "channel", st.channel, "err", err)
		st.since = time.Now()
	}
	st.failures++
	st.wait = min(max(2*st.wait, 10*time.Millisecond), st.maxWait)
	return st.wait
}

// ended notes a success, which ends the streak, if any, logging msg.
func (st *streak) ended(msg string) {
	if st.failures == 0 {
		return
	}
	st.log.Info(msg, "channel", st.channel, "failing_for", time.Since(st.since).Round(time.Millisecond), "failures", st.failures)
	st.failures, st.wait = 0, 0
}

// Notify returns a channel that receives a value soon after a PutJob or a
// PutCollection that enables a collection commits, in this process or in
// any other using the same schema, so that a scheduler can look for due
// work at once rather than at its next poll. Wake-ups are coalesced: the
// channel has a capacity of one and a value stands for "one or more
// writes". The listener holds one connection of its own, taken from the
// pool; after a lost connection it reconnects and sends a value, since
// notifications may have been missed (the loss and the reconnection are
// logged to Options.Logger). The channel is closed when ctx ends
// or the Store is closed.
//
// Notify is an optional capability of this store; a scheduler finds it by
// type assertion on an interface with this method.
func (s *Store) Notify(ctx context.Context) (<-chan struct{}, error) {
	ch := make(chan struct{}, 1)
	err := s.subscribe(ctx, func(context.Context, string) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}, func() { close(ch) })
	if err != nil {
		return nil, err
	}
	return ch, nil
}

// NotifyWrites implements [scheduler.WriteNotifier]: Notify whose channel
// receives what each notification names (see [scheduler.Written]): the
// job a PutJob wrote, the collection of a PutJobs or of a PutCollection
// that enabled it, and every job for a write in a host's transaction
// (TxStore) and after a lost connection. Notifications that arrive while
// the receiver is busy wait for it.
func (s *Store) NotifyWrites(ctx context.Context) (<-chan []scheduler.Written, error) {
	ch := make(chan []scheduler.Written, 16)
	err := s.subscribe(ctx, func(ctx context.Context, payload string) {
		select {
		case ch <- written(payload):
		case <-ctx.Done():
		}
	}, func() { close(ch) })
	if err != nil {
		return nil, err
	}
	return ch, nil
}

// subscribe listens for the schema's notifications until ctx ends or the
// Store is closed, calling got with each one's payload (an empty one
// after a lost connection, as notifications may have been lost
// meanwhile), and done once it stops. A lost connection is logged as a
// warning, and the connection made again at info level (see streak), not
// each try.
func (s *Store) subscribe(ctx context.Context, got func(ctx context.Context, payload string), done func()) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errClosed
	}
	lctx, cancel := context.WithCancel(ctx)
	s.cancels = append(s.cancels, cancel)
	s.wg.Add(1)
	s.mu.Unlock()

	conn, err := s.listen(lctx)
	if err != nil {
		cancel()
		s.wg.Done()
		return err
	}
	go func() {
		defer s.wg.Done()
		defer done()
		defer cancel()
		st := s.newStreak(5 * time.Second)
		var wait time.Duration // before the next try to connect again
		for {
			if conn == nil {
				select {
				case <-lctx.Done():
					return
				case <-time.After(wait):
				}
				if conn, err = s.listen(lctx); err != nil {
					conn = nil
					wait = st.failed(listenerLost, err) // the loss started the streak: not logged
					continue
				}
				st.ended("the wake-up listener is connected again")
				got(lctx, "") // notifications may have been lost meanwhile
			}
			n, err := conn.WaitForNotification(lctx)
			if err == nil {
				got(lctx, n.Payload)
				continue
			}
			conn.Close(context.Background())
			conn = nil
			if lctx.Err() != nil {
				return
			}
			wait = st.failed(listenerLost, err)
		}
	}()
	return nil
}

// listenerLost is the warning of a listener that lost its connection.
const listenerLost = "the wake-up listener lost its connection; connecting again (meanwhile writes are found at the next poll)"

// listen opens a connection of its own (not one of the pool's) and
// subscribes it to the store's channel.
func (s *Store) listen(ctx context.Context) (*pgx.Conn, error) {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	conn := pc.Hijack()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.channel}.Sanitize()); err != nil {
		conn.Close(context.Background())
		return nil, errors.Join(errors.New("store/postgres: listen for wake-ups"), err)
	}
	return conn, nil
}
