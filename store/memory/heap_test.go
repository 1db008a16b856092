package memory

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDueHeap checks the heap against a sorted slice through random
// pushes, changes and removals.
func TestDueHeap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h dueHeap
	var in []*entry
	ready := map[*entry]int64{} // each entry's ready time
	seq := uint64(0)
	for step := range 5000 {
		switch op := r.IntN(4); {
		case op == 0 && len(in) > 0: // remove
			i := r.IntN(len(in))
			e := in[i]
			h.remove(int(e.idx))
			if e.flags&(inDue|inHeld) != 0 {
				t.Fatalf("step %d: removed entry still points at its heap", step)
			}
			in = slices.Delete(in, i, i+1)
		case op == 1 && len(in) > 0: // change
			e := in[r.IntN(len(in))]
			ready[e] = r.Int64N(50)
			h.fix(int(e.idx), ready[e])
		default: // push
			seq++
			e := &entry{seq: seq}
			ready[e] = r.Int64N(50)
			h.push(e, ready[e], inDue)
			in = append(in, e)
		}
		for i, it := range h {
			if int(it.e.idx) != i || it.e.flags&(inDue|inHeld) != inDue || it.ready != ready[it.e] {
				t.Fatalf("step %d: item %d is out of sync with its entry", step, i)
			}
			if i > 0 && less(&it, &h[(i-1)/4]) {
				t.Fatalf("step %d: item %d sorts before its parent", step, i)
			}
		}
		now, n := r.Int64N(55)-2, 0
		for _, e := range in {
			if ready[e] <= now {
				n++
			}
		}
		if got := h.countReady(now); got != n {
			t.Fatalf("step %d: countReady(%d) = %d, want %d", step, now, got, n)
		}
	}
	want := slices.Clone(in)
	slices.SortFunc(want, func(a, b *entry) int {
		if ready[a] != ready[b] {
			return int(ready[a] - ready[b])
		}
		return int(a.seq) - int(b.seq)
	})
	for i, w := range want {
		got := h[0].e
		h.remove(0)
		if got != w {
			t.Fatalf("pop %d = (%d, %d), want (%d, %d)", i, ready[got], got.seq, ready[w], w.seq)
		}
	}
}
