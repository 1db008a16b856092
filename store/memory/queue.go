package memory

// queue orders entries by ready time, then by seq, as dueHeap does, for
// ClaimDue. Entries usually arrive in that order: jobs registered in the
// order they come due, and leases taken one claim after another, each
// ending a lease duration after its claim. Those go to a FIFO, where a
// push, taking the first entry and taking out any entry cost O(1) and
// touch no other entry; the rest go to a heap. An entry taken out of the
// FIFO leaves a hole (an item without entry) that keeps its place in the
// order; holes are dropped when they reach the front, and all of them
// once they outnumber the entries, so the FIFO never holds more than
// twice as many items as entries (plus a constant).
//
// An entry in the queue has the queue's flag (inDue or inHeld) and, when
// in the FIFO, inFIFO; its idx is its place in the heap, or its position
// number in the FIFO: fifo[i] has number base+i, so that moving items to
// the front of the array changes base and no entry.
type queue struct {
	fifo  []heapItem // fifo[head:] in order; items whose e is nil are holes
	head  int        // fifo[head] is an entry's, when head < len(fifo)
	base  uint32     // the position number of fifo[0]
	holes int        // in fifo[head:]
	heap  dueHeap
}

// minCompact is the least number of holes that compact drops at once.
const minCompact = 64

// len returns the number of entries in q.
func (q *queue) len() int { return len(q.fifo) - q.head - q.holes + len(q.heap) }

// push adds e, ready at ready; which is the flag (inDue or inHeld) that
// says q holds it.
func (q *queue) push(e *entry, ready int64, which uint16) {
	it := heapItem{ready, e.seq, e}
	n := len(q.fifo)
	if n > q.head && less(&it, &q.fifo[n-1]) {
		q.heap.push(e, ready, which)
		return
	}
	if n == cap(q.fifo) && q.head >= n/2 && q.head > 0 {
		// Reuse the array rather than grow it: move the items to the
		// front. Their numbers stay as they are.
		k := copy(q.fifo, q.fifo[q.head:])
		clear(q.fifo[k:])
		q.fifo = q.fifo[:k]
		q.base += uint32(q.head)
		q.head, n = 0, k
	}
	e.flags |= which | inFIFO
	e.idx = int32(q.base + uint32(n))
	q.fifo = append(q.fifo, it)
}

// first returns the item of the entry that sorts first, or nil when q is
// empty.
func (q *queue) first() *heapItem {
	var f *heapItem
	if q.head < len(q.fifo) {
		f = &q.fifo[q.head]
	}
	if len(q.heap) > 0 && (f == nil || less(&q.heap[0], f)) {
		f = &q.heap[0]
	}
	return f
}

// fix sets e's ready time and restores the order.
func (q *queue) fix(e *entry, ready int64) {
	if e.flags&inFIFO == 0 {
		q.heap.fix(int(e.idx), ready)
		return
	}
	if q.fifo[q.at(e)].ready == ready {
		return
	}
	which := e.flags & (inDue | inHeld)
	q.remove(e)
	q.push(e, ready, which)
}

// at returns the index in q.fifo of e, which is in the FIFO.
func (q *queue) at(e *entry) int { return int(uint32(e.idx) - q.base) }

// remove takes e, which q holds, out of q.
func (q *queue) remove(e *entry) {
	if e.flags&inFIFO == 0 {
		q.heap.remove(int(e.idx))
		return
	}
	e.flags &^= inDue | inHeld | inFIFO
	i := q.at(e)
	q.fifo[i].e = nil
	q.holes++
	for q.head < len(q.fifo) && q.fifo[q.head].e == nil {
		q.fifo[q.head] = heapItem{}
		q.head++
		q.holes--
	}
	switch {
	case q.head == len(q.fifo):
		q.base += uint32(len(q.fifo))
		q.fifo, q.head = q.fifo[:0], 0
	case q.holes >= minCompact && q.holes > len(q.fifo)-q.head-q.holes:
		q.compact()
	}
}

// compact drops the holes of the FIFO, moving its items to the front.
func (q *queue) compact() {
	k := 0
	for _, it := range q.fifo[q.head:] {
		if it.e != nil {
			q.fifo[k] = it
			it.e.idx = int32(q.base + uint32(k))
			k++
		}
	}
	clear(q.fifo[k:])
	q.fifo, q.head, q.holes = q.fifo[:k], 0, 0
}

// countReady returns the number of entries whose ready time is not after
// now.
func (q *queue) countReady(now int64) int {
	n := q.heap.countReady(now)
	for _, it := range q.fifo[q.head:] {
		if it.ready > now {
			break
		}
		if it.e != nil {
			n++
		}
	}
	return n
}
