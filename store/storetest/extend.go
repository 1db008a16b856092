package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// leaseExtender returns s as a [scheduler.LeaseExtender], skipping the
// test for a store without that capability.
func leaseExtender(t *testing.T, s scheduler.Store) scheduler.LeaseExtender {
	t.Helper()
	return capability[scheduler.LeaseExtender](t, s)
}

// wantLease checks the lease and the Version of job c/name.
func wantLease(t *testing.T, s scheduler.Store, name, owner string, until time.Time, version int64) {
	t.Helper()
	got, err := s.GetJob(ctx, "c", name)
	if err != nil {
		t.Fatalf("GetJob(c/%s): %v", name, err)
	}
	if got.LeaseOwner != owner || !got.LeaseUntil.Equal(until) || got.Version != version {
		t.Errorf("c/%s: lease owner %q until %v, version %d; want %q until %v, version %d",
			name, got.LeaseOwner, got.LeaseUntil, got.Version, owner, until, version)
	}
}

// testExtendLeases: each job's lease is extended, or not, on its own, with
// ExtendLease's errors: held (also once expired, when nobody claimed it
// since) is extended; held by another, not leased, or asked by an empty
// owner fails with ErrLeaseLost; a missing job or collection with
// ErrNotFound. No Version changes.
func testExtendLeases(t *testing.T, s scheduler.Store) {
	e := leaseExtender(t, s)
	if errs := e.ExtendLeases(ctx, "me", t0.Add(time.Hour), nil); errs != nil {
		t.Errorf("ExtendLeases(no jobs) = %v, want nil", errs)
	}
	putCollection(t, s, "c", 0)
	putJob(t, s, "c", "held", t0)
	putJob(t, s, "c", "expired", t0)
	putJob(t, s, "c", "other", t0.Add(time.Second))
	putJob(t, s, "c", "free", t0.Add(time.Hour))
	mine, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 10)
	if err != nil || len(mine) != 2 {
		t.Fatalf("ClaimDue = %v, %v; want c/held and c/expired", names(mine), err)
	}
	theirs, err := s.ClaimDue(ctx, t0.Add(time.Second), "them", t0.Add(time.Hour), 10)
	if err != nil || len(theirs) != 1 {
		t.Fatalf("ClaimDue = %v, %v; want c/other", names(theirs), err)
	}
	v := map[string]int64{}
	for _, n := range []string{"held", "expired", "other", "free"} {
		j, err := s.GetJob(ctx, "c", n)
		if err != nil {
			t.Fatalf("GetJob(c/%s): %v", n, err)
		}
		v[n] = j.Version
	}
	// held's lease is extended first, so that expired's has passed when
	// the second call comes: nobody claimed it since, so me still holds it.
	until := t0.Add(2 * time.Minute)
	if errs := e.ExtendLeases(ctx, "me", until, []scheduler.JobKey{{Collection: "c", Name: "held"}}); errs != nil && errs[0] != nil {
		t.Fatalf("ExtendLeases(c/held) = %v, want it extended", errs)
	}
	until = t0.Add(3 * time.Minute)
	jobs := []scheduler.JobKey{
		{Collection: "c", Name: "held"},
		{Collection: "c", Name: "other"},
		{Collection: "c", Name: "expired"},
		{Collection: "c", Name: "missing"},
		{Collection: "c", Name: "free"},
		{Collection: "nope", Name: "held"},
	}
	errs := oneEach(t, "ExtendLeases", e.ExtendLeases(ctx, "me", until, jobs), len(jobs))
	want := []error{nil, scheduler.ErrLeaseLost, nil, scheduler.ErrNotFound, scheduler.ErrLeaseLost, scheduler.ErrNotFound}
	for i, w := range want {
		what := fmt.Sprintf("ExtendLeases(me): job %s/%s", jobs[i].Collection, jobs[i].Name)
		if w == nil {
			if errs[i] != nil {
				t.Errorf("%s: %v, want it extended", what, errs[i])
			}
			continue
		}
		wantErr(t, what, errs[i], w)
	}
	wantLease(t, s, "held", "me", until, v["held"])
	wantLease(t, s, "expired", "me", until, v["expired"])
	wantLease(t, s, "other", "them", t0.Add(time.Hour), v["other"])
	wantLease(t, s, "free", "", time.Time{}, v["free"])

	// An empty owner holds no lease, leased or not.
	errs = oneEach(t, "ExtendLeases", e.ExtendLeases(ctx, "", t0.Add(time.Hour), jobs), len(jobs))
	want = []error{scheduler.ErrLeaseLost, scheduler.ErrLeaseLost, scheduler.ErrLeaseLost, scheduler.ErrNotFound, scheduler.ErrLeaseLost, scheduler.ErrNotFound}
	for i, w := range want {
		wantErr(t, fmt.Sprintf(`ExtendLeases(""): job %s/%s`, jobs[i].Collection, jobs[i].Name), errs[i], w)
	}
	wantLease(t, s, "held", "me", until, v["held"])
	wantLease(t, s, "other", "them", t0.Add(time.Hour), v["other"])
	wantLease(t, s, "free", "", time.Time{}, v["free"])

	// The extended leases hold: another claimant finds nothing until
	// they end, and then claims them.
	if got, _ := s.ClaimDue(ctx, until.Add(-time.Second), "them", until.Add(time.Minute), 10); len(got) != 0 {
		t.Errorf("ClaimDue during the extended leases = %v, want nothing", names(got))
	}
	if got, _ := s.ClaimDue(ctx, until, "them", until.Add(time.Minute), 10); len(got) != 2 {
		t.Errorf("ClaimDue when the extended leases ended = %v, want c/held and c/expired", names(got))
	}
}

