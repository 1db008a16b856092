package memory

import "slices"

// index orders values by a key, least first, and values with equal keys by
// their tie numbers. The store keeps four: the jobs that are due, by their
// due time; the jobs under a lease that ends after they are due, by the
// lease's end; the jobs in a final state, by their last write; and the
// jobs with history, by the end of their oldest entry.
//
// Values mostly come in order: jobs registered in the order they come due,
// leases taken one claim after another, jobs finishing in turn. Those go
// to a FIFO, where adding a value, taking the least and taking out any
// value cost O(1); the others go to a heap, where those cost O(log n). A
// value taken out of the FIFO leaves a hole where it was (its item, with
// its key but without the value), so that no other value moves; the holes
// go when they come to the front, and all at once when they outnumber the
// values.
//
// Each value keeps its place in the index where place says, so that
// changing its key or taking it out finds it without a search.
//
// The FIFO keeps its items in chunks of a page (see chunks): as a burst
// of jobs finishes, the FIFO of final jobs grows by one value per job,
// and a slice that doubles would allocate twice what it ends up holding
// and copy it all along. The heap is a plain slice that doubles when
// full: the append's own growth, a quarter at a time for large slices,
// would leave about four times the final array behind as garbage.
type index[T value] struct {
	fifo  chunks[T] // from fifo.at(head) on, in order; an item whose v is the zero T is a hole, never the last
	head  int       // the items before fifo.at(head) are holes
	holes int       // from fifo.at(head) on
	heap  []item[T] // a min-heap in which each item has up to four children
	// place returns where v keeps its place: p > 0 for heap[p-1], p < 0
	// for fifo.at(-p-1), 0 when v is not in the index.
	place func(v T) *int32
}

// value is what an index holds: a pointer (an item whose value is the
// zero T is a hole) to something that orders values with equal keys.
type value interface {
	comparable
	tie() uint32
}

type item[T value] struct {
	key int64
	v   T
}

// before reports whether a sorts before b: by key, then by tie.
func (a *item[T]) before(b *item[T]) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.v.tie() < b.v.tie()
}

// chunkLen is the number of items in a chunk of a FIFO: 4,080 bytes (an
// item takes 16), which with the 8-byte malloc header that the Go
// allocator puts before a small object (32 KiB at most) of over 512
// bytes with pointers fills the 4 KiB size class. (256 items would take
// the next class, 4,864 bytes.)
const chunkLen = 255

// chunks is an array of items that grows a chunk at a time: appending
// never copies what it holds, and what it allocates is what it holds, up
// to a chunk.
type chunks[T value] struct {
	c []*[chunkLen]item[T]
	n int // the items held: those of c[:n/chunkLen] and the first n%chunkLen of the next
}

// len returns the number of items in a.
func (a *chunks[T]) len() int { return a.n }

// at returns the item at i, which must be below a.len().
func (a *chunks[T]) at(i int) *item[T] { return &a.c[i/chunkLen][i%chunkLen] }

// push appends it to a, in a new chunk when those it holds are full.
func (a *chunks[T]) push(it item[T]) {
	if a.n == len(a.c)*chunkLen {
		a.c = append(a.c, new([chunkLen]item[T]))
	}
	a.n++
	*a.at(a.n - 1) = it
}

// truncate drops the items from n on, which must be at most a.len(),
// zeroing them. It keeps their chunks for the items pushed next, as a
// slice keeps its array: the FIFO of leases, which compaction halves
// over and over as leases end in turn, allocates nothing once it has
// grown to the most leases held at once.
func (a *chunks[T]) truncate(n int) {
	for i := n; i < a.n; i++ {
		*a.at(i) = item[T]{}
	}
	a.n = n
}

// grow returns s with room for one more item, doubling its array when
// it is full.
func grow[T value](s []item[T]) []item[T] {
	if len(s) < cap(s) {
		return s
	}
	return slices.Grow(s, max(len(s), 8))
}

// len returns the number of values in x.
func (x *index[T]) len() int { return x.fifo.len() - x.head - x.holes + len(x.heap) }

// first returns the item of the value that sorts first, nil when x is
// empty.
func (x *index[T]) first() *item[T] {
	var f *item[T]
	if x.head < x.fifo.len() {
		f = x.fifo.at(x.head)
	}
	if len(x.heap) > 0 && (f == nil || x.heap[0].before(f)) {
		f = &x.heap[0]
	}
	return f
}

// min returns the value that sorts first and its key; ok is false when x
// is empty.
func (x *index[T]) min() (v T, key int64, ok bool) {
	f := x.first()
	if f == nil {
		return v, 0, false
	}
	return f.v, f.key, true
}

