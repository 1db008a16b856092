package memory

import (
	"context"
	"sync"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

var _ scheduler.Limiter = (*Store)(nil)

// permits are the permits of collections' limits: scopes by name, and the
// scopes in which each holder holds a concurrency permit. They have a lock
// of their own, so that taking a permit does not wait for the jobs'.
type permits struct {
	mu     sync.Mutex
	scopes map[string]*scope
	held   map[string][]string // holder -> the scopes of its permits
}

// scope is the state of one permit scope.
type scope struct {
	holders map[string]time.Time // concurrency permits: holder -> expiry
	next    time.Time            // the rate's next grant; zero: any time
}

// count reports the unexpired concurrency permits of sc at now, and
// whether holder holds one of them.
func (sc *scope) count(holder string, now time.Time) (n int, holds bool) {
	for h, until := range sc.holders {
		if until.After(now) {
			n++
			holds = holds || h == holder
		}
	}
	return n, holds
}

// AcquirePermits implements [scheduler.Limiter].
func (s *Store) AcquirePermits(ctx context.Context, req scheduler.PermitRequest) (scheduler.PermitGrant, error) {
	if err := ctx.Err(); err != nil {
		return scheduler.PermitGrant{}, err
	}
	p := &s.permits
	p.mu.Lock()
	defer p.mu.Unlock()
	// Check every permit before taking any: all or nothing.
	for i, pm := range req.Permits {
		sc := p.scopes[pm.Scope]
		if sc == nil {
			continue
		}
		if pm.MaxConcurrent > 0 {
			if n, holds := sc.count(req.Holder, req.Now); !holds && n >= pm.MaxConcurrent {
				return scheduler.PermitGrant{Refused: i}, nil
			}
		}
		if pm.Interval > 0 && sc.next.After(req.Now) {
			return scheduler.PermitGrant{Refused: i, RetryAt: sc.next}, nil
		}
	}
	if p.scopes == nil {
		p.scopes, p.held = make(map[string]*scope), make(map[string][]string)
	}
	for _, pm := range req.Permits {
		sc := p.scopes[pm.Scope]
		if sc == nil {
			sc = &scope{holders: make(map[string]time.Time)}
			p.scopes[pm.Scope] = sc
		}
		if pm.MaxConcurrent > 0 {
			for h, until := range sc.holders { // expired permits go
				if !until.After(req.Now) {
					delete(sc.holders, h)
					p.forget(h, pm.Scope)
				}
			}
			if _, ok := sc.holders[req.Holder]; !ok {
				p.held[req.Holder] = append(p.held[req.Holder], pm.Scope)
			}
			sc.holders[req.Holder] = req.Until
		}
		if pm.Interval > 0 {
			sc.next = req.Now.Add(pm.Interval)
		}
	}
	return scheduler.PermitGrant{Granted: true}, nil
}

// forget removes scope from the scopes of holder. p.mu is held.
func (p *permits) forget(holder, scope string) {
	l := p.held[holder]
	for i, sc := range l {
		if sc == scope {
			l = append(l[:i], l[i+1:]...)
			break
		}
	}
	if len(l) == 0 {
		delete(p.held, holder)
	} else {
		p.held[holder] = l
	}
}

// prune forgets the rates whose next start was free before before and the
// concurrency permits that expired before it; zero forgets none.
func (p *permits) prune(before time.Time) {
	if before.IsZero() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for name, sc := range p.scopes {
		for h, until := range sc.holders {
			if until.Before(before) {
				delete(sc.holders, h)
				p.forget(h, name)
			}
		}
		if sc.next.Before(before) {
			sc.next = time.Time{}
		}
		if len(sc.holders) == 0 && sc.next.IsZero() {
			delete(p.scopes, name)
		}
	}
}

// ExtendPermits implements [scheduler.Limiter].
func (s *Store) ExtendPermits(ctx context.Context, holder string, now, until time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	p := &s.permits
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, name := range p.held[holder] {
		if hs := p.scopes[name].holders; hs[holder].After(now) {
			hs[holder] = until
			n++
		}
	}
	return n, nil
}

// ReleasePermits implements [scheduler.Limiter].
func (s *Store) ReleasePermits(ctx context.Context, holder string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p := &s.permits
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, name := range p.held[holder] {
		sc := p.scopes[name]
		delete(sc.holders, holder)
		if len(sc.holders) == 0 && sc.next.IsZero() {
			delete(p.scopes, name)
		}
	}
	delete(p.held, holder)
	return nil
}
