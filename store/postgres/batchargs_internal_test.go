package postgres

import "testing"

// TestBatchArgsNumbers: the numbers a batch's arguments point to keep
// their values while more are added, and a missing one is NULL.
func TestBatchArgsNumbers(t *testing.T) {
	var a batchArgs
	var ps []*int64
	for i := range int64(200) {
		ps = append(ps, a.nullable64(i*1_000_000_007, true))
	}
	for i, p := range ps {
		if want := int64(i) * 1_000_000_007; p == nil || *p != want {
			t.Fatalf("number %d: got %v, want %d", i, p, want)
		}
	}
	if p := a.nullable64(5, false); p != nil {
		t.Errorf("nullable64(5, false) = %d, want nil", *p)
	}
	if p := a.nullable(nil); p != nil {
		t.Errorf("nullable(nil) = %d, want nil", *p)
	}
	if p := a.nullable(int64(7)); p == nil || *p != 7 {
		t.Errorf("nullable(int64(7)) = %v, want 7", p)
	}
	// A batch's numbers come a chunk at a time, not one allocation each.
	kept := make([]*int64, 64)
	if n := testing.AllocsPerRun(10, func() {
		var b batchArgs
		for i := range kept {
			kept[i] = b.nullable64(int64(i), true)
		}
	}); n > 1 {
		t.Errorf("64 numbers: %v allocations, want 1", n)
	}
}
