package sqlstore

import (
	"fmt"
	"strings"
	"testing"
)

// TestKeptBytes: the strings keep makes stay as they were while more are
// kept after them, the first buffer takes the size of the first text,
// and no buffer holds more than keptBuf bytes of short texts.
func TestKeptBytes(t *testing.T) {
	var k keptBytes
	src := []byte("collection/name-0")
	first := keep(&k, src)
	copy(src, "XXXXXXXXXXXXXXXXX") // the driver's memory, reused
	if first != "collection/name-0" {
		t.Fatalf("keep = %q, want collection/name-0", first)
	}
	if got := cap(k.b); got != len(first) {
		t.Errorf("first buffer of %d bytes, want %d", got, len(first))
	}
	var kept []string
	for i := range 2000 {
		kept = append(kept, keep(&k, fmt.Sprintf("collection/name-%d", i)))
		if cap(k.b) > keptBuf {
			t.Fatalf("after %d texts a buffer of %d bytes, want at most %d", i+1, cap(k.b), keptBuf)
		}
	}
	long := strings.Repeat("x", 2*keptBuf)
	if got := keep(&k, long); got != long {
		t.Errorf("keep of %d bytes = %d bytes", len(long), len(got))
	}
	for i, s := range kept {
		if want := fmt.Sprintf("collection/name-%d", i); s != want {
			t.Fatalf("kept text %d = %q after more were kept, want %q", i, s, want)
		}
	}
	if first != "collection/name-0" {
		t.Errorf("first kept text = %q after more were kept", first)
	}
	if got := keep(&k, ""); got != "" {
		t.Errorf("keep(\"\") = %q", got)
	}
}
