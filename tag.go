package scheduler

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// executionTag returns the execution tag of occurrence number n of job r.
// It is derived from what the store holds (the job's identity, its
// creation instant and the occurrence number) rather than drawn at
// random, so that an instance which takes an occurrence over after another
// one died mid-attempt sends the same tag, and receivers can drop the
// duplicate. A job deleted and created again under the same name has a new
// creation instant and so new tags.
func executionTag(r *JobRecord, n int) string {
	h := sha256.New()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(r.Created.UnixNano()))
	binary.BigEndian.PutUint64(b[8:], uint64(n))
	h.Write([]byte(r.Collection))
	h.Write([]byte{0})
	h.Write([]byte(r.Name))
	h.Write([]byte{0})
	h.Write(b[:])
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:8])
}
