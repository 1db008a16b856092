package memory

// index orders values by a key, least first, and values with equal keys by
// a sequence number: a min-heap in a slice, in which each value has up to
// four children (half the levels of a binary heap: a change moves a value
// past half as many others, each of which must be told its new place).
// Each value keeps its place in the heap where place says, so that
// changing its key or taking it out finds it without a search. Adding,
// changing and taking out a value cost O(log n) in the number of values in
// the index, finding the least O(1).
//
// The store keeps three: the jobs that are due, by the instant they can
// be claimed; the jobs in a final state, by their last write; and the jobs
// with history, by the end of their oldest entry.
type index[T any] struct {
	items []item[T]
	// place returns where v keeps its place: its position in items plus
	// one, 0 when it is not in the index.
	place func(v T) *int32
}

type item[T any] struct {
	key int64
	seq uint64
	v   T
}

// len returns the number of values in x.
func (x *index[T]) len() int { return len(x.items) }

// min returns the value with the least key, and that key; ok is false
// when x is empty.
func (x *index[T]) min() (v T, key int64, ok bool) {
	if len(x.items) == 0 {
		return v, 0, false
	}
	return x.items[0].v, x.items[0].key, true
}

// key returns v's key; ok is false when v is not in x.
func (x *index[T]) key(v T) (key int64, ok bool) {
	p := *x.place(v)
	if p == 0 {
		return 0, false
	}
	return x.items[p-1].key, true
}

// set puts v in x with key and seq, or moves it there if it is in x.
func (x *index[T]) set(v T, key int64, seq uint64) {
	p := x.place(v)
	if *p == 0 {
		x.items = append(x.items, item[T]{key, seq, v})
		*p = int32(len(x.items))
		x.up(len(x.items) - 1)
		return
	}
	i := int(*p - 1)
	x.items[i].key, x.items[i].seq = key, seq
	if !x.down(i) {
		x.up(i)
	}
}

// remove takes v out of x, if it is there.
func (x *index[T]) remove(v T) {
	p := x.place(v)
	if *p == 0 {
		return
	}
	i, last := int(*p-1), len(x.items)-1
	*p = 0
	if i != last {
		x.items[i] = x.items[last]
		*x.place(x.items[i].v) = int32(i + 1)
	}
	x.items[last] = item[T]{}
	x.items = x.items[:last]
	if i != last && !x.down(i) {
		x.up(i)
	}
}

// countUpTo returns the number of values whose key is at most max. It
// visits those values and the children of theirs that are not: a value's
// children never have a smaller key.
func (x *index[T]) countUpTo(max int64) int {
	n, stack := 0, []int{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i >= len(x.items) || x.items[i].key > max {
			continue
		}
		n++
		stack = append(stack, 4*i+1, 4*i+2, 4*i+3, 4*i+4)
	}
	return n
}

// before reports whether a sorts before b.
func (a *item[T]) before(b *item[T]) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.seq < b.seq
}

// put puts it at i and tells its value so.
func (x *index[T]) put(i int, it item[T]) {
	x.items[i] = it
	*x.place(it.v) = int32(i + 1)
}

// up moves the value at i towards the root while it sorts before its
// parent.
func (x *index[T]) up(i int) {
	it := x.items[i]
	for i > 0 {
		p := (i - 1) / 4
		if !it.before(&x.items[p]) {
			break
		}
		x.put(i, x.items[p])
		i = p
	}
	x.put(i, it)
}

// down moves the value at i0 towards the leaves while its least child
// sorts before it, and reports whether it moved.
func (x *index[T]) down(i0 int) bool {
	it := x.items[i0]
	i, n := i0, len(x.items)
	for {
		least := 4*i + 1
		if least >= n {
			break
		}
		for c := least + 1; c <= 4*i+4 && c < n; c++ {
			if x.items[c].before(&x.items[least]) {
				least = c
			}
		}
		if !x.items[least].before(&it) {
			break
		}
		x.put(i, x.items[least])
		i = least
	}
	x.put(i, it)
	return i > i0
}
