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
// The FIFO's items live in fixed-size chunks: it grows by a chunk at its
// end and gives back the chunk at its front once every item of it is
// gone, keeping it as a spare for the next chunk it needs. Growing never
// copies items (a growing array would, leaving copies of its old arrays
// behind for the collector), and the room beyond the items is less than
// three chunks: the spare, the front chunk's taken places and the last
// chunk's free ones.
//
// An entry in the queue has the queue's flag (inDue or inHeld) and, when
// in the FIFO, inFIFO; its idx is its place in the heap, or its item's
// position number in the FIFO. Position numbers grow by one per push and
// stay with the item until it is taken out or compact moves it.
type queue struct {
	chunks []*chunk // the item at position p is chunks[(p-start)/chunkLen][(p-start)%chunkLen]
	start  uint32   // the position number of chunks[0][0]
	head   uint32   // the position of the FIFO's first item, an entry's when head != tail
	tail   uint32   // the position past the FIFO's last item
	holes  int      // among the items in [head, tail)
	spare  *chunk   // a chunk the FIFO gave back, for the next one it needs
	heap   dueHeap
}

// chunkLen is the number of items in a chunk of the FIFO (a power of two:
// 6 KiB a chunk).
const chunkLen = 256

type chunk [chunkLen]heapItem

// minCompact is the least number of holes that compact drops at once.
const minCompact = 64

// len returns the number of entries in q.
func (q *queue) len() int { return int(q.tail-q.head) - q.holes + len(q.heap) }

// item returns the FIFO's item at position p, which must be in
// [q.start, q.tail).
func (q *queue) item(p uint32) *heapItem {
	off := p - q.start
	return &q.chunks[off/chunkLen][off%chunkLen]
}

// push adds e, ready at ready; which is the flag (inDue or inHeld) that
// says q holds it.
func (q *queue) push(e *entry, ready int64, which uint16) {
	it := heapItem{ready, e.seq, e}
	if q.tail != q.head && less(&it, q.item(q.tail-1)) {
		q.heap.push(e, ready, which)
		return
	}
	if q.tail-q.start == uint32(len(q.chunks))*chunkLen {
		c := q.spare
		if c == nil {
			c = new(chunk)
		}
		q.spare = nil
		q.chunks = append(q.chunks, c)
	}
	e.flags |= which | inFIFO
	e.idx = int32(q.tail)
	*q.item(q.tail) = it
	q.tail++
}

// first returns the item of the entry that sorts first, or nil when q is
// empty.
func (q *queue) first() *heapItem {
	var f *heapItem
	if q.head != q.tail {
		f = q.item(q.head)
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
	if q.item(q.at(e)).ready == ready {
		return
	}
	which := e.flags & (inDue | inHeld)
	q.remove(e)
	q.push(e, ready, which)
}

// at returns the position of e, which is in the FIFO.
func (q *queue) at(e *entry) uint32 { return uint32(e.idx) }

// remove takes e, which q holds, out of q.
func (q *queue) remove(e *entry) {
	if e.flags&inFIFO == 0 {
		q.heap.remove(int(e.idx))
		return
	}
	e.flags &^= inDue | inHeld | inFIFO
	q.item(q.at(e)).e = nil
	q.holes++
	for q.head != q.tail && q.item(q.head).e == nil {
		*q.item(q.head) = heapItem{}
		q.head++
		q.holes--
		if q.head-q.start == chunkLen {
			// Every item of the front chunk is gone.
			q.spare, q.chunks[0] = q.chunks[0], nil
			q.chunks = q.chunks[1:]
			q.start += chunkLen
		}
	}
	if q.holes >= minCompact && q.holes > int(q.tail-q.head)-q.holes {
		q.compact()
	}
}

// compact drops the holes of the FIFO, moving its items towards the
// front, and gives back the chunks left empty at its end.
func (q *queue) compact() {
	w := q.head
	for p := q.head; p != q.tail; p++ {
		it := q.item(p)
		if it.e == nil {
			continue
		}
		if p != w {
			*q.item(w) = *it
			it.e.idx = int32(w)
		}
		w++
	}
	for p := w; p != q.tail; p++ {
		*q.item(p) = heapItem{}
	}
	q.tail, q.holes = w, 0
	n := int((q.tail - q.start + chunkLen - 1) / chunkLen) // the chunks in use
	if n < len(q.chunks) {
		q.spare = q.chunks[n]
		clear(q.chunks[n:])
		q.chunks = q.chunks[:n]
	}
}

// countReady returns the number of entries whose ready time is not after
// now.
func (q *queue) countReady(now int64) int {
	n := q.heap.countReady(now)
	for p := q.head; p != q.tail; p++ {
		it := q.item(p)
		if it.ready > now {
			break
		}
		if it.e != nil {
			n++
		}
	}
	return n
}
