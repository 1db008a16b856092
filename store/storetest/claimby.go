package storetest

import (
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// aheadClaimer returns s as a [scheduler.AheadClaimer], skipping the test
// for a store without that capability.
func aheadClaimer(t *testing.T, s scheduler.Store) scheduler.AheadClaimer {
	t.Helper()
	return capability[scheduler.AheadClaimer](t, s)
}

// capability returns s as a T, an optional interface of a store, skipping
// the test for a store that is not one.
func capability[T any](t *testing.T, s scheduler.Store) T {
	t.Helper()
	c, ok := s.(T)
	if !ok {
		t.Skipf("%T is not a %T", s, (*T)(nil))
	}
	return c
}

func claimBy(t *testing.T, a scheduler.AheadClaimer, now, dueBy time.Time, owner string) []*scheduler.JobRecord {
	t.Helper()
	got, err := a.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: now, DueBy: dueBy, Owner: owner, LeaseUntil: dueBy.Add(10 * time.Minute), Limit: 10})
	if err != nil {
		t.Fatalf("ClaimDueBy(now %v, by %v, %s): %v", now, dueBy, owner, err)
	}
	return got
}

// testClaimDueBy: jobs due by the horizon are claimed, earliest first; a
// lease is taken only once it has expired at now, however soon it ends.
func testClaimDueBy(t *testing.T, s scheduler.Store) {
	a := aheadClaimer(t, s)
	putCollection(t, s, "c", 0)
	putJob(t, s, "c", "soon", t0.Add(30*time.Second))
	putJob(t, s, "c", "now", t0)
	putJob(t, s, "c", "later", t0.Add(2*time.Minute))
	putJob(t, s, "c", "leased", t0.Add(-time.Minute))
	putJob(t, s, "c", "short", t0.Add(40*time.Second))
	// leased is under b's lease until t0+20s; short is due at t0+40s
	// under b's lease until t0+20s (a lease shortened by ExtendLease).
	if got, err := s.ClaimDue(ctx, t0.Add(-time.Minute), "b", t0.Add(20*time.Second), 1); err != nil || !equal(names(got), []string{"c/leased"}) {
		t.Fatalf("ClaimDue(b) = %v, %v; want c/leased", names(got), err)
	}
	if got := claimBy(t, a, t0.Add(-time.Minute), t0.Add(40*time.Second), "b"); !equal(names(got), []string{"c/now", "c/soon", "c/short"}) {
		t.Fatalf("ClaimDueBy(b) = %v, want c/now, c/soon, c/short", names(got))
	}
	for _, n := range []string{"now", "soon"} {
		if err := s.Record(ctx, "b", mustGet(t, s, "c", n), nil); err != nil {
			t.Fatalf("Record(%s): %v", n, err)
		}
	}
	if err := s.ExtendLease(ctx, "c", "short", "b", t0.Add(20*time.Second)); err != nil {
		t.Fatalf("ExtendLease(short): %v", err)
	}

	if _, err := a.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: t0, DueBy: t0.Add(-time.Second), Owner: "a", LeaseUntil: t0.Add(time.Minute), Limit: 10}); err == nil {
		t.Errorf("ClaimDueBy with DueBy before Now: no error")
	}
	if _, err := a.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: t0, DueBy: t0.Add(time.Minute), Owner: "a", LeaseUntil: t0.Add(time.Minute), Limit: 10}); err == nil {
		t.Errorf("ClaimDueBy with LeaseUntil not after DueBy: no error")
	}
	if got, err := a.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: t0, DueBy: t0.Add(time.Minute), Owner: "a", LeaseUntil: t0.Add(2 * time.Minute)}); err != nil || len(got) != 0 {
		t.Errorf("ClaimDueBy with Limit 0 = %v, %v; want nothing", names(got), err)
	}
	// Limit is checked first: a claim of nothing is nothing, whatever else
	// it asks.
	if got, err := a.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: t0, DueBy: t0.Add(-time.Second), Owner: "a", LeaseUntil: t0}); err != nil || len(got) != 0 {
		t.Errorf("ClaimDueBy with Limit 0 and DueBy before Now = %v, %v; want nothing, no error", names(got), err)
	}

	// At t0+10s, b's leases end within the horizon but have not expired.
	got := claimBy(t, a, t0.Add(10*time.Second), t0.Add(time.Minute), "a")
	if !equal(names(got), []string{"c/now", "c/soon"}) {
		t.Fatalf("ClaimDueBy(a, now t0+10s, by t0+1m) = %v, want c/now, c/soon (not b's live leases, not later)", names(got))
	}
	for _, r := range got {
		if r.LeaseOwner != "a" || !r.LeaseUntil.Equal(t0.Add(11*time.Minute)) || r.PreviousLeaseOwner != "" || !r.PreviousLeaseUntil.IsZero() {
			t.Errorf("claimed %s: lease %q until %v, previous %q until %v; want a until %v, no previous",
				r.Name, r.LeaseOwner, r.LeaseUntil, r.PreviousLeaseOwner, r.PreviousLeaseUntil, t0.Add(11*time.Minute))
		}
	}
	// At t0+20s b's leases have expired: they are taken over.
	got = claimBy(t, a, t0.Add(20*time.Second), t0.Add(time.Minute), "a")
	if !equal(names(got), []string{"c/leased", "c/short"}) {
		t.Fatalf("ClaimDueBy(a, now t0+20s) = %v, want c/leased, c/short", names(got))
	}
	for _, r := range got {
		if r.PreviousLeaseOwner != "b" || !r.PreviousLeaseUntil.Equal(t0.Add(20*time.Second)) {
			t.Errorf("claimed %s: previous lease %q until %v, want b until %v", r.Name, r.PreviousLeaseOwner, r.PreviousLeaseUntil, t0.Add(20*time.Second))
		}
	}
}

