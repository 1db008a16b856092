package scheduler

import (
	"context"
	"time"
)

// Limiter is an optional interface of a [Store]: it keeps the permits of
// job collections' limits ([Limit]) where every instance sharing the store
// sees them, so that a limit holds across instances with no server of its
// own. The Scheduler finds it by type assertion; with a store that is not
// a Limiter, collections' limits are not enforced (New logs a warning the
// first time an attempt of a limited collection runs). The stores of this
// module are Limiters, and package storetest's RunLimiter checks a store's
// permits across instances.
//
// A permit of a concurrency limit is leased like a job: it is taken with
// an expiry, renewed while its attempt runs, and given back when it ends,
// so that the permits of an instance that died return once their expiry
// passes. A permit of a rate is a start: the store keeps, per scope, the
// instant the next start may be granted (the generic cell rate algorithm
// without bursts), moved on by the interval at each grant.
type Limiter interface {
	// AcquirePermits takes every permit of req for req.Holder, or none
	// of them: a refusal (or an error) leaves the store as it was. A
	// concurrency permit is free when fewer than MaxConcurrent
	// unexpired permits of its scope are held; one that req.Holder
	// already holds is granted again, its expiry moved to req.Until (a
	// take retried after its reply was lost). A rate permit is free
	// when req.Now is at or after the instant the scope's next start may
	// be granted (any instant when the scope has had none), which then
	// becomes req.Now plus the interval. The store reads no clock:
	// expiries are compared with req.Now.
	AcquirePermits(ctx context.Context, req PermitRequest) (PermitGrant, error)
	// ExtendPermits moves the expiry of every concurrency permit holder
	// holds unexpired at now to until, and returns how many it moved: a
	// permit that expired is lost to its holder, even when no other
	// holder took it yet, and is not extended. Holding none is not an
	// error (it returns 0).
	ExtendPermits(ctx context.Context, holder string, now, until time.Time) (held int, err error)
	// ReleasePermits gives back every concurrency permit holder holds;
	// starts counted by rates are not given back. Holding none is not an
	// error.
	ReleasePermits(ctx context.Context, holder string) error
}

// PermitRequest is a request for permits, for [Limiter.AcquirePermits].
type PermitRequest struct {
	// Holder names the attempt that takes them, unique among the
	// attempts of every instance, those of one occurrence included (the
	// Scheduler uses the collection, job, execution tag and instance ID
	// and a random word): an attempt that re-runs an occurrence whose
	// lease lapsed must not be granted, extend or give back the permits
	// of the attempt it replaces, which may still run.
	Holder string
	// Now is the instant of the request; Until is when the concurrency
	// permits taken expire unless extended.
	Now, Until time.Time
	// Permits are the permits to take, each of its own scope.
	Permits []Permit
}

// Permit is one permit of a [PermitRequest]: of a concurrency limit, a
// rate, or both, for one scope.
type Permit struct {
	// Scope names the permits counted together: the Scheduler uses the
	// collection, the limit's key and the key's value.
	Scope string
	// MaxConcurrent is the most unexpired permits of the scope held at
	// once; zero means no concurrency limit.
	MaxConcurrent int
	// Interval is the shortest time between two grants of the scope's
	// rate; zero means no rate.
	Interval time.Duration
}

// PermitGrant is the answer of [Limiter.AcquirePermits].
type PermitGrant struct {
	// Granted reports that every permit was taken.
	Granted bool
	// Refused is the index in PermitRequest.Permits of a permit that was
	// not free, when Granted is false.
	Refused int
	// RetryAt is, when the refused permit's rate was not free, the
	// instant it will be; zero when a concurrency permit was refused
	// (its holders' attempts may end at any time).
	RetryAt time.Time
}
