// Package guard recovers the panics of an implementation of an interface
// that a user supplies (an Observer, say), so that a bug of the user's
// never takes down what calls it, and logs them.
package guard

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync/atomic"
)

// Panics recovers the panics of the methods of one implementation, named
// by their index in the methods given to New. The first panic of each
// method is logged as an error with its stack, the later ones at debug
// level.
type Panics struct {
	log         *slog.Logger
	first, next string // the messages of a method's first panic and of the later ones
	methods     []string
	panicked    []atomic.Bool
}

// New returns a Panics that logs to log that what ("the Observer
// (Config.Observer)") panicked and then what happens ("the scheduler goes
// on as if the call returned nothing"), naming the method by its index in
// methods.
func New(log *slog.Logger, what, then string, methods ...string) *Panics {
	return &Panics{log: log, first: what + " panicked; " + then, next: what + " panicked again",
		methods: methods, panicked: make([]atomic.Bool, len(methods))}
}

// Recover, deferred by the function that calls method m of the
// implementation, recovers a panic of that method and logs it with ctx,
// the context of the call (context.Background() when it has none), so
// that what the logger's handler reads from a context (a trace ID) is in
// the record.
func (p *Panics) Recover(ctx context.Context, m int) {
	v := recover()
	if v == nil {
		return
	}
	if p.panicked[m].CompareAndSwap(false, true) {
		p.log.ErrorContext(ctx, p.first, "method", p.methods[m], "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		return
	}
	p.log.DebugContext(ctx, p.next, "method", p.methods[m], "panic", fmt.Sprint(v))
}