func mustGet(t *testing.T, s scheduler.Store, coll, name string) *scheduler.JobRecord {
	t.Helper()
	j, err := s.GetJob(ctx, coll, name)
	if err != nil {
		t.Fatalf("GetJob(%s/%s): %v", coll, name, err)
	}
	return j
}

// testGiveBack: a claim given back leaves the lease as it was before the
// claim, so that the next claim reports the same previous owner; only
// its holder gives it back, and a write after the claim stays.
func testGiveBack(t *testing.T, s scheduler.Store) {
	a := aheadClaimer(t, s)
	putCollection(t, s, "c", 0)
	putJob(t, s, "c", "j", t0)
	putJob(t, s, "c", "k", t0.Add(30*time.Second))
	putJob(t, s, "c", "m", t0.Add(30*time.Second))
	if errs := a.GiveBack(ctx, "a", nil); len(errs) != 0 {
		t.Errorf("GiveBack(nothing) = %v, want no errors", errs)
	}
	// b claims j and dies; its lease ends at t0+1m.
	if got, err := s.ClaimDue(ctx, t0, "b", t0.Add(time.Minute), 1); err != nil || len(got) != 1 {
		t.Fatalf("ClaimDue(b) = %v, %v; want c/j", names(got), err)
	}
	now := t0.Add(2 * time.Minute)
	got := claimBy(t, a, now, now.Add(time.Second), "a")
	// k and m are ready at their due instants, j at b's lease end.
	if len(got) != 3 || got[2].Name != "j" {
		t.Fatalf("ClaimDueBy(a) = %v, want c/k and c/m, then c/j", names(got))
	}
	k, m, j := got[0], got[1], got[2]
	if k.Name == "m" {
		k, m = m, k
	}
	wantErr(t, "GiveBack by another owner", a.GiveBack(ctx, "x", []*scheduler.JobRecord{j})[0], scheduler.ErrLeaseLost)
	if r := mustGet(t, s, "c", "j"); r.LeaseOwner != "a" {
		t.Errorf("after a GiveBack by another owner, lease owner %q, want a (unchanged)", r.LeaseOwner)
	}
	// A write after the claim (PutJob keeps the lease) stays.
	m2 := mustGet(t, s, "c", "m")
	m2.Schedule.DueAt = t0.Add(time.Hour)
	if err := s.PutJob(ctx, m2); err != nil {
		t.Fatalf("PutJob(m): %v", err)
	}
	if err := s.DeleteJob(ctx, "c", "gone", ""); err == nil {
		t.Fatalf("DeleteJob(gone): no error")
	}
	putJob(t, s, "c", "gone", t0)
	gone, err := s.ClaimDue(ctx, now, "a", now.Add(time.Minute), 1)
	if err != nil || !equal(names(gone), []string{"c/gone"}) {
		t.Fatalf("ClaimDue(gone) = %v, %v", names(gone), err)
	}
	if err := s.DeleteJob(ctx, "c", "gone", ""); err != nil {
		t.Fatalf("DeleteJob(gone): %v", err)
	}
	versions := map[string]int64{}
	for _, n := range []string{"j", "k", "m"} {
		versions[n] = mustGet(t, s, "c", n).Version
	}
	errs := a.GiveBack(ctx, "a", []*scheduler.JobRecord{j, gone[0], k, m})
	if len(errs) != 4 {
		t.Fatalf("GiveBack of 4 = %d errors, want 4", len(errs))
	}
	for i, n := range []string{"j", "", "k", "m"} {
		if n != "" && errs[i] != nil {
			t.Errorf("GiveBack(%s): %v", n, errs[i])
		}
	}
	wantErr(t, "GiveBack of a deleted job", errs[1], scheduler.ErrNotFound)
	for _, n := range []string{"j", "k", "m"} {
		if v := mustGet(t, s, "c", n).Version; v != versions[n] {
			t.Errorf("GiveBack(%s) changed the Version from %d to %d", n, versions[n], v)
		}
	}
	rj := mustGet(t, s, "c", "j")
	if rj.LeaseOwner != "b" || !rj.LeaseUntil.Equal(t0.Add(time.Minute)) {
		t.Errorf("j given back: lease %q until %v, want b's again, until %v", rj.LeaseOwner, rj.LeaseUntil, t0.Add(time.Minute))
	}
	for _, n := range []string{"k", "m"} {
		if r := mustGet(t, s, "c", n); r.LeaseOwner != "" || !r.LeaseUntil.IsZero() {
			t.Errorf("%s given back: lease %q until %v, want none", n, r.LeaseOwner, r.LeaseUntil)
		}
	}
	if r := mustGet(t, s, "c", "m"); !r.Schedule.DueAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("m given back: due %v, want the put's %v", r.Schedule.DueAt, t0.Add(time.Hour))
	}
	if next, err := s.NextDue(ctx); err != nil || !next.Equal(t0.Add(30*time.Second)) {
		t.Errorf("NextDue after the give-back = %v, %v; want k's due instant %v", next, err, t0.Add(30*time.Second))
	}
	// The next claim takes b's lease over, as a's did.
	again, err := s.ClaimDue(ctx, now, "c", now.Add(time.Minute), 10)
	if err != nil || !equal(names(again), []string{"c/k", "c/j"}) {
		t.Fatalf("ClaimDue after the give-back = %v, %v; want c/k, c/j", names(again), err)
	}
	if r := again[1]; r.PreviousLeaseOwner != "b" || !r.PreviousLeaseUntil.Equal(t0.Add(time.Minute)) {
		t.Errorf("claim of j after the give-back: previous lease %q until %v, want b until %v", r.PreviousLeaseOwner, r.PreviousLeaseUntil, t0.Add(time.Minute))
	}
	if r := again[0]; r.PreviousLeaseOwner != "" {
		t.Errorf("claim of k after the give-back: previous lease owner %q, want none", r.PreviousLeaseOwner)
	}
}

