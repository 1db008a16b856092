package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// notifier sends the notification that wakes the listeners of the schema
// (see Notify) after writes of the store's own that change due work,
// until the store is closed: one notification for all the writes that
// asked for one (wake) while the previous one was being sent, each sent
// after the writes it stands for committed, in a transaction of its own.
// A write does not wait for it, and does not notify from its own
// transaction: PostgreSQL holds a lock that serialises the commits of
// transactions that notify, from before the commit until it is durable,
// so that concurrent puts that notified would commit one at a time on a
// durable server. Notifications are hints, so errors are ignored.
func (s *Store) notifier() {
	defer s.wg.Done()
	send := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.pool.Exec(ctx, "SELECT pg_notify($1, '')", s.channel)
	}
	for {
		select {
		case <-s.wakes:
			send()
		case <-s.closedCh:
			select {
			case <-s.wakes:
				send()
			default:
			}
			return
		}
	}
}

// Notify returns a channel that receives a value soon after a PutJob or a
// PutCollection that enables a collection commits, in this process or in
// any other using the same schema, so that a scheduler can look for due
// work at once rather than at its next poll. Wake-ups are coalesced: the
// channel has a capacity of one and a value stands for "one or more
// writes". The listener holds one connection of its own, taken from the
// pool; after a lost connection it reconnects and sends a value, since
// notifications may have been missed. The channel is closed when ctx ends
// or the Store is closed.
//
// Notify is an optional capability of this store; a scheduler finds it by
// type assertion on an interface with this method.
func (s *Store) Notify(ctx context.Context) (<-chan struct{}, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errClosed
	}
	lctx, cancel := context.WithCancel(ctx)
	s.cancels = append(s.cancels, cancel)
	s.wg.Add(1)
	s.mu.Unlock()

	conn, err := s.listen(lctx)
	if err != nil {
		cancel()
		s.wg.Done()
		return nil, err
	}
	ch := make(chan struct{}, 1)
	go func() {
		defer s.wg.Done()
		defer close(ch)
		defer cancel()
		send := func() {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
		backoff := 10 * time.Millisecond
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
					continue
				}
				backoff = 10 * time.Millisecond
				send() // notifications may have been lost meanwhile
			}
			_, err := conn.WaitForNotification(lctx)
			if err == nil {
				send()
				continue
			}
			conn.Close(context.Background())
			conn = nil
			if lctx.Err() != nil {
				return
			}
		}
	}()
	return ch, nil
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
