package scheduler

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// executionTag returns the execution tag of occurrence number n of job r.
// It is derived from what the store holds (the job's names, its
// incarnation and creation instant, and the occurrence number) rather
// than drawn at random, so that an instance which takes an occurrence
// over after another one died mid-attempt sends the same tag, and
// receivers can drop the duplicate. A job deleted and created again under
// the same name has a new incarnation (and most often a new creation
// instant) and so new tags: the outcome of an attempt of the first one,
// found by its tag (see JobSchedule.ownRun), is not taken for the second
// one's.
func executionTag(r *JobRecord, n int) string {
	return tagOf(r.Collection, r.Name, r.tagSeed(), n)
}

// tagSeed returns what a job's execution tags are made of besides its
// names and the occurrence number: its creation instant in Unix
// nanoseconds, mixed with its Incarnation when it has one (a job without,
// from a store that keeps none or from before its store drew them, keeps
// the tags it had). The multiplier spreads small incarnations (a count of
// creates) over all 64 bits.
func (r *JobRecord) tagSeed() int64 {
	return r.Created.UnixNano() ^ r.Incarnation*-7046029254386353131 // 0x9e3779b97f4a7c15
}

// tagOf is executionTag of occurrence number n of the job of the
// collection and name whose tagSeed is seed.
func tagOf(collection, name string, seed int64, n int) string {
	// collection NUL name NUL seed occurrence, hashed in one go
	// from a buffer on the stack for the usual lengths of names.
	var buf [128]byte
	b := append(buf[:0], collection...)
	b = append(b, 0)
	b = append(b, name...)
	b = append(b, 0)
	b = binary.BigEndian.AppendUint64(b, uint64(seed))
	b = binary.BigEndian.AppendUint64(b, uint64(n))
	sum := sha256.Sum256(b)
	var tag [16]byte
	hex.Encode(tag[:], sum[:8])
	return string(tag[:])
}

// tagged fills in the execution tag of o, an occurrence of r, when it is
// empty: start leaves it so when nothing reads it before the occurrence's
// attempt ends (see machine.tagLater), and the occurrence is tagged where
// it is kept in the record (for a retry, a wait for a limit, an
// occurrence that starts as an outcome is applied) or its tag is read.
// Nil o: nothing to do.
func tagged(r *JobRecord, o *Occurrence) {
	if o != nil && o.Tag == "" {
		o.Tag = executionTag(r, o.Number)
	}
}
