package memory

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestETagBits checks etagBits against strconv on the ETags the Scheduler
// writes (16 lower-case hex digits, least significant first) and that it
// refuses any other string, which keeps the record whole.
func TestETagBits(t *testing.T) {
	for _, v := range []uint64{0, 1, 0xf, 0x10, 0x0123456789abcdef, 0xfedcba9876543210, 1<<64 - 1} {
		var b [16]byte
		s := etagText(v, &b)
		got, ok := etagBits(s)
		if !ok || got != v {
			t.Errorf("etagBits(%q) = %#x, %v; want %#x, true", s, got, ok, v)
		}
		rev := make([]byte, 16)
		for i := range rev {
			rev[i] = s[15-i]
		}
		if want, err := strconv.ParseUint(string(rev), 16, 64); err != nil || want != v {
			t.Errorf("etagText(%#x) = %q, not its digits least significant first", v, s)
		}
	}
	for _, s := range []string{"", "0", "000000000000000", "00000000000000000", "000000000000000A", "A000000000000000",
		"00000000000000g0", "0000000/00000000", "0000000:00000000", "0000000`00000000", "0000000 00000000", "0000000\xff00000000"[:16], "000000000000000\x00"} {
		if v, ok := etagBits(s); ok {
			t.Errorf("etagBits(%q) = %#x, true; want false", s, v)
		}
	}
}

// BenchmarkETagBits reads the bits of ETags of random digits, as the
// Scheduler writes them.
func BenchmarkETagBits(b *testing.B) {
	var bufs [256][16]byte
	tags := make([]string, len(bufs))
	for i := range tags {
		tags[i] = etagText(rand.Uint64(), &bufs[i])
	}
	var sum uint64
	i := 0
	for b.Loop() {
		v, _ := etagBits(tags[i%len(tags)])
		sum += v
		i++
	}
	_ = sum
}
