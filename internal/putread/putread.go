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
// is reached through Of, not through the store's API.
package putread

// Of returns the put read of store s for the Scheduler, nil when s lends
// none. The memory store sets it (when its package is in the program) to
// answer for a *memory.Store itself only, so that a type embedding one
// and overriding GetCollection or GetJob is read through its own methods.
var Of func(s any) any
