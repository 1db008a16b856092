package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

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
