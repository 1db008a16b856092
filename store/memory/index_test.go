package memory

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// check reports the first place where x is not a FIFO and a heap in which
// every value knows its place.
func (x *index[T]) check() error {
	var none T
	holes := 0
	prev := -1 // the last value seen in the FIFO
	for i, it := range x.fifo {
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
		if prev >= 0 && it.before(&x.fifo[prev]) {
			return fmt.Errorf("the FIFO's item at %d sorts before the one at %d", i, prev)
		}
		prev = i
	}
	if n := len(x.fifo); n > x.head && x.fifo[n-1].v == none {
		return fmt.Errorf("the FIFO ends with a hole")
	}
	if holes != x.holes || x.head < len(x.fifo) && x.fifo[x.head].v == none {
		return fmt.Errorf("the FIFO holds %d holes, not %d, or starts with one", holes, x.holes)
	}
	if dead := x.head + holes; dead >= 64 && 2*dead > len(x.fifo) {
		return fmt.Errorf("the FIFO holds %d items, %d of them dead", len(x.fifo), dead)
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
