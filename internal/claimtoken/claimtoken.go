// Package claimtoken carries a store's token for a claimed job from the
// claim to the record of its outcome, so that the store that claimed the
// job finds it again without looking it up.
package claimtoken

import "time"

// Token is what a store handed out with one claimed job. The zero Token
// stands for none. A store must check that a token it gets back is one of
// its own and still names the claim of the record it comes with, and
// treat any other as none.
type Token struct {
	V any
	// Last, when not nil, is room for the claimed record's
	// Status.LastExecutionTime to point to: it lives as long as the
	// record and nothing else refers to it, except that record's
	// Status.LastExecutionTime itself.
	Last *time.Time
}

// Of returns the token methods of store s for the Scheduler, nil when s
// has none. The memory store sets it (when its package is in the
// program) to answer for a *memory.Store itself only: a type that embeds
// one has ClaimDue and RecordBatch of its own, which the tokens must not
// pass by. Reaching the methods this way keeps them out of the store's
// API.
var Of func(s any) any