// testExtendLeasesMany: the answers of a call over many jobs, some held
// and some not, are in the order of its jobs.
func testExtendLeasesMany(t *testing.T, s scheduler.Store) {
	e := leaseExtender(t, s)
	const n = 300
	putCollection(t, s, "c", n+1)
	var jobs []scheduler.JobKey
	for i := range n {
		name := fmt.Sprintf("j%03d", i)
		putJob(t, s, "c", name, t0)
		jobs = append(jobs, scheduler.JobKey{Collection: "c", Name: name})
	}
	if got, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), n); err != nil || len(got) != n {
		t.Fatalf("ClaimDue = %d jobs, %v; want %d", len(got), err, n)
	}
	// Every third job is given to another owner: its lease expires, and
	// the other claims it.
	for i := 0; i < n; i += 3 {
		if err := s.ExtendLease(ctx, "c", jobs[i].Name, "me", t0.Add(time.Second)); err != nil {
			t.Fatalf("ExtendLease(c/%s): %v", jobs[i].Name, err)
		}
	}
	if got, err := s.ClaimDue(ctx, t0.Add(time.Second), "them", t0.Add(time.Hour), n); err != nil || len(got) != (n+2)/3 {
		t.Fatalf("ClaimDue by another = %d jobs, %v; want %d", len(got), err, (n+2)/3)
	}
	// Unordered, with a missing job in the middle.
	jobs = append(jobs[n/2:], append([]scheduler.JobKey{{Collection: "c", Name: "missing"}}, jobs[:n/2]...)...)
	until := t0.Add(2 * time.Minute)
	errs := oneEach(t, "ExtendLeases", e.ExtendLeases(ctx, "me", until, jobs), len(jobs))
	for i, k := range jobs {
		var idx int
		if _, err := fmt.Sscanf(k.Name, "j%03d", &idx); err != nil {
			wantErr(t, "ExtendLeases: missing job", errs[i], scheduler.ErrNotFound)
			continue
		}
		if idx%3 == 0 {
			wantErr(t, "ExtendLeases: job c/"+k.Name+" of another owner", errs[i], scheduler.ErrLeaseLost)
			continue
		}
		if errs[i] != nil {
			t.Errorf("ExtendLeases: job c/%s: %v, want it extended", k.Name, errs[i])
		}
	}
	got, err := s.ListJobs(ctx, "c", scheduler.JobFilter{})
	if err != nil {
		t.Fatalf("ListJobs: %v", err)
	}
	for _, j := range got {
		var idx int
		fmt.Sscanf(j.Name, "j%03d", &idx)
		owner, end := "me", until
		if idx%3 == 0 {
			owner, end = "them", t0.Add(time.Hour)
		}
		if j.LeaseOwner != owner || !j.LeaseUntil.Equal(end) {
			t.Errorf("c/%s: lease owner %q until %v; want %q until %v", j.Name, j.LeaseOwner, j.LeaseUntil, owner, end)
		}
	}
}

