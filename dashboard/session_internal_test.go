package dashboard

import (
	"strconv"
	"testing"
	"time"
)

// TestSignedOutBounded: the sign-outs kept are bounded: beyond the bound
// the oldest is forgotten, and a sign-out whose session has expired is
// forgotten once it is the oldest; a session signed out twice is kept
// once.
func TestSignedOutBounded(t *testing.T) {
	now := time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)
	so := signedOut{max: 3}
	sess := func(i int, ttl time.Duration) session {
		return session{ID: "s" + strconv.Itoa(i), Expires: now.Add(ttl).Unix()}
	}
	for i := range 5 {
		so.add(sess(i, time.Hour), now)
		so.add(sess(i, time.Hour), now)
	}
	for i := range 5 {
		if got, want := so.has("s"+strconv.Itoa(i)), i >= 2; got != want {
			t.Errorf("after 5 sign-outs with room for 3: has(s%d) = %v, want %v", i, got, want)
		}
	}
	if len(so.ids) != 3 || len(so.queue)-so.head != 3 {
		t.Errorf("after 5 sign-outs with room for 3: %d IDs, %d queued; want 3, 3", len(so.ids), len(so.queue)-so.head)
	}

	so = signedOut{max: 10}
	so.add(sess(0, time.Minute), now)
	so.add(sess(1, time.Hour), now)
	so.add(sess(2, time.Hour), now.Add(2*time.Minute))
	for i, want := range []bool{false, true, true} {
		if got := so.has("s" + strconv.Itoa(i)); got != want {
			t.Errorf("after s0 expired: has(s%d) = %v, want %v", i, got, want)
		}
	}
	for i := 3; i < 1000; i++ {
		so.add(sess(i, time.Minute), now.Add(time.Duration(i)*time.Minute))
	}
	if n := len(so.ids); n > 10 || cap(so.queue) > 40 {
		t.Errorf("after 1000 sign-outs with room for 10: %d IDs, queue capacity %d", n, cap(so.queue))
	}
}
