package httpapi

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"
)

// Defaults of Admission, chosen for a machine of two cores on which 100
// clients call the API without pause while jobs come due at 1,000 a
// second; BENCHMARKS.md, "Load", has how late the jobs start with them.
const (
	DefaultAdmissionReads  = 2
	DefaultAdmissionWrites = 1
	DefaultAdmissionWait   = 2 * time.Second
)

// Admission bounds the API operations served at once, so that the
// scheduler's own work in the same process and store (claiming due jobs,
// recording their outcomes) is never queued behind API requests: the API
// slows down, or sheds load, before a job fires late.
//
// Reads (GET and HEAD) and writes (every other method) have slots of their
// own. An operation that finds every slot of its kind taken waits for one,
// in order of arrival, up to Wait; one that still has none is answered 429
// TooManyRequests with a Retry-After header (whole seconds) and the ARM
// error body, and nothing of it is applied. Requests refused before they
// reach an operation (authentication, the caller's budget, an unknown
// path) take no slot.
type Admission struct {
	// Reads is the most read operations served at once. Zero or less
	// means DefaultAdmissionReads (2).
	Reads int
	// Writes is the most write operations served at once. Zero or less
	// means DefaultAdmissionWrites (1).
	Writes int
	// Wait is how long an operation waits for a slot before it is
	// answered 429. Zero or less means DefaultAdmissionWait (2s).
	Wait time.Duration
	// Disabled serves every operation at once, without slots.
	Disabled bool
}

// admission holds the slots of Admission.
type admission struct {
	reads, writes chan struct{} // a buffered channel per kind: a send takes a slot
	wait          time.Duration
	retryAfter    string // the Retry-After header of a shed request
}

func newAdmission(a *Admission) *admission {
	var o Admission
	if a != nil {
		o = *a
	}
	if o.Disabled {
		return nil
	}
	if o.Reads <= 0 {
		o.Reads = DefaultAdmissionReads
	}
	if o.Writes <= 0 {
		o.Writes = DefaultAdmissionWrites
	}
	if o.Wait <= 0 {
		o.Wait = DefaultAdmissionWait
	}
	return &admission{reads: make(chan struct{}, o.Reads), writes: make(chan struct{}, o.Writes), wait: o.Wait,
		retryAfter: strconv.FormatInt(max(int64(math.Ceil(o.Wait.Seconds())), 1), 10)}
}

// enter takes a slot of r's kind, waiting up to the admission's Wait, and
// returns the function that gives it back. Without a slot it sets
// Retry-After and returns a 429 error, or ctx's error when the request
// ended first.
func (a *admission) enter(ctx context.Context, w http.ResponseWriter, r *http.Request) (func(), error) {
	slots := a.writes
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		slots = a.reads
	}
	leave := func() { <-slots }
	select {
	case slots <- struct{}{}:
		return leave, nil
	default:
	}
	t := time.NewTimer(a.wait)
	defer t.Stop()
	select {
	case slots <- struct{}{}:
		return leave, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
	}
	w.Header().Set("Retry-After", a.retryAfter)
	return nil, newError(http.StatusTooManyRequests, CodeTooManyRequests, "",
		"The server is busy: the request waited %s for its turn and was not applied. Please try again after '%s' seconds.",
		a.wait, a.retryAfter)
}
