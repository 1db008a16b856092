package scheduler

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jobclock/scheduler/action"
)

// referenceTag is the execution tag as first defined: receivers dedupe
// on it across versions, so executionTag must never change its value.
func referenceTag(r *JobRecord, n int) string {
	h := sha256.New()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(r.Created.UnixNano()))
	binary.BigEndian.PutUint64(b[8:], uint64(n))
	h.Write([]byte(r.Collection))
	h.Write([]byte{0})
	h.Write([]byte(r.Name))
	h.Write([]byte{0})
	h.Write(b[:])
	return hex.EncodeToString(h.Sum(nil)[:8])
}

func TestExecutionTagUnchanged(t *testing.T) {
	created := time.Date(2026, 11, 23, 4, 0, 0, 123456789, time.UTC)
	// A value computed by the first definition, as receivers saw it.
	if got, want := executionTag(&JobRecord{Collection: "reports", Name: "nightly", Created: created}, 7), "1fe5a9341893eb5e"; got != want {
		t.Errorf("executionTag(reports/nightly, 7) = %q, want %q", got, want)
	}
	long := strings.Repeat("n", 200) // past the stack buffer
	for _, r := range []JobRecord{
		{Collection: "c", Name: "j", Created: created},
		{Collection: "", Name: "", Created: time.Time{}},
		{Collection: "集合", Name: "jöb-1", Created: created.Add(-time.Hour)},
		{Collection: long, Name: "j", Created: created},
		{Collection: "c", Name: long + long, Created: created},
		{Collection: strings.Repeat("c", 55), Name: strings.Repeat("j", 55), Created: created},
	} {
		for _, n := range []int{0, 1, 2, min(1<<40, math.MaxInt), -1} {
			if got, want := executionTag(&r, n), referenceTag(&r, n); got != want {
				t.Errorf("executionTag(%q/%q, %d) = %q, want %q", r.Collection, r.Name, n, got, want)
			}
		}
	}
}

// TestRequestIDs checks the identifiers that an attempt's request makes
// when read: the job ID, the tag, and a version 4 UUID that is the same at
// every read of one attempt and new for every attempt.
func TestRequestIDs(t *testing.T) {
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for _, r := range []*JobRecord{
		{Collection: "集合", Name: "nightly-1"},
		{Collection: strings.Repeat("c", 100), Name: strings.Repeat("n", 100)},
	} {
		seen := map[string]bool{}
		for range 100 {
			st := &attemptState{req: action.Request{CollectionID: r.Collection}, name: r.Name, tag: "t", uuid: newUUID()}
			st.req.IDs = st
			req := &st.req
			if got := req.JobID(); got != r.ID() {
				t.Fatalf("JobID() = %q, want %q", got, r.ID())
			}
			if got := req.ExecutionTag(); got != "t" {
				t.Fatalf("ExecutionTag() = %q, want %q", got, "t")
			}
			u := req.ClientRequestID()
			if !uuid.MatchString(u) {
				t.Fatalf("ClientRequestID() = %q, not a version 4 UUID", u)
			}
			if again := req.ClientRequestID(); again != u {
				t.Fatalf("ClientRequestID() = %q, then %q", u, again)
			}
			if seen[u] {
				t.Fatalf("ClientRequestID() gave %q for two attempts", u)
			}
			seen[u] = true
		}
	}
}
