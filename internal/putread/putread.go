// Package putread lets the Scheduler read what putting a job needs from
// the memory store in one call, without a copy of the collection's
// record.
//
// A put reads the collection (for its name and maxRecurrence) and the job
// it replaces, if any. Through the Store interface that is two calls,
// each returning a copy the caller may change. The memory store never
// changes a collection record in place (every write replaces it), so the
// record it holds is a snapshot the Scheduler can read after the store's
// lock is released, as long as nothing writes to it. Lending the record
// must stay between the Scheduler and the store: the method that does it
// takes a Key, which code outside this module cannot name.
package putread

// Key is the first argument of the memory store's put read. Code outside
// this module can neither name it nor write a value of it: its only
// member is blank, and a blank member of another package's struct type
// makes that type a different one.
type Key struct{ _ struct{} }
