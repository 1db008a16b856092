package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// errRefused is what the transaction of AcquirePermits returns when a
// permit was refused, so that it rolls back what it took.
var errRefused = errors.New("sqlstore: a permit was refused")

// AcquirePermits implements [scheduler.Limiter.AcquirePermits] in a
// transaction: inTx runs fn in one, which it commits when fn returns nil
// and rolls back otherwise, returning fn's error; a refusal rolls it back
// too. The permits are taken in the order of
// their scopes, so that two transactions never wait for each other's rows
// in opposite orders. Tables limit_permits (a row per concurrency permit:
// scope, slot below maxConcurrent, holder, expiry) and limit_rates (a row
// per rate: scope, next grant) keep them, instants as Unix nanoseconds;
// each permit is taken by a conditional write, which on PostgreSQL sees a
// concurrent taker's committed row.
func (d *Dialect) AcquirePermits(ctx context.Context, req scheduler.PermitRequest, inTx func(fn func(c Conn) error) error) (scheduler.PermitGrant, error) {
	var g scheduler.PermitGrant
	err := inTx(func(c Conn) error {
		var err error
		g, err = d.acquire(ctx, c, req)
		if err == nil && !g.Granted {
			return errRefused
		}
		return err
	})
	switch {
	case errors.Is(err, errRefused):
		return g, nil
	case err != nil:
		return scheduler.PermitGrant{}, err
	}
	return g, nil
}

// acquire takes the permits of req over c, a transaction, and says which
// it refused; the caller rolls back a refusal.
func (d *Dialect) acquire(ctx context.Context, c Conn, req scheduler.PermitRequest) (scheduler.PermitGrant, error) {
	order := make([]int, len(req.Permits))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(req.Permits[a].Scope, req.Permits[b].Scope) })
	now, until := NanosInt(req.Now), NanosInt(req.Until)
	for _, i := range order {
		p := req.Permits[i]
		if p.MaxConcurrent > 0 {
			ok, err := d.takeSlot(ctx, c, p, req.Holder, now, until)
			if err != nil || !ok {
				return scheduler.PermitGrant{Refused: i}, err
			}
		}
		if p.Interval > 0 {
			n, err := c.Exec(ctx, d.sql("INSERT INTO {s}.limit_rates AS r (scope, next) VALUES ($1, $2) "+
				"ON CONFLICT (scope) DO UPDATE SET next = excluded.next WHERE r.next <= $3"), p.Scope, NanosInt(req.Now.Add(p.Interval)), now)
			if err != nil {
				return scheduler.PermitGrant{}, d.Wrap("take a permit", p.Scope, err)
			}
			if n == 0 {
				var next int64
				if err := c.QueryRow(ctx, d.sql("SELECT next FROM {s}.limit_rates WHERE scope = $1"), p.Scope).Scan(&next); err != nil {
					return scheduler.PermitGrant{}, d.Wrap("take a permit", p.Scope, err)
				}
				return scheduler.PermitGrant{Refused: i, RetryAt: Time(next, true)}, nil
			}
		}
	}
	return scheduler.PermitGrant{Granted: true}, nil
}

// takeSlot takes a concurrency permit of p for holder at now until until,
// reporting whether it did: the one holder holds, else a free slot below
// p.MaxConcurrent, unless p.MaxConcurrent permits of its scope are held.
func (d *Dialect) takeSlot(ctx context.Context, c Conn, p scheduler.Permit, holder string, now, until int64) (bool, error) {
	// One read: the slots held, and whether holder holds one of them.
	var text string
	var holds int
	if err := c.QueryRow(ctx, d.sql("SELECT CAST(coalesce({jsonagg}(slot), '[]') AS text), coalesce(max(CASE WHEN holder = $3 THEN 1 ELSE 0 END), 0) "+
		"FROM {s}.limit_permits WHERE scope = $1 AND until > $2"), p.Scope, now, holder).Scan(&text, &holds); err != nil {
		return false, d.Wrap("take a permit", p.Scope, err)
	}
	if holds == 1 {
		n, err := c.Exec(ctx, d.sql("UPDATE {s}.limit_permits SET until = $3 WHERE scope = $1 AND holder = $2 AND until > $4"),
			p.Scope, holder, until, now)
		if err != nil || n > 0 {
			return n > 0, d.Wrap("take a permit", p.Scope, err)
		}
	}
	var held []int
	if err := json.Unmarshal([]byte(text), &held); err != nil {
		return false, fmt.Errorf("%s: take a permit of %q: read the slots held: %w", d.Name, p.Scope, err)
	}
	if len(held) >= p.MaxConcurrent {
		return false, nil
	}
	for slot := range p.MaxConcurrent {
		if slices.Contains(held, slot) {
			continue
		}
		// Taken meanwhile by another transaction, the slot is not
		// free: the condition sees that taker's row.
		n, err := c.Exec(ctx, d.sql("INSERT INTO {s}.limit_permits AS p (scope, slot, holder, until) VALUES ($1, $2, $3, $4) "+
			"ON CONFLICT (scope, slot) DO UPDATE SET holder = excluded.holder, until = excluded.until WHERE p.until <= $5"),
			p.Scope, slot, holder, until, now)
		if err != nil {
			return false, d.Wrap("take a permit", p.Scope, err)
		}
		if n > 0 {
			return true, nil
		}
	}
	return false, nil
}

// ExtendPermits implements [scheduler.Limiter.ExtendPermits] over c.
func (d *Dialect) ExtendPermits(ctx context.Context, c Conn, holder string, now, until time.Time) (int, error) {
	n, err := c.Exec(ctx, d.sql("UPDATE {s}.limit_permits SET until = $2 WHERE holder = $1 AND until > $3"), holder, NanosInt(until), NanosInt(now))
	return int(n), d.Wrap("extend permits", holder, err)
}

// PrunePermits deletes, over c, the rows of rates whose next start was
// free before before and of concurrency permits that expired before it
// (see [scheduler.PruneRequest.LimitsBefore]).
func (d *Dialect) PrunePermits(ctx context.Context, c Conn, before time.Time) error {
	if before.IsZero() {
		return nil
	}
	b := NanosInt(before)
	if _, err := c.Exec(ctx, d.sql("DELETE FROM {s}.limit_rates WHERE next < $1"), b); err != nil {
		return fmt.Errorf("forget rates: %w", err)
	}
	if _, err := c.Exec(ctx, d.sql("DELETE FROM {s}.limit_permits WHERE until < $1"), b); err != nil {
		return fmt.Errorf("forget permits: %w", err)
	}
	return nil
}

// ReleasePermits implements [scheduler.Limiter.ReleasePermits] over c.
func (d *Dialect) ReleasePermits(ctx context.Context, c Conn, holder string) error {
	_, err := c.Exec(ctx, d.sql("DELETE FROM {s}.limit_permits WHERE holder = $1"), holder)
	return d.Wrap("release permits", holder, err)
}
