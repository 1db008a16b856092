package postgres

import (
	"context"
	"encoding/json"
	"errors"
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

// payload returns the payload of the next notification, and forgets what
// it names: a JSON array of [collection, name] pairs, or empty (every
// job) when they are too many. ok is false when no write asked for a
// notification since the last payload: a write that asks while the
// notifier takes the previous payload is named by that one, and leaves a
// wake-up behind that must send nothing, as an empty payload would stand
// for every job.
func (w *woken) payload() (p string, ok bool) {
	w.mu.Lock()
	jobs, all := w.jobs, w.all
	w.jobs, w.all = nil, false
	w.mu.Unlock()
	if !all && len(jobs) == 0 {
		return "", false
	}
	if all {
		return "", true
	}
	b, err := json.Marshal(jobs)
	if err != nil || len(b) > maxPayload {
		return "", true
	}
	return string(b), true
}

// putBack makes what payload p named (see payload) pending again, after
// its notification failed, so that the next one names it too: ahead of
// what was written since, within the same bound (past it, every job).
func (w *woken) putBack(p string) {
	var jobs [][2]string
	all := p == "" || json.Unmarshal([]byte(p), &jobs) != nil
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.all:
	case all || len(jobs)+len(w.jobs) > maxPayload/4:
		w.all, w.jobs = true, nil
	default:
		w.jobs = append(jobs, w.jobs...)
	}
}

// written returns what a notification's payload names (see payload):
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
// jobs they wrote (see payload), each sent after the writes it stands for
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
// as a warning, and so is the send that ends it (with how long and how
// many times the sends failed), not each retry.
func (s *Store) notifier() {
	defer s.wg.Done()
	const firstRetry, maxRetry = 10 * time.Millisecond, time.Second
	var backoff time.Duration  // 0: nothing failed to be sent
	var failed int             // sends failed in a row
	var failingSince time.Time // the first one's
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
			if failed == 0 {
				s.log.Warn("send a wake-up notification: it failed; sending it again until it goes through",
					"channel", s.channel, "err", err)
				failingSince = time.Now()
			}
			failed++
			backoff = min(max(2*backoff, firstRetry), maxRetry)
		case failed > 0:
			s.log.Warn("a wake-up notification went through again", "channel", s.channel,
				"failing_for", time.Since(failingSince).Round(time.Millisecond), "failed_sends", failed)
			failed, backoff = 0, 0
		}
		if closing {
			return
		}
	}
}

// sendWoken sends a notification of what the writes that asked for one
// wrote (see payload), if any did, and returns the error of a send that
// failed, after which what it named is pending again.
func (s *Store) sendWoken() error {
	p, ok := s.woke.payload()
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.pool.Exec(ctx, "SELECT pg_notify($1, $2)", s.channel, p); err != nil {
		s.woke.putBack(p)
		return err
	}
	return nil
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
// warning, and so is the connection made again (with how long it took
// and how many tries failed), not each try.
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
		backoff := 10 * time.Millisecond
		var lost time.Time // when the connection was lost, while the listener connects again
		var failed int     // tries to connect again that failed since
		for {
			if conn == nil {
				select {
				case <-lctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, 5*time.Second)
				if conn, err = s.listen(lctx); err != nil {
					conn = nil
					failed++
					continue
				}
				backoff = 10 * time.Millisecond
				s.log.Warn("the wake-up listener is connected again", "channel", s.channel,
					"lost_for", time.Since(lost).Round(time.Millisecond), "failed_tries", failed)
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
			s.log.Warn("the wake-up listener lost its connection; connecting again (meanwhile writes are found at the next poll)",
				"channel", s.channel, "err", err)
			lost, failed = time.Now(), 0
		}
	}()
	return nil
}

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
