package budget

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
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

func TestInWords(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{time.Nanosecond, "1 second"}, {time.Second, "1 second"}, {time.Second + 1, "2 seconds"},
		{45 * time.Second, "45 seconds"}, {59*time.Second + 1, "1 minute"}, {time.Minute, "1 minute"},
		{time.Minute + 1, "2 minutes"}, {450 * time.Second, "8 minutes"}, {15 * time.Minute, "15 minutes"},
	} {
		if got := InWords(tt.d); got != tt.want {
			t.Errorf("InWords(%v) = %q, want %q", tt.d, got, tt.want)
		}
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

// TestWait: callers that find the budget empty wait for it to refill, one
// per unit, in order of arrival; one that would wait beyond its limit
// gives up, and so does one whose context ends.
func TestWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := New[string](1, 10*time.Second, 10)
		ctx := context.Background()
		if !b.Wait(ctx, "a", time.Minute) {
			t.Fatal("Wait on a full budget = false")
		}
		start := time.Now()
		done := make(chan string, 3)
		for _, name := range []string{"x", "y", "z"} {
			go func() {
				if b.Wait(ctx, "a", 25*time.Second) {
					done <- name + " at " + time.Since(start).String()
				} else {
					done <- name + " gave up at " + time.Since(start).String()
				}
			}()
			synctest.Wait() // in line before the next one comes
		}
		var got []string
		for range 3 {
			got = append(got, <-done)
		}
		want := []string{"x at 10s", "y at 20s", "z gave up at 20s"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Wait in line (-want +got):\n%s", diff)
		}
		cctx, cancel := context.WithCancel(ctx)
		go func() {
			time.Sleep(time.Second)
			cancel()
		}()
		if b.Wait(cctx, "a", time.Minute) {
			t.Error("Wait whose context ended = true")
		}
		if time.Since(start) != 21*time.Second {
			t.Errorf("Wait whose context ended returned at %v, want 21s", time.Since(start))
		}
	})
}

func TestHasAndCharge(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := New[string](2, time.Minute, 10) // one more every 30s
	if ok, wait := b.Has("a", t0); !ok || wait != 0 {
		t.Fatalf("Has of a full budget = %v, %v; want true, 0", ok, wait)
	}
	for range 5 { // two of the budget, and two below zero: at most its size
		b.Charge("a", t0)
	}
	if ok, wait := b.Has("a", t0); ok || wait != 90*time.Second {
		t.Errorf("Has after charging past zero = %v, %v; want false, 90s (from -2 to 1)", ok, wait)
	}
	if ok, _, _ := b.Take("a", t0.Add(60*time.Second)); ok {
		t.Error("Take 60s after charging past zero took one: the charges below zero were not refilled first")
	}
	if ok, wait := b.Has("a", t0.Add(90*time.Second)); !ok || wait != 0 {
		t.Errorf("Has 90s after = %v, %v; want true, 0", ok, wait)
	}
	if ok, left, _ := b.Take("a", t0.Add(90*time.Second)); !ok || left != 0 {
		t.Errorf("Take 90s after = %v, %d; want true, 0 (Has took nothing)", ok, left)
	}
}
