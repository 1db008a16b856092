package memory

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// check verifies t's invariants: the FIFO in order, its counts right, its
// entries and the heap's knowing their places, the heap in heap order.
func (t *timeIndex) check() error {
	which, holes := t.heap.which, 0
	for i := t.head; i < t.tail; i++ {
		it := t.item(i)
		if i > t.head && it.at < t.item(i-1).at {
			return fmt.Errorf("FIFO out of order at %d", i)
		}
		if it.e == nil {
			holes++
			continue
		}
		if p := it.e.x.pos[which]; p >= 0 || t.fifoIndex(p) != i || it.e.flags&gone != 0 {
			return fmt.Errorf("FIFO item %d is out of sync with its job (pos %d)", i, p)
		}
	}
	if holes != t.holes {
		return fmt.Errorf("FIFO has %d holes, counted %d", holes, t.holes)
	}
	if t.head < t.tail && t.item(t.head).e == nil {
		return fmt.Errorf("FIFO starts with a hole")
	}
	if t.head >= timeChunk || t.tail > len(t.chunks)*timeChunk {
		return fmt.Errorf("FIFO [%d, %d) in %d chunks", t.head, t.tail, len(t.chunks))
	}
	for i := range len(t.chunks) * timeChunk {
		if (i < t.head || i >= t.tail) && *t.item(i) != (timeItem{}) {
			return fmt.Errorf("FIFO item %d outside [%d, %d) keeps an entry", i, t.head, t.tail)
		}
	}
	h := &t.heap
	for i := range h.n {
		it := h.item(i)
		if int(it.e.x.pos[which]) != i+1 || it.e.flags&gone != 0 {
			return fmt.Errorf("heap item %d is out of sync with its job", i)
		}
		if i > 0 && it.at < h.item((i-1)/2).at {
			return fmt.Errorf("heap out of order at %d", i)
		}
	}
	return nil
}

// TestTimeIndex checks a time index against a plain map through random
// additions (mostly in key order, as outcomes arrive, some out of it),
// changes, removals and takings of the least, past many compactions and
// reuses of the FIFO's array.
func TestTimeIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	ix := timeIndex{heap: timeHeap{which: 0}}
	at := map[*entry]int64{}
	var in []*entry
	clock, inFIFO := int64(0), 0
	for step := range 20000 {
		grow := step%5000 < 3000
		switch op := r.IntN(20); {
		case (op < 3 || !grow && op < 10) && len(in) > 0:
			i := r.IntN(len(in))
			if r.IntN(2) == 0 { // the oldest, as Prune takes them
				e, k, _ := ix.min()
				i = slices.Index(in, e)
				if k != at[e] {
					t.Fatalf("step %d: min's key %d, the entry's %d", step, k, at[e])
				}
			}
			ix.remove(in[i])
			if in[i].x.pos[0] != 0 {
				t.Fatalf("step %d: a removed entry keeps its position", step)
			}
			delete(at, in[i])
			in = slices.Delete(in, i, i+1)
		case op < 5 && len(in) > 0:
			e := in[r.IntN(len(in))]
			clock += r.Int64N(3)
			at[e] = clock - r.Int64N(2)*r.Int64N(50)
			ix.set(e, at[e])
		default:
			e := &entry{x: &extra{}}
			clock += r.Int64N(3)
			at[e] = clock
			if r.IntN(10) == 0 {
				at[e] -= r.Int64N(100) // out of order
			}
			ix.set(e, at[e])
			if e.x.pos[0] < 0 {
				inFIFO++
			}
			in = append(in, e)
		}
		if ix.len() != len(in) {
			t.Fatalf("step %d: %d entries, want %d", step, ix.len(), len(in))
		}
		if err := ix.check(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		least := int64(math.MaxInt64)
		for _, e := range in {
			if k := ix.at(e); k != at[e] {
				t.Fatalf("step %d: at = %d, want %d", step, k, at[e])
			}
			least = min(least, at[e])
		}
		if e, k, ok := ix.min(); ok != (len(in) > 0) || ok && (k != least || at[e] != k) {
			t.Fatalf("step %d: min = %d, %v; want %d", step, k, ok, least)
		}
	}
	// The point of the FIFO: in-order keys stay out of the heap.
	if inFIFO < 10000 {
		t.Errorf("%d additions went to the FIFO, want most of them", inFIFO)
	}
}

// TestTimeIndexInOrder: keys added in order go to the FIFO and come out
// of it in order, leaving the heap empty.
func TestTimeIndexInOrder(t *testing.T) {
	ix := timeIndex{heap: timeHeap{which: 1}}
	es := make([]*entry, 3000)
	for i := range es {
		es[i] = &entry{x: &extra{}}
		ix.set(es[i], int64(i/2)) // equal keys too
	}
	if ix.heap.n != 0 {
		t.Fatalf("%d of %d in-order entries went to the heap", ix.heap.n, len(es))
	}
	for i := range es {
		e, k, ok := ix.min()
		if !ok || e != es[i] || k != int64(i/2) {
			t.Fatalf("min %d = %p, %d, %v; want entry %d at %d", i, e, k, ok, i, i/2)
		}
		ix.remove(e)
	}
	if ix.len() != 0 || ix.tail != 0 {
		t.Fatalf("emptied index holds %d entries, %d items", ix.len(), ix.tail)
	}
	// Two in, one out: the FIFO's front chunks are consumed and dropped,
	// the last one kept for reuse.
	var live []*entry
	reused := false
	for i := range 5000 {
		e := &entry{x: &extra{}}
		ix.set(e, int64(i))
		live = append(live, e)
		if i%2 == 1 {
			m, _, _ := ix.min()
			if m != live[0] {
				t.Fatalf("step %d: min is not the oldest entry", i)
			}
			ix.remove(m)
			live = live[1:]
		}
		if ix.spare != nil && len(ix.chunks) > 1 && &ix.chunks[len(ix.chunks)-1][0] == &ix.spare[0] {
			t.Fatalf("step %d: the spare chunk is also in use", i)
		}
		reused = reused || ix.base >= 2*timeChunk
		for j, e := range live {
			if ix.at(e) != int64(i-len(live)+1+j) {
				t.Fatalf("step %d: live entry %d has key %d", i, j, ix.at(e))
			}
		}
	}
	if err := ix.check(); err != nil || ix.heap.n != 0 || !reused {
		t.Fatalf("after two in, one out: %v; %d in the heap; front chunks dropped %v", err, ix.heap.n, reused)
	}
}

// TestTimeIndexNumbersWrap: position numbers stay right when they wrap
// around their 31 bits and the base around its 32.
func TestTimeIndexNumbersWrap(t *testing.T) {
	for _, base := range []uint32{posMask - 20, math.MaxUint32 - 20} {
		ix := timeIndex{heap: timeHeap{which: 0}, base: base}
		es := make([]*entry, 200)
		for i := range es {
			es[i] = &entry{x: &extra{}}
			ix.set(es[i], int64(i))
		}
		for i := 0; i < len(es); i += 3 { // holes, then a compaction
			ix.remove(es[i])
		}
		for i := range es {
			if i%3 == 0 {
				continue
			}
			if es[i].x.pos[0] >= 0 || ix.at(es[i]) != int64(i) {
				t.Fatalf("base %d: entry %d at %d (pos %d)", base, i, ix.at(es[i]), es[i].x.pos[0])
			}
		}
		if err := ix.check(); err != nil {
			t.Fatalf("base %d: %v", base, err)
		}
		if e, k, _ := ix.min(); e != es[1] || k != 1 {
			t.Fatalf("base %d: min = %d, want 1", base, k)
		}
	}
}