// testGiveBackAfterClaimedAgain: a claim whose lease lapsed and that its
// owner then claimed again is not given back by the first claim's record:
// that would release the second claim, which its owner may be running,
// and let a third claim run the job beside it. The second claim's lease
// stays, with ErrLeaseLost for the first; the second is given back. A
// claim whose lease was extended since (its end moved, its Version not)
// is given back.
func testGiveBackAfterClaimedAgain(t *testing.T, s scheduler.Store) {
	a := aheadClaimer(t, s)
	putCollection(t, s, "c", 0)
	putJob(t, s, "c", "j", t0)
	putJob(t, s, "c", "k", t0.Add(time.Hour))
	first, err := a.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: t0.Add(-time.Second), DueBy: t0, Owner: "a", LeaseUntil: t0.Add(time.Minute), Limit: 1})
	if err != nil || len(first) != 1 {
		t.Fatalf("first ClaimDueBy(a) = %v, %v; want c/j", names(first), err)
	}
	// The first claim's lease lapses; a claims j again.
	now := t0.Add(time.Minute)
	again, err := s.ClaimDue(ctx, now, "a", now.Add(time.Minute), 1)
	if err != nil || len(again) != 1 {
		t.Fatalf("ClaimDue(a) once the lease lapsed = %v, %v; want c/j", names(again), err)
	}
	wantErr(t, "GiveBack of the first claim", a.GiveBack(ctx, "a", first)[0], scheduler.ErrLeaseLost)
	if r := mustGet(t, s, "c", "j"); r.LeaseOwner != "a" || !r.LeaseUntil.Equal(now.Add(time.Minute)) || r.Version != again[0].Version {
		t.Errorf("after the first claim's GiveBack: lease %q until %v, version %d; want the second claim's: a until %v, version %d",
			r.LeaseOwner, r.LeaseUntil, r.Version, now.Add(time.Minute), again[0].Version)
	}
	if got := claimBy(t, a, now, now, "b"); len(got) != 0 {
		t.Errorf("ClaimDueBy(b) while the second claim holds j = %v, want nothing", names(got))
	}
	if err := a.GiveBack(ctx, "a", again)[0]; err != nil {
		t.Fatalf("GiveBack of the second claim: %v", err)
	}
	if r := mustGet(t, s, "c", "j"); r.LeaseOwner != "a" || !r.LeaseUntil.Equal(t0.Add(time.Minute)) {
		t.Errorf("second claim given back: lease %q until %v, want the lapsed one it took over (a until %v)", r.LeaseOwner, r.LeaseUntil, t0.Add(time.Minute))
	}
	var k []*scheduler.JobRecord // j's lease has lapsed too: claimed again, and left so
	for _, r := range claimBy(t, a, t0.Add(time.Hour-time.Second), t0.Add(time.Hour), "a") {
		if r.Name == "k" {
			k = append(k, r)
		}
	}
	if len(k) != 1 {
		t.Fatalf("ClaimDueBy(a) took no c/k")
	}
	if err := s.ExtendLease(ctx, "c", "k", "a", k[0].LeaseUntil.Add(time.Minute)); err != nil {
		t.Fatalf("ExtendLease(k): %v", err)
	}
	if err := a.GiveBack(ctx, "a", k)[0]; err != nil {
		t.Errorf("GiveBack of a claim extended since: %v", err)
	}
	if r := mustGet(t, s, "c", "k"); r.LeaseOwner != "" || !r.LeaseUntil.IsZero() {
		t.Errorf("k given back after an extension: lease %q until %v, want none", r.LeaseOwner, r.LeaseUntil)
	}
}

