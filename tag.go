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
	// collection NUL name NUL creation-ns occurrence, hashed in one go
	// from a buffer on the stack for the usual lengths of names.
	var buf [128]byte
	b := append(buf[:0], r.Collection...)
	b = append(b, 0)
	b = append(b, r.Name...)
	b = append(b, 0)
	b = binary.BigEndian.AppendUint64(b, uint64(r.Created.UnixNano()))
	b = binary.BigEndian.AppendUint64(b, uint64(n))
	sum := sha256.Sum256(b)
	var tag [16]byte
	hex.Encode(tag[:], sum[:8])
	return string(tag[:])
}
