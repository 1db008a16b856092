package memory

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"unsafe"
)

// TestQueue checks the queue against a plain set through random pushes,
// changes, removals and takes of the first entry, with ready times that
// mostly grow (the FIFO's case) and sometimes do not (the heap's), in
// runs long enough to move, drop and compact the FIFO's holes.
func TestQueue(t *testing.T) {
	for _, inOrder := range []int{0, 50, 90, 99, 100} { // percent of pushes in order
		r := rand.New(rand.NewPCG(uint64(inOrder), 3))
		var q queue
		ready := map[*entry]int64{}
		var in []*entry
		seq, clock := uint64(0), int64(0)
		key := func() int64 {
			if r.IntN(100) < inOrder {
				clock += r.Int64N(3)
				return clock
			}
			return clock - r.Int64N(50) + 25
		}
		want := func() *entry {
			var w *entry
			for _, e := range in {
				if w == nil || ready[e] < ready[w] || ready[e] == ready[w] && e.seq < w.seq {
					w = e
				}
			}
			return w
		}
		out := func(e *entry) { in = slices.DeleteFunc(in, func(x *entry) bool { return x == e }) }
		fifo := 0 // pushes that went to the FIFO
		for step := range 5000 {
			switch op := r.IntN(10); {
			case op < 2 && len(in) > 0: // take out any
				e := in[r.IntN(len(in))]
				q.remove(e)
				if e.flags&(inDue|inHeld|inFIFO) != 0 {
					t.Fatalf("%d%%, step %d: removed entry keeps flags %b", inOrder, step, e.flags)
				}
				out(e)
			case op < 4 && len(in) > 0: // take the first
				f := q.first()
				if w := want(); f.e != w {
					t.Fatalf("%d%%, step %d: first = (%d, %d), want (%d, %d)", inOrder, step, f.ready, f.e.seq, ready[w], w.seq)
				}
				e := f.e
				q.remove(e)
				out(e)
			case op < 5 && len(in) > 0: // change
				e := in[r.IntN(len(in))]
				ready[e] = key()
				q.fix(e, ready[e])
			default:
				seq++
				e := &entry{seq: seq}
				ready[e] = key()
				q.push(e, ready[e], inHeld)
				if e.flags&inFIFO != 0 {
					fifo++
				}
				in = append(in, e)
			}
			if q.len() != len(in) {
				t.Fatalf("%d%%, step %d: len = %d, want %d", inOrder, step, q.len(), len(in))
			}
			if f, w := q.first(), want(); (f == nil) != (w == nil) || f != nil && (f.e != w || f.ready != ready[w]) {
				t.Fatalf("%d%%, step %d: first = %+v, want %p at %d", inOrder, step, f, w, ready[w])
			}
			checkQueue(t, &q, ready, len(in))
			now, n := clock+r.Int64N(60)-30, 0
			for _, e := range in {
				if ready[e] <= now {
					n++
				}
			}
			if got := q.countReady(now); got != n {
				t.Fatalf("%d%%, step %d: countReady(%d) = %d, want %d", inOrder, step, now, got, n)
			}
		}
		if inOrder == 100 && fifo != int(seq) {
			t.Errorf("in order: %d of %d pushes went to the FIFO, want all", fifo, seq)
		}
		t.Logf("%d%% in order: %d of %d pushes to the FIFO, %d items for %d entries at the end", inOrder, fifo, seq, q.tail-q.head, len(in))
	}
}

