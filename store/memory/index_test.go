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
// every value knows its place, or where its chunks hold an item past the
// FIFO's end.
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
	for i := x.fifo.len(); i < len(x.fifo.c)*chunkLen; i++ {
		// Past the FIFO's end: an item kept there would keep its value
		// alive.
		if it := x.fifo.c[i/chunkLen][i%chunkLen]; it != (item[T]{}) {
			return fmt.Errorf("the FIFO of %d items keeps one at %d, past its end", x.fifo.len(), i)
		}
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

// TestIndexChunks checks an index against a plain model through phases
// that grow its FIFO over many chunks and shrink it again: bursts in
// order, draining from the front, removals from the back (which truncate
// the FIFO), random removals, values out of order and a mix. After each
// step, check reads every chunk, and the least value, the keys, the
// count and countUpTo agree with the model.
func TestIndexChunks(t *testing.T) {
	for seed := range uint64(4) {
		r := rand.New(rand.NewPCG(seed, 3))
		nv := 200 + r.IntN(1800)
		x := index[*val]{place: func(v *val) *int32 { return &v.place }}
		vals := make([]*val, nv)
		for i := range vals {
			vals[i] = &val{seq: uint32(r.IntN(1 + r.IntN(nv)))}
		}
		var last int64   // the greatest key given so far
		var added []*val // values added to the FIFO, the latest last
		in := 0
		set := func(v *val, key int64) {
			if !v.in {
				in++
			}
			v.key, v.in = key, true
			last = max(last, key)
			x.set(v, key)
			if v.place < 0 {
				added = append(added, v)
			}
		}
		remove := func(v *val) {
			if v.in {
				in--
			}
			v.in = false
			x.remove(v)
		}
		most := 0 // the most items the FIFO held
		phase, left := 0, 0
		for step := range 30000 {
			if left == 0 {
				phase, left = r.IntN(6), 1+r.IntN(3*chunkLen)
			}
			left--
			v := vals[r.IntN(nv)]
			switch phase {
			case 0: // a burst in order
				if r.IntN(10) < 9 {
					set(v, last+int64(r.IntN(2)))
				} else {
					remove(v)
				}
			case 1: // draining from the front
				if m, _, ok := x.min(); ok {
					remove(m)
				}
			case 2: // removing from the back
				for len(added) > 0 {
					w := added[len(added)-1]
					added = added[:len(added)-1]
					if w.in && w.place < 0 {
						remove(w)
						break
					}
				}
			case 3:
				remove(v)
			case 4: // out of order half the time
				if r.IntN(2) == 0 {
					set(v, last-int64(r.IntN(300)))
				} else {
					set(v, last+int64(r.IntN(3)))
				}
			default:
				switch r.IntN(4) {
				case 0:
					set(v, last+int64(r.IntN(3)))
				case 1:
					remove(v)
				case 2:
					if m, _, ok := x.min(); ok {
						remove(m)
					}
				default:
					k, want := last-int64(r.IntN(400)), 0
					for _, w := range vals {
						if w.in && w.key <= k {
							want++
						}
					}
					if got := x.countUpTo(k); got != want {
						t.Fatalf("seed %d step %d: countUpTo(%d) = %d, want %d", seed, step, k, got, want)
					}
				}
			}
			if len(added) > 4*nv {
				added = append(added[:0], added[len(added)-nv:]...)
			}
			most = max(most, x.fifo.len())
			if err := x.check(); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			if x.len() != in {
				t.Fatalf("seed %d step %d: len = %d, want %d", seed, step, x.len(), in)
			}
			var want *val
			for _, w := range vals {
				if w.in && (want == nil || w.key < want.key || w.key == want.key && w.seq < want.seq) {
					want = w
				}
			}
			m, k, ok := x.min()
			if ok != (want != nil) || ok && (k != want.key || m.key != k || m.seq != want.seq) {
				t.Fatalf("seed %d step %d: min = %v, key %d, %v; want %v", seed, step, m, k, ok, want)
			}
			if w := vals[r.IntN(nv)]; true {
				if k, ok := x.key(w); ok != w.in || ok && k != w.key {
					t.Fatalf("seed %d step %d: key = %d, %v; want %d, %v", seed, step, k, ok, w.key, w.in)
				}
			}
		}
		if most < 2*chunkLen {
			t.Errorf("seed %d: the FIFO held at most %d items: the test crosses few chunks", seed, most)
		}
	}
}

// TestIndexChunkEnds fills the FIFO to around the ends of its chunks,
// takes values out from the back down to around them, fills it again past
// where it was, then takes every value in order.
func TestIndexChunkEnds(t *testing.T) {
	for _, n := range []int{1, 254, 255, 256, 509, 510, 511, 765, 766} {
		for _, cut := range []int{0, 1, 254, 255, 256, 510} {
			if cut > n {
				continue
			}
			x := index[*val]{place: func(v *val) *int32 { return &v.place }}
			vals := make([]*val, 2*n+10)
			for i := range vals {
				vals[i] = &val{key: int64(i), seq: uint32(i)}
			}
			for i := range n {
				x.set(vals[i], int64(i))
			}
			for i := n - 1; i >= cut; i-- {
				x.remove(vals[i])
				if err := x.check(); err != nil {
					t.Fatalf("%d values, taken out down to %d, at %d: %v", n, cut, i, err)
				}
			}
			if x.fifo.len() != cut {
				t.Fatalf("%d values, taken out down to %d: the FIFO holds %d items", n, cut, x.fifo.len())
			}
			for i := n; i < len(vals); i++ {
				x.set(vals[i], int64(i))
			}
			want := slices.Concat(vals[:cut], vals[n:])
			for i, w := range want {
				v, k, ok := x.min()
				if !ok || v != w || k != w.key {
					t.Fatalf("%d values, cut to %d: min %d = %v, %d, %v; want %v", n, cut, i, v, k, ok, w)
				}
				x.remove(v)
				if err := x.check(); err != nil {
					t.Fatalf("%d values, cut to %d, %d taken: %v", n, cut, i+1, err)
				}
			}
			if x.len() != 0 || x.fifo.len() != 0 || x.head != 0 {
				t.Fatalf("%d values, cut to %d, emptied: len %d, FIFO %d items, head %d", n, cut, x.len(), x.fifo.len(), x.head)
			}
		}
	}
}