// at returns v's item, nil when v is not in x.
func (x *index[T]) at(v T) *item[T] {
	switch p := *x.place(v); {
	case p > 0:
		return &x.heap[p-1]
	case p < 0:
		return x.fifo.at(int(-p - 1))
	}
	return nil
}

// key returns v's key; ok is false when v is not in x.
func (x *index[T]) key(v T) (key int64, ok bool) {
	if it := x.at(v); it != nil {
		return it.key, true
	}
	return 0, false
}

// set puts v in x with key, or moves it there if it is in x.
func (x *index[T]) set(v T, key int64) {
	if it := x.at(v); it != nil {
		if it.key == key {
			return
		}
		if p := *x.place(v); p > 0 {
			it.key = key
			if !x.down(int(p - 1)) {
				x.up(int(p - 1))
			}
			return
		}
		x.remove(v)
	}
	it := item[T]{key, v}
	if n := x.fifo.len(); x.head == n || !it.before(x.fifo.at(n-1)) {
		x.fifo.push(it)
		*x.place(v) = -int32(n + 1)
		return
	}
	x.heap = append(grow(x.heap), it)
	x.up(len(x.heap) - 1)
}

// remove takes v out of x, if it is there.
func (x *index[T]) remove(v T) {
	p := *x.place(v)
	if p == 0 {
		return
	}
	*x.place(v) = 0
	if p < 0 {
		var none T
		x.fifo.at(int(-p - 1)).v = none
		x.holes++
		// Neither end of the FIFO is a hole: first reads its head, and
		// set compares a new value with its last item.
		n := x.fifo.len()
		for ; n > x.head && x.fifo.at(n-1).v == none; n-- {
			x.holes--
		}
		if n < x.fifo.len() {
			x.fifo.truncate(n)
		}
		for x.head < n && x.fifo.at(x.head).v == none {
			x.head++
			x.holes--
		}
		if dead := x.head + x.holes; x.head == n || dead >= 64 && 2*dead > n {
			x.compact()
		}
		return
	}
	i, last := int(p-1), len(x.heap)-1
	if i != last {
		x.put(i, x.heap[last])
	}
	x.heap[last] = item[T]{}
	x.heap = x.heap[:last]
	if i != last && !x.down(i) {
		x.up(i)
	}
}

// compact moves the FIFO's values to the front of its array, in order,
// dropping the holes.
func (x *index[T]) compact() {
	var none T
	n := 0
	for i := x.head; i < x.fifo.len(); i++ {
		if it := *x.fifo.at(i); it.v != none {
			*x.fifo.at(n) = it
			*x.place(it.v) = -int32(n + 1)
			n++
		}
	}
	x.fifo.truncate(n)
	x.head, x.holes = 0, 0
}

// countUpTo returns the number of values whose key is at most max. It
// reads the FIFO's values up to the first with a greater key, and the
// heap's values with a key up to max and their children (a value's
// children never have a smaller key).
func (x *index[T]) countUpTo(max int64) int {
	var none T
	n := 0
	for i := x.head; i < x.fifo.len(); i++ {
		it := x.fifo.at(i)
		if it.key > max {
			break
		}
		if it.v != none {
			n++
		}
	}
	stack := []int{0}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if i >= len(x.heap) || x.heap[i].key > max {
			continue
		}
		n++
		stack = append(stack, 4*i+1, 4*i+2, 4*i+3, 4*i+4)
	}
	return n
}

// put puts it at heap[i] and tells its value so.
func (x *index[T]) put(i int, it item[T]) {
	x.heap[i] = it
	*x.place(it.v) = int32(i + 1)
}

// up moves the heap's value at i towards the root while it sorts before
// its parent.
func (x *index[T]) up(i int) {
	it := x.heap[i]
	for i > 0 {
		p := (i - 1) / 4
		if !it.before(&x.heap[p]) {
			break
		}
		x.put(i, x.heap[p])
		i = p
	}
	x.put(i, it)
}

// down moves the heap's value at i0 towards the leaves while its least
// child sorts before it, and reports whether it moved.
func (x *index[T]) down(i0 int) bool {
	it := x.heap[i0]
	i, n := i0, len(x.heap)
	for {
		least := 4*i + 1
		if least >= n {
			break
		}
		for c := least + 1; c <= 4*i+4 && c < n; c++ {
			if x.heap[c].before(&x.heap[least]) {
				least = c
			}
		}
		if !x.heap[least].before(&it) {
			break
		}
		x.put(i, x.heap[least])
		i = least
	}
	x.put(i, it)
	return i > i0
}
