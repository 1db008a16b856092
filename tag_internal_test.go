package scheduler

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// referenceTag is the execution tag as first defined: receivers dedupe
// on it across versions, so executionTag must never change its value.
func referenceTag(r *JobRecord, n int) string {
	h := sha256.New()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(r.Created.UnixNano()))
	binary.BigEndian.PutUint64(b[8:], uint64(n))
	h.Write([]byte(r.Collection))
	h.Write([]byte{0})
	h.Write([]byte(r.Name))
	h.Write([]byte{0})
	h.Write(b[:])
	return hex.EncodeToString(h.Sum(nil)[:8])
}

func TestExecutionTagUnchanged(t *testing.T) {
	created := time.Date(2026, 11, 23, 4, 0, 0, 123456789, time.UTC)
	// A value computed by the first definition, as receivers saw it.
	if got, want := executionTag(&JobRecord{Collection: "reports", Name: "nightly", Created: created}, 7), "1fe5a9341893eb5e"; got != want {
		t.Errorf("executionTag(reports/nightly, 7) = %q, want %q", got, want)
	}
	long := strings.Repeat("n", 200) // past the stack buffer
	for _, r := range []JobRecord{
		{Collection: "c", Name: "j", Created: created},
		{Collection: "", Name: "", Created: time.Time{}},
		{Collection: "集合", Name: "jöb-1", Created: created.Add(-time.Hour)},
		{Collection: long, Name: "j", Created: created},
		{Collection: "c", Name: long + long, Created: created},
		{Collection: strings.Repeat("c", 55), Name: strings.Repeat("j", 55), Created: created},
	} {
		for _, n := range []int{0, 1, 2, 1 << 40, -1} {
			if got, want := executionTag(&r, n), referenceTag(&r, n); got != want {
				t.Errorf("executionTag(%q/%q, %d) = %q, want %q", r.Collection, r.Name, n, got, want)
			}
		}
	}
}

// TestIDsAt checks the IDs and the instant of an attempt, for job IDs
// that fit in one allocation with the instant and for longer ones, how
// many allocations they take, and which of the structs of 80 and 96
// bytes (size classes of the allocator) holds them.
func TestIDsAt(t *testing.T) {
	if got := unsafe.Sizeof(shortIDs{}); got != 80 {
		t.Errorf("shortIDs takes %d bytes, want 80", got)
	}
	if got := unsafe.Sizeof(attemptIDs{}); got != 96 {
		t.Errorf("attemptIDs takes %d bytes, want 96", got)
	}
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	start := time.Date(2026, 11, 27, 13, 0, 0, 1, time.UTC)
	for _, tc := range []struct {
		name   string
		r      *JobRecord
		allocs float64
		in     uintptr // the size of the struct that holds the instant and the IDs; 0: two allocations
	}{
		{"short", &JobRecord{Collection: "集合", Name: "nightly-1"}, 1, 80},
		{"20 bytes", &JobRecord{Collection: "c", Name: strings.Repeat("n", 18)}, 1, 80},
		{"21 bytes", &JobRecord{Collection: "c", Name: strings.Repeat("n", 19)}, 1, 96},
		{"36 bytes", &JobRecord{Collection: "c", Name: strings.Repeat("n", 34)}, 1, 96},
		{"37 bytes", &JobRecord{Collection: "c", Name: strings.Repeat("n", 35)}, 2, 0},
		{"long", &JobRecord{Collection: strings.Repeat("c", 100), Name: strings.Repeat("n", 100)}, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]bool{}
			var ats []*time.Time
			for range 100 {
				at, id, u := idsAt(tc.r, start)
				if id != tc.r.ID() {
					t.Fatalf("idsAt id = %q, want %q", id, tc.r.ID())
				}
				if !uuid.MatchString(u) {
					t.Fatalf("idsAt uuid = %q, not a version 4 UUID", u)
				}
				if seen[u] {
					t.Fatalf("idsAt gave %q twice", u)
				}
				seen[u] = true
				if at == nil || !at.Equal(start) {
					t.Fatalf("idsAt instant = %v, want %v", at, start)
				}
				ats = append(ats, at)
			}
			*ats[0] = time.Time{} // each attempt's instant is its own
			if !ats[1].Equal(start) {
				t.Errorf("idsAt instants share memory: %v after the first was changed", ats[1])
			}
			if got := testing.AllocsPerRun(100, func() { idsAt(tc.r, start) }); got != tc.allocs {
				t.Errorf("idsAt allocates %v times, want %v", got, tc.allocs)
			}
			at, id, u := idsAt(tc.r, start)
			from, to := uintptr(unsafe.Pointer(at)), uintptr(unsafe.Pointer(unsafe.StringData(u)))+uintptr(len(u))
			if in := tc.in != 0; in != (uintptr(unsafe.Pointer(unsafe.StringData(id))) > from && to <= from+tc.in) {
				t.Errorf("idsAt IDs in the instant's struct of %d bytes: %v, want %v", tc.in, !in, in)
			}
		})
	}
}
