package memory

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// check reports the first place where x is not a FIFO and a heap in which
// every value knows its place.
func (x *index[T]) check() error {
	var none T
	holes := 0
	prev := -1 // the last value seen in the FIFO
	for i := range x.fifo.len() {
		it := *x.fifo.at(i)
		switch {
		case it.v == none && i < x.head:
		case it.v == none:
			holes++
		case i < x.head:
			return fmt.Errorf("the value at %d of the FIFO is before its head %d", i, x.head)
		case *x.place(it.v) != -int32(i+1):
			return fmt.Errorf("the value at %d of the FIFO has place %d", i, *x.place(it.v))
		}
		if it.v == none {
			continue
		}
		if prev >= 0 && it.before(x.fifo.at(prev)) {
			return fmt.Errorf("the FIFO's item at %d sorts before the one at %d", i, prev)
		}
		prev = i
	}
	if n := x.fifo.len(); n > x.head && x.fifo.at(n-1).v == none {
		return fmt.Errorf("the FIFO ends with a hole")
	}
	if holes != x.holes || x.head < x.fifo.len() && x.fifo.at(x.head).v == none {
		return fmt.Errorf("the FIFO holds %d holes, not %d, or starts with one", holes, x.holes)
	}
	if dead := x.head + holes; dead >= 64 && 2*dead > x.fifo.len() {
		return fmt.Errorf("the FIFO holds %d items, %d of them dead", x.fifo.len(), dead)
	}
	if n, c := x.fifo.len(), len(x.fifo.c); c < (n+chunkLen-1)/chunkLen {
		return fmt.Errorf("the FIFO holds %d items in %d chunks", n, c)
	}
	for i := range x.heap {
		if p := *x.place(x.heap[i].v); int(p) != i+1 {
			return fmt.Errorf("the value at %d of the heap has place %d", i, p)
		}
		if i > 0 && x.heap[i].before(&x.heap[(i-1)/4]) {
			return fmt.Errorf("the value at %d of the heap sorts before its parent", i)
		}
	}
	return nil
}

// val is a value of the index in TestIndex.
type val struct {
	place int32
	key   int64
	seq   uint32
	in    bool
}

func (v *val) tie() uint32 { return v.seq }

// TestIndex checks an index against a plain slice sorted by key and seq
// through random adds (half of them in order, as most are in the store),
// moves, removals and takings of the least value.
func TestIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x := index[*val]{place: func(v *val) *int32 { return &v.place }}
	vals := make([]*val, 300)
	for i := range vals {
		vals[i] = &val{seq: uint32(r.IntN(50))} // ties among seqs too
	}
	sorted := func() []*val {
		var in []*val
		for _, v := range vals {
			if v.in {
				in = append(in, v)
			}
		}
		slices.SortFunc(in, func(a, b *val) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.seq, b.seq)) })
		return in
	}
	var last int64 // the greatest key given so far
	fifo := 0      // values added to the FIFO
	for step := range 40000 {
		v := vals[r.IntN(len(vals))]
		switch op := r.IntN(6); {
		case op < 3: // add or move
			v.key, v.in = last+int64(r.IntN(3)), true
			if op == 2 {
				v.key = last - int64(r.IntN(100))
			}
			last = max(last, v.key)
			x.set(v, v.key)
			if v.place < 0 {
				fifo++
			}
		case op == 3:
			v.in = false
			x.remove(v)
		case op == 4: // take the least
			want := sorted()
			got, key, ok := x.min()
			if ok != (len(want) > 0) {
				t.Fatalf("step %d: min ok = %v with %d values", step, ok, len(want))
			}
			if ok {
				// Any value with the least key and seq will do.
				if key != want[0].key || got.key != key || got.seq != want[0].seq {
					t.Fatalf("step %d: min = key %d seq %d, want key %d seq %d", step, key, got.seq, want[0].key, want[0].seq)
				}
				got.in = false
				x.remove(got)
			}
		default:
			max := last - int64(r.IntN(110))
			want := 0
			for _, v := range sorted() {
				if v.key <= max {
					want++
				}
			}
			if got := x.countUpTo(max); got != want {
				t.Fatalf("step %d: countUpTo(%d) = %d, want %d", step, max, got, want)
			}
		}
		if err := x.check(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		want := sorted()
		if x.len() != len(want) {
			t.Fatalf("step %d: len = %d, want %d", step, x.len(), len(want))
		}
		for _, v := range vals {
			if k, ok := x.key(v); ok != v.in || ok && k != v.key {
				t.Fatalf("step %d: key = %d, %v; want %d, %v", step, k, ok, v.key, v.in)
			}
		}
	}
	if fifo < 8000 {
		t.Errorf("only %d values went to the FIFO: the test checks it little", fifo)
	}
}

// TestIndexFIFOGrowth adds values in order, as the jobs of a burst reach
// a final state, and takes them out in order, as Prune does: the FIFO
// allocates about what it holds (16 bytes an item) rather than twice that
// and a copy at each doubling. Emptied and filled again, it allocates
// nothing.
func TestIndexFIFOGrowth(t *testing.T) {
	const n = 100_000
	x := index[*val]{place: func(v *val) *int32 { return &v.place }}
	vals := make([]val, n)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range vals {
		x.set(&vals[i], int64(i/3))
	}
	runtime.ReadMemStats(&after)
	if per := float64(after.TotalAlloc-before.TotalAlloc) / n; per > 17 {
		t.Errorf("adding %d values in order allocated %.1f bytes per value, want at most 17", n, per)
	}
	if err := x.check(); err != nil {
		t.Fatal(err)
	}
	for i := range vals {
		v, key, ok := x.min()
		if !ok || v != &vals[i] || key != int64(i/3) {
			t.Fatalf("min after %d taken = %p, %d, %v; want %p, %d", i, v, key, ok, &vals[i], i/3)
		}
		x.remove(v)
		if i%9973 == 0 {
			if err := x.check(); err != nil {
				t.Fatalf("after %d taken: %v", i+1, err)
			}
		}
	}
	if x.len() != 0 {
		t.Errorf("emptied: %d values, want 0", x.len())
	}
	if allocs := testing.AllocsPerRun(3, func() {
		for i := range vals {
			x.set(&vals[i], int64(i/3))
		}
		for range vals {
			v, _, _ := x.min()
			x.remove(v)
		}
	}); allocs != 0 {
		t.Errorf("filling the emptied FIFO again allocated %v times, want 0", allocs)
	}
}
