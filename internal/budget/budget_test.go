package budget

import (
	"testing"
	"time"
)

func TestTakeAndRefill(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := New[string](3, time.Minute, 10) // one more every 20s
	for i, want := range []int64{2, 1, 0} {
		if ok, left, wait := b.Take("a", t0); !ok || left != want || wait != 0 {
			t.Fatalf("Take %d = %v, %d, %v; want true, %d, 0", i, ok, left, wait, want)
		}
	}
	if ok, left, wait := b.Take("a", t0.Add(5*time.Second)); ok || left != 0 || wait != 15*time.Second {
		t.Errorf("Take of an empty budget = %v, %d, %v; want false, 0, 15s", ok, left, wait)
	}
	if ok, _, _ := b.Take("b", t0); !ok {
		t.Error("another key's budget is used up too")
	}
	if ok, left, _ := b.Take("a", t0.Add(20*time.Second)); !ok || left != 0 {
		t.Errorf("Take after 20s = %v, %d; want one refilled", ok, left)
	}
	b.Give("a", t0.Add(20*time.Second))
	if ok, left, _ := b.Take("a", t0.Add(20*time.Second)); !ok || left != 0 {
		t.Errorf("Take after Give = %v, %d; want the one given back", ok, left)
	}
	if ok, left, _ := b.Take("a", t0.Add(time.Hour)); !ok || left != 2 {
		t.Errorf("Take after an hour = %v, %d; want true, 2 (full, not more)", ok, left)
	}
	b.Give("c", t0)
	if ok, left, _ := b.Take("c", t0); !ok || left != 2 {
		t.Errorf("Take after Give to a full budget = %v, %d; want true, 2", ok, left)
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{{time.Nanosecond, "1"}, {time.Second, "1"}, {time.Second + 1, "2"}, {15 * time.Second, "15"}} {
		if got := RetryAfter(tt.d); got != tt.want {
			t.Errorf("RetryAfter(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// TestTakeDoesNotAllocate: a key whose budget is kept is found without
// allocating, as the REST API takes from a budget on every request.
func TestTakeDoesNotAllocate(t *testing.T) {
	b := New[string](1000, time.Minute, 10)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.Take("a", now)
	if n := testing.AllocsPerRun(100, func() { b.Take("a", now); b.Give("a", now) }); n != 0 {
		t.Errorf("Take and Give of a kept key allocate %v times, want 0", n)
	}
}