// testExtendLeasesKeys: keys whose names need escaping or run together
// when joined, and a job named twice, which gets the same answer in both
// places.
func testExtendLeasesKeys(t *testing.T, s scheduler.Store) {
	e := leaseExtender(t, s)
	for _, c := range []string{"a", "a/b", `q"\`} {
		putCollection(t, s, c, 10)
	}
	keys := []scheduler.JobKey{
		{Collection: "a/b", Name: "c"},
		{Collection: "a", Name: "b/c"},
		{Collection: `q"\`, Name: `x"y\z` + "\u2028\t<&>é"},
		{Collection: "a", Name: "123"},
	}
	for _, k := range keys {
		putJob(t, s, k.Collection, k.Name, t0)
	}
	if got, err := s.ClaimDue(ctx, t0, "me", t0.Add(time.Minute), 10); err != nil || len(got) != len(keys) {
		t.Fatalf("ClaimDue = %v, %v; want %d jobs", names(got), err, len(keys))
	}
	ask := append(slices.Clone(keys), scheduler.JobKey{Collection: "a", Name: "c"}, scheduler.JobKey{Collection: "a/b/c", Name: "x"})
	until := t0.Add(time.Hour)
	errs := oneEach(t, "ExtendLeases", e.ExtendLeases(ctx, "me", until, ask), len(ask))
	for i := range keys {
		if errs[i] != nil {
			t.Errorf("ExtendLeases: job %q/%q: %v, want it extended", keys[i].Collection, keys[i].Name, errs[i])
		}
	}
	var nf *scheduler.NotFoundError
	if !errors.As(errs[4], &nf) || nf.Collection != "a" || nf.Job != "c" {
		t.Errorf("ExtendLeases: missing job a/c: %v, want a NotFoundError of the job", errs[4])
	}
	if !errors.As(errs[5], &nf) || nf.Collection != "a/b/c" || nf.Job != "" {
		t.Errorf("ExtendLeases: job of missing collection a/b/c: %v, want a NotFoundError of the collection", errs[5])
	}
	for _, k := range keys {
		if j, err := s.GetJob(ctx, k.Collection, k.Name); err != nil || !j.LeaseUntil.Equal(until) {
			t.Errorf("%q/%q: lease until %v (%v), want %v", k.Collection, k.Name, j.LeaseUntil, err, until)
		}
	}
	// A job named twice: both places extended, or neither.
	until = t0.Add(2 * time.Hour)
	dup := []scheduler.JobKey{keys[0], keys[1], keys[0], {Collection: "a", Name: "c"}, {Collection: "a", Name: "c"}}
	errs = oneEach(t, "ExtendLeases(a job named twice)", e.ExtendLeases(ctx, "me", until, dup), len(dup))
	if errs[0] != nil || errs[1] != nil || errs[2] != nil {
		t.Errorf("ExtendLeases of a held job named twice = %v, want it extended in both places", errs)
	}
	wantErr(t, "ExtendLeases: missing job named twice, first", errs[3], scheduler.ErrNotFound)
	wantErr(t, "ExtendLeases: missing job named twice, second", errs[4], scheduler.ErrNotFound)
	if j, err := s.GetJob(ctx, keys[0].Collection, keys[0].Name); err != nil || !j.LeaseUntil.Equal(until) {
		t.Errorf("job named twice: lease until %v (%v), want %v", j.LeaseUntil, err, until)
	}
}
