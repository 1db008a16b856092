package memory

import (
	"testing"
	"unsafe"
)

// TestJobSize keeps a job within 96 bytes (a size class of the Go
// allocator): with a million jobs, each byte more is a megabyte.
func TestJobSize(t *testing.T) {
	if n := unsafe.Sizeof(job{}); n > 96 {
		t.Errorf("a job takes %d bytes, want at most 96", n)
	}
}