// checkQueue checks that every entry of q finds its item through its
// flags and idx, that the FIFO is in order, has no hole at its front and
// holds fewer items than twice its entries plus minCompact, and that the
// heap is a heap.
func checkQueue(t *testing.T, q *queue, ready map[*entry]int64, n int) {
	t.Helper()
	entries, holes := 0, 0
	for p := q.head; p != q.tail; p++ {
		it := q.item(p)
		if p != q.head && less(it, q.item(p-1)) {
			t.Fatalf("FIFO item %d sorts before the one ahead of it", p)
		}
		if it.e == nil {
			holes++
			continue
		}
		entries++
		if it.e.flags&(inHeld|inFIFO) != inHeld|inFIFO || q.at(it.e) != p || it.ready != ready[it.e] {
			t.Fatalf("FIFO item %d is out of sync with its entry", p)
		}
	}
	if q.head != q.tail && q.item(q.head).e == nil {
		t.Fatalf("hole at the front of the FIFO")
	}
	if used := int(q.tail - q.start); len(q.chunks) != (used+chunkLen-1)/chunkLen || q.head-q.start >= chunkLen {
		t.Fatalf("%d chunks for positions %d to %d from %d", len(q.chunks), q.head, q.tail, q.start)
	}
	if holes != q.holes {
		t.Fatalf("%d holes, counted %d", holes, q.holes)
	}
	if holes >= minCompact && holes > entries {
		t.Fatalf("%d holes for %d entries: not compacted", holes, entries)
	}
	for i, it := range q.heap {
		if int(it.e.idx) != i || it.e.flags&(inHeld|inFIFO) != inHeld || it.ready != ready[it.e] {
			t.Fatalf("heap item %d is out of sync with its entry", i)
		}
		if i > 0 && less(&it, &q.heap[(i-1)/4]) {
			t.Fatalf("heap item %d sorts before its parent", i)
		}
	}
	if entries+len(q.heap) != n {
		t.Fatalf("%d entries in the FIFO and %d in the heap, want %d in all", entries, len(q.heap), n)
	}
}

// TestQueueCompacts covers the FIFO dropping its holes when they
// outnumber its entries, behind an entry that stays at its front: the
// entries moved must still be found, changed and taken in order.
func TestQueueCompacts(t *testing.T) {
	var q queue
	ready := map[*entry]int64{}
	var es []*entry
	for i := range 300 {
		e := &entry{seq: uint64(i)}
		ready[e] = int64(i / 3)
		q.push(e, ready[e], inHeld)
		es = append(es, e)
	}
	for i, e := range es[1:250] {
		q.remove(e)
		checkQueue(t, &q, ready, 300-i-1)
	}
	if n := int(q.tail - q.head); n > 2*q.len()+minCompact {
		t.Fatalf("%d holes and %d items for %d entries: not compacted", q.holes, n, q.len())
	}
	left := append([]*entry{es[0]}, es[250:]...)
	ready[left[1]] = 1000 // to the heap
	q.fix(left[1], 1000)
	checkQueue(t, &q, ready, len(left))
	for _, e := range append(append([]*entry{left[0]}, left[2:]...), left[1]) {
		f := q.first()
		if f.e != e {
			t.Fatalf("first = (%d, %d), want (%d, %d)", f.ready, f.e.seq, ready[e], e.seq)
		}
		q.remove(e)
		checkQueue(t, &q, ready, q.len())
	}
	if q.len() != 0 || q.first() != nil {
		t.Fatalf("len = %d after taking every entry", q.len())
	}
}

// TestTimeHeap checks a time heap against a plain set through random
// additions, changes and removals, growing it past several chunks and
// shrinking it back, so that items cross the chunks' bounds both ways.
func TestTimeHeap(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	h := timeHeap{which: 1}
	at := map[*entry]int64{}
	var in []*entry
	for step := range 12000 {
		grow := step%6000 < 3500 // grow to about 3,000 jobs, then shrink
		switch op := r.IntN(10); {
		case (op < 2 || !grow && op < 6) && len(in) > 0:
			i := r.IntN(len(in))
			h.remove(in[i])
			if in[i].x.pos[1] != 0 {
				t.Fatalf("step %d: removed entry keeps its position", step)
			}
			delete(at, in[i])
			in = slices.Delete(in, i, i+1)
		case op < 4 && len(in) > 0:
			e := in[r.IntN(len(in))]
			at[e] = r.Int64N(1000)
			h.set(e, at[e])
		default:
			e := &entry{x: &extra{}}
			at[e] = r.Int64N(1000)
			h.set(e, at[e])
			in = append(in, e)
		}
		if h.n != len(in) {
			t.Fatalf("step %d: %d items, want %d", step, h.n, len(in))
		}
		least := int64(math.MaxInt64)
		for i := range h.n {
			it := h.item(i)
			if int(it.e.x.pos[1]) != i+1 || it.at != at[it.e] {
				t.Fatalf("step %d: item %d is out of sync with its entry", step, i)
			}
			if i > 0 && it.at < h.item((i-1)/2).at {
				t.Fatalf("step %d: item %d sorts before its parent", step, i)
			}
			least = min(least, it.at)
		}
		if e, k, ok := h.min(); ok != (len(in) > 0) || ok && (k != least || at[e] != k) {
			t.Fatalf("step %d: min = %d, %v; want %d", step, k, ok, least)
		}
	}
	if len(h.chunks) < 3 {
		t.Errorf("the heap grew to %d chunks only; the test checks little", len(h.chunks))
	}
}

