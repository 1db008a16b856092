package memory

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// check reports the first place where x is not a heap in which every
// value knows its place.
func (x *index[T]) check() error {
	for i := range x.items {
		if p := *x.place(x.items[i].v); int(p) != i+1 {
			return fmt.Errorf("the value at %d has place %d", i, p)
		}
		if i > 0 && x.items[i].before(&x.items[(i-1)/4]) {
			return fmt.Errorf("the value at %d is less than its parent", i)
		}
	}
	return nil
}

// TestIndex checks an index against a plain slice sorted by key and seq
// through random adds, moves, removals and takings of the least value.
func TestIndex(t *testing.T) {
	type val struct {
		place int32
		key   int64
		seq   uint64
		in    bool
	}
	r := rand.New(rand.NewPCG(1, 2))
	x := index[*val]{place: func(v *val) *int32 { return &v.place }}
	vals := make([]*val, 300)
	for i := range vals {
		vals[i] = &val{seq: uint64(r.IntN(50))} // ties among seqs too
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
	for step := range 20000 {
		v := vals[r.IntN(len(vals))]
		switch op := r.IntN(5); {
		case op < 2: // add or move
			v.key, v.in = int64(r.IntN(100)), true
			x.set(v, v.key, v.seq)
		case op == 2:
			v.in = false
			x.remove(v)
		case op == 3: // take the least
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
			max := int64(r.IntN(110) - 5)
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
}
