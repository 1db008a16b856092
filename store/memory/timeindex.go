package memory

// timeIndex orders entries by a timeKey for pruning: the store's index of
// final jobs (by their last write) and of jobs with history (by their
// oldest entry). Keys usually arrive in order, as jobs finish and
// outcomes are recorded one after another: those go to a FIFO, where
// adding, taking the least and taking out any entry cost O(1) and touch no
// other entry; the rest go to a timeHeap. An entry taken out of the FIFO
// leaves a hole (an item without entry) that keeps its key; holes are
// dropped when they reach the front, and all of them once they outnumber
// the entries.
//
// x.pos[which] says where an entry is: 0 nowhere, a positive p at p-1 in
// the heap, a negative p in the FIFO with position number -p-1: fifo[i]
// has number base+i (modulo 2^31), so that moving the items to the front
// of the array changes base and no entry.
type timeIndex struct {
	// chunks hold the FIFO's items [head, tail) by index i at
	// chunks[i/timeChunk][i%timeChunk], each chunk full size: it grows
	// without copying and drops its front chunk once consumed, keeping it
	// as spare for the next one.
	chunks     [][]timeItem
	spare      []timeItem
	head, tail int
	base       uint32 // the position number of index 0
	holes      int    // in [head, tail)
	heap       timeHeap
}

// posMask keeps position numbers within the 31 bits x.pos has for them.
const posMask = 1<<31 - 1

// len returns the number of entries in t.
func (t *timeIndex) len() int { return t.tail - t.head - t.holes + t.heap.n }

// item returns the FIFO's item at index i.
func (t *timeIndex) item(i int) *timeItem {
	return &t.chunks[uint(i)/timeChunk][uint(i)%timeChunk]
}

// fifoIndex returns the index of the FIFO item at position p.
func (t *timeIndex) fifoIndex(p int32) int { return int((uint32(-p-1) - t.base) & posMask) }

// number returns x.pos for the FIFO item at index i.
func (t *timeIndex) number(i int) int32 { return -int32((t.base+uint32(i))&posMask) - 1 }

// min returns the entry with the least key.
func (t *timeIndex) min() (*entry, int64, bool) {
	he, hat, hok := t.heap.min()
	if t.head < t.tail {
		if it := t.item(t.head); !hok || it.at <= hat {
			return it.e, it.at, true
		}
	}
	return he, hat, hok
}

// at returns e's key; e must be in t.
func (t *timeIndex) at(e *entry) int64 {
	if p := e.x.pos[t.heap.which]; p < 0 {
		return t.item(t.fifoIndex(p)).at
	}
	return t.heap.at(e)
}

// set puts e in t with key at, or moves it there.
func (t *timeIndex) set(e *entry, at int64) {
	x := e.ext()
	switch p := x.pos[t.heap.which]; {
	case p > 0:
		t.heap.set(e, at)
		return
	case p < 0:
		if t.item(t.fifoIndex(p)).at == at {
			return
		}
		t.remove(e)
	}
	if t.tail > t.head && at < t.item(t.tail-1).at {
		t.heap.set(e, at)
		return
	}
	if t.tail == len(t.chunks)*timeChunk {
		c := t.spare
		if c == nil {
			c = make([]timeItem, timeChunk)
		}
		t.spare = nil
		t.chunks = append(t.chunks, c)
	}
	x.pos[t.heap.which] = t.number(t.tail)
	*t.item(t.tail) = timeItem{at, e}
	t.tail++
}

// remove takes e out of t, if it is there.
func (t *timeIndex) remove(e *entry) {
	if e.x == nil {
		return
	}
	p := e.x.pos[t.heap.which]
	if p >= 0 {
		t.heap.remove(e)
		return
	}
	e.x.pos[t.heap.which] = 0
	t.item(t.fifoIndex(p)).e = nil
	t.holes++
	t.trim()
	if live := t.tail - t.head - t.holes; t.holes >= minCompact && t.holes > live {
		t.compact()
	}
}

// trim drops the holes at the front of the FIFO, and the chunks they
// leave behind.
func (t *timeIndex) trim() {
	for t.head < t.tail && t.item(t.head).e == nil {
		*t.item(t.head) = timeItem{}
		t.head++
		t.holes--
	}
	if t.head == t.tail { // empty: start again at index 0
		t.base += uint32(t.head)
		t.head, t.tail = 0, 0
		return
	}
	for t.head >= timeChunk {
		t.spare = t.chunks[0]
		n := copy(t.chunks, t.chunks[1:])
		t.chunks[n] = nil
		t.chunks = t.chunks[:n]
		t.head -= timeChunk
		t.tail -= timeChunk
		t.base += timeChunk
	}
}

// compact drops every hole, numbering the entries left afresh.
func (t *timeIndex) compact() {
	k := 0
	for i := t.head; i < t.tail; i++ {
		if it := *t.item(i); it.e != nil {
			*t.item(k) = it
			k++
		}
	}
	for i := k; i < t.tail; i++ {
		*t.item(i) = timeItem{}
	}
	t.base += uint32(t.head)
	t.head, t.tail, t.holes = 0, k, 0
	for i := range k {
		t.item(i).e.x.pos[t.heap.which] = t.number(i)
	}
}