// TestQueueChunks covers the FIFO's chunks: a FIFO that keeps about the
// same length while its items go by (jobs registered as others run) gives
// back its front chunk and reuses it at its end, allocating nothing; one
// that grows adds chunks without moving its items; and position numbers
// wrap around past the largest uint32.
func TestQueueChunks(t *testing.T) {
	for _, start := range []uint32{0, math.MaxUint32 - 3*chunkLen/2} {
		q := queue{start: start, head: start, tail: start}
		all := make([]*entry, 24*chunkLen)
		ready := map[*entry]int64{}
		for i := range all {
			all[i] = &entry{seq: uint64(i)}
			ready[all[i]] = int64(i)
		}
		lo, hi := 0, 0 // all[lo:hi] are in q
		add := func() {
			q.push(all[hi], int64(hi), inHeld)
			hi++
		}
		for range 5 * chunkLen / 2 {
			add()
		}
		if len(q.heap) != 0 || len(q.chunks) != 3 {
			t.Fatalf("start %d: %d chunks and %d heap items for %d entries in order", start, len(q.chunks), len(q.heap), hi-lo)
		}
		at := q.chunks[0]
		q.remove(all[lo])
		lo++
		if q.item(q.at(all[lo])) != &at[1] {
			t.Fatalf("start %d: an item moved as the FIFO grew or lost its first entry", start)
		}
		checkQueue(t, &q, ready, hi-lo)
		// Take the first and add one, as a steady store does.
		steady := func() {
			q.remove(all[lo])
			lo++
			add()
		}
		for range 3 * chunkLen {
			steady()
		}
		checkQueue(t, &q, ready, hi-lo)
		steps := func() {
			for range 8 * chunkLen {
				steady()
			}
		}
		// No chunk is allocated; the short list of chunks moves when
		// appending to it finds no room left behind its end (twice).
		if n := testing.AllocsPerRun(1, steps); n > 3 {
			t.Errorf("start %d: %.0f allocations in %d pushes and takes, want at most 3", start, n, 8*chunkLen)
		}
		checkQueue(t, &q, ready, hi-lo)
		if len(q.chunks) > 4 {
			t.Errorf("start %d: %d chunks for %d entries", start, len(q.chunks), hi-lo)
		}
		for lo < hi {
			if f := q.first(); f.e != all[lo] {
				t.Fatalf("start %d: first = %d, want %d", start, f.e.seq, lo)
			}
			q.remove(all[lo])
			lo++
			checkQueue(t, &q, ready, hi-lo)
		}
		if q.len() != 0 || q.first() != nil || len(q.chunks) > 1 {
			t.Fatalf("start %d: emptied queue has len %d and %d chunks", start, q.len(), len(q.chunks))
		}
	}
	// Growing by n items allocates about n items' room: no copies of
	// the items already in.
	var q queue
	es := make([]*entry, 16*chunkLen)
	for i := range es {
		es[i] = &entry{seq: uint64(i)}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i, e := range es {
		q.push(e, int64(i), inDue)
	}
	runtime.ReadMemStats(&after)
	if n, room := after.TotalAlloc-before.TotalAlloc, uint64(len(es))*uint64(unsafe.Sizeof(heapItem{})); n > room+room/8 {
		t.Errorf("growing to %d items allocated %d bytes, want about %d", len(es), n, room)
	}
}
