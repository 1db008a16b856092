package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// RunLimiter checks a store's [scheduler.Limiter] through stores: handles
// on one shared database (instances), or a single store. Each step uses
// the next handle, so that what one instance took the others see: the
// concurrency permits of a scope up to its maximum, all or nothing,
// granted again to their holder, given back, extended and expired; a
// rate's spacing and the instant it gives for a retry; and holders racing
// from every handle at once for fewer permits than they are, of one scope
// and of several taken together.
func RunLimiter(t *testing.T, stores []scheduler.Store) {
	t.Helper()
	ctx := context.Background()
	ls := make([]scheduler.Limiter, len(stores))
	for i, st := range stores {
		l, ok := st.(scheduler.Limiter)
		if !ok {
			t.Fatalf("the store %T is not a scheduler.Limiter", st)
		}
		ls[i] = l
	}
	step := 0
	next := func() scheduler.Limiter { step++; return ls[step%len(ls)] }
	// Scopes of their own per run, for a shared database kept between runs.
	run := time.Now().UnixNano()
	scope := func(name string) string { return fmt.Sprintf("limiter-%d/%s", run, name) }
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	acquire := func(holder string, now, until time.Time, ps ...scheduler.Permit) scheduler.PermitGrant {
		t.Helper()
		g, err := next().AcquirePermits(ctx, scheduler.PermitRequest{Holder: holder, Now: now, Until: until, Permits: ps})
		if err != nil {
			t.Fatalf("AcquirePermits(%s at %v): %v", holder, now, err)
		}
		return g
	}
	want := func(what string, got, want scheduler.PermitGrant) {
		t.Helper()
		if got != want {
			t.Errorf("%s: AcquirePermits = %+v, want %+v", what, got, want)
		}
	}
	granted := scheduler.PermitGrant{Granted: true}
	lease := t0.Add(time.Minute)

	t.Run("concurrency", func(t *testing.T) {
		two := scheduler.Permit{Scope: scope("two"), MaxConcurrent: 2}
		want("a takes one of two", acquire("a", t0, lease, two), granted)
		want("b takes the other", acquire("b", t0, lease, two), granted)
		want("c finds none", acquire("c", t0, lease, two), scheduler.PermitGrant{})
		want("a holds one already", acquire("a", t0, lease, two), granted)
		if err := next().ReleasePermits(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if err := next().ReleasePermits(ctx, "a"); err != nil {
			t.Errorf("ReleasePermits of a holder without permits: %v", err)
		}
		want("c takes the one a gave back", acquire("c", t0, lease, two), granted)
		want("d finds none", acquire("d", t0, lease, two), scheduler.PermitGrant{})
		for _, h := range []string{"b", "c"} {
			if err := next().ReleasePermits(ctx, h); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("all or nothing", func(t *testing.T) {
		free := scheduler.Permit{Scope: scope("free"), MaxConcurrent: 1}
		taken := scheduler.Permit{Scope: scope("taken"), MaxConcurrent: 1}
		want("x takes taken", acquire("x", t0, lease, taken), granted)
		want("y asks for free and taken", acquire("y", t0, lease, free, taken), scheduler.PermitGrant{Refused: 1})
		want("z finds free still free", acquire("z", t0, lease, free), granted)
		for _, h := range []string{"x", "z"} {
			if err := next().ReleasePermits(ctx, h); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("expiry", func(t *testing.T) {
		one := scheduler.Permit{Scope: scope("one"), MaxConcurrent: 1}
		want("a takes it until t0+10s", acquire("a", t0, t0.Add(10*time.Second), one), granted)
		want("b before it expires", acquire("b", t0.Add(9*time.Second), lease, one), scheduler.PermitGrant{})
		extend := func(holder string, now, until time.Time, wantN int) {
			t.Helper()
			n, err := next().ExtendPermits(ctx, holder, now, until)
			if err != nil {
				t.Fatalf("ExtendPermits(%q) at t0+%v: %v", holder, now.Sub(t0), err)
			}
			if n != wantN {
				t.Errorf("ExtendPermits(%q) at t0+%v = %d, want %d", holder, now.Sub(t0), n, wantN)
			}
		}
		extend("a", t0.Add(5*time.Second), t0.Add(20*time.Second), 1)
		want("b after the old expiry, before the extended one", acquire("b", t0.Add(15*time.Second), lease, one), scheduler.PermitGrant{})
		want("b once it expired", acquire("b", t0.Add(20*time.Second), lease, one), granted)
		want("a, whose permit expired", acquire("a", t0.Add(21*time.Second), lease, one), scheduler.PermitGrant{})
		extend("a", t0.Add(21*time.Second), t0.Add(50*time.Second), 0) // expired, now b's
		want("c while b holds it", acquire("c", t0.Add(22*time.Second), lease, one), scheduler.PermitGrant{})
		extend("nobody", t0, lease, 0)
		lapsed := scheduler.Permit{Scope: scope("lapsed"), MaxConcurrent: 1}
		want("e takes lapsed until t0+10s", acquire("e", t0, t0.Add(10*time.Second), lapsed), granted)
		extend("e", t0.Add(10*time.Second), t0.Add(40*time.Second), 0) // expired, though no one took it
		want("f once e's expired, unextended", acquire("f", t0.Add(11*time.Second), lease, lapsed), granted)
		for _, h := range []string{"a", "b", "f"} {
			if err := next().ReleasePermits(ctx, h); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("rate", func(t *testing.T) {
		rate := scheduler.Permit{Scope: scope("rate"), Interval: time.Second}
		want("the first start", acquire("a", t0, lease, rate), granted)
		want("half an interval later", acquire("b", t0.Add(500*time.Millisecond), lease, rate),
			scheduler.PermitGrant{RetryAt: t0.Add(time.Second)})
		want("an interval later", acquire("b", t0.Add(time.Second), lease, rate), granted)
		want("a rate and a concurrency limit refused by the rate", acquire("c", t0.Add(1500*time.Millisecond), lease,
			scheduler.Permit{Scope: scope("rate-free"), MaxConcurrent: 1}, rate),
			scheduler.PermitGrant{Refused: 1, RetryAt: t0.Add(2 * time.Second)})
		want("the concurrency permit was not taken", acquire("d", t0.Add(1500*time.Millisecond), lease,
			scheduler.Permit{Scope: scope("rate-free"), MaxConcurrent: 1}), granted)
		if err := next().ReleasePermits(ctx, "d"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("race", func(t *testing.T) {
		three := scheduler.Permit{Scope: scope("three"), MaxConcurrent: 3}
		rate := scheduler.Permit{Scope: scope("race-rate"), Interval: time.Hour}
		const holders = 24
		var mu sync.Mutex
		var got, gotRate int
		var wg sync.WaitGroup
		for i := range holders {
			l := ls[i%len(ls)]
			wg.Go(func() {
				g, err := l.AcquirePermits(ctx, scheduler.PermitRequest{Holder: fmt.Sprintf("h%d", i), Now: t0, Until: lease,
					Permits: []scheduler.Permit{three}})
				if err != nil {
					t.Errorf("AcquirePermits: %v", err)
				}
				r, err := l.AcquirePermits(ctx, scheduler.PermitRequest{Holder: fmt.Sprintf("r%d", i), Now: t0, Until: lease,
					Permits: []scheduler.Permit{rate}})
				if err != nil {
					t.Errorf("AcquirePermits: %v", err)
				}
				mu.Lock()
				if g.Granted {
					got++
				}
				if r.Granted {
					gotRate++
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		if got != 3 || gotRate != 1 {
			t.Errorf("%d holders racing from %d handles took %d of 3 permits and %d of 1 start, want all of them and no more",
				holders, len(ls), got, gotRate)
		}
		for i := range holders {
			if err := ls[0].ReleasePermits(ctx, fmt.Sprintf("h%d", i)); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("race over several scopes", func(t *testing.T) {
		// Holders ask for the permits of three scopes, in one order or
		// the reverse (the store takes them in an order of its own, so
		// that none waits for another forever), or for one of them and
		// one that is taken, which a refusal must give back.
		var abc [3]scheduler.Permit
		for i, name := range []string{"multi-a", "multi-b", "multi-c"} {
			abc[i] = scheduler.Permit{Scope: scope(name), MaxConcurrent: 2}
		}
		taken := scheduler.Permit{Scope: scope("multi-taken"), MaxConcurrent: 1}
		want("blocker takes multi-taken", acquire("blocker", t0, lease, taken), granted)
		const holders = 24
		var mu sync.Mutex
		var got, gotTaken int
		var wg sync.WaitGroup
		for i := range holders {
			l := ls[i%len(ls)]
			ps := []scheduler.Permit{abc[0], abc[1], abc[2]}
			switch i % 3 {
			case 1:
				ps = []scheduler.Permit{abc[2], abc[1], abc[0]}
			case 2:
				ps = []scheduler.Permit{abc[i%2], taken}
			}
			wg.Go(func() {
				g, err := l.AcquirePermits(ctx, scheduler.PermitRequest{Holder: fmt.Sprintf("m%d", i), Now: t0, Until: lease, Permits: ps})
				if err != nil {
					t.Errorf("AcquirePermits of %d scopes: %v", len(ps), err)
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case g.Granted && len(ps) == 2:
					gotTaken++
				case g.Granted:
					got++
				}
			})
		}
		wg.Wait()
		if got != 2 || gotTaken != 0 {
			t.Errorf("%d holders racing for three scopes of 2 permits took %d sets of them, want 2; %d took a taken permit, want 0", holders, got, gotTaken)
		}
		// What the refused took before their refusal was given back:
		// each scope holds the 2 permits granted, no more.
		for _, p := range abc {
			probe := scheduler.Permit{Scope: p.Scope, MaxConcurrent: 3}
			want("probe finds a third permit of "+p.Scope, acquire("probe", t0, lease, probe), granted)
			if err := next().ReleasePermits(ctx, "probe"); err != nil {
				t.Fatal(err)
			}
		}
		for i := range holders {
			if err := ls[0].ReleasePermits(ctx, fmt.Sprintf("m%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := ls[0].ReleasePermits(ctx, "blocker"); err != nil {
			t.Fatal(err)
		}
	})
}