// testGiveBackZeroPreviousEnd: a claim given back whose PreviousLeaseOwner
// is set but whose PreviousLeaseUntil is zero (a record not from a claim,
// or a store's that leaves it out) puts back a lease that has ended: the
// job is ready at once, to any owner, as one whose lease expired.
func testGiveBackZeroPreviousEnd(t *testing.T, s scheduler.Store) {
	a := aheadClaimer(t, s)
	putCollection(t, s, "c", 0)
	putJob(t, s, "c", "j", t0)
	got := claimBy(t, a, t0, t0.Add(time.Second), "a")
	if len(got) != 1 {
		t.Fatalf("ClaimDueBy(a) = %v, want c/j", names(got))
	}
	j := got[0]
	j.PreviousLeaseOwner, j.PreviousLeaseUntil = "p", time.Time{}
	if err := a.GiveBack(ctx, "a", []*scheduler.JobRecord{j})[0]; err != nil {
		t.Fatalf("GiveBack: %v", err)
	}
	if r := mustGet(t, s, "c", "j"); r.LeaseOwner != "p" || !r.LeaseUntil.IsZero() {
		t.Errorf("given back: lease %q until %v, want p's, with no end", r.LeaseOwner, r.LeaseUntil)
	}
	if next, err := s.NextDue(ctx); err != nil || !next.Equal(t0) {
		t.Errorf("NextDue after the GiveBack = %v, %v; want %v, the job's due instant", next, err, t0)
	}
	again := claimBy(t, a, t0, t0.Add(time.Second), "b")
	if len(again) != 1 || again[0].PreviousLeaseOwner != "p" {
		var prev []string
		for _, r := range again {
			prev = append(prev, r.PreviousLeaseOwner)
		}
		t.Errorf("ClaimDueBy(b) after the GiveBack = %v (previous owners %q), want c/j, taken over from p", names(again), prev)
	}
}

// testGiveBackAfterRecreate gives back a claim of a job that was deleted
// and created again since, under the same name, and claimed by the same
// owner: the claim is of a job that is gone, so the give-back fails with
// ErrNotFound and leaves the new job's lease alone (giving it back would
// let another instance claim the new job while its claim runs).
func testGiveBackAfterRecreate(t *testing.T, s scheduler.Store, atOnce bool) {
	a := aheadClaimer(t, s)
	old, fresh := claimRecreated(t, s, atOnce)
	wantErr(t, "GiveBack(claim of the deleted job)", a.GiveBack(ctx, "me", []*scheduler.JobRecord{old})[0], scheduler.ErrNotFound)
	wantUntouched(t, s, fresh)
	if r := mustGet(t, s, "c", "j"); !r.LeaseUntil.Equal(fresh.LeaseUntil) {
		t.Errorf("the new job's lease ends at %v after the old claim's give-back, want %v", r.LeaseUntil, fresh.LeaseUntil)
	}
	if err := a.GiveBack(ctx, "me", []*scheduler.JobRecord{fresh})[0]; err != nil {
		t.Errorf("GiveBack(claim of the new job): %v", err)
	}
}
