package postgres

import (
	"strings"
	"testing"
)

// TestSQLKeepsTexts: the text of a statement for the store's schema is
// made once; the claim and record statements, which run many times a
// second, then cost no copy each.
func TestSQLKeepsTexts(t *testing.T) {
	s := &Store{repl: strings.NewReplacer("{s}.", `"sch"."`)}
	for _, q := range []string{claimSQL, recordSQL, recordBatchSQL} {
		want := strings.ReplaceAll(q, "{s}.", `"sch"."`)
		if got := s.sql(q); got != want {
			t.Fatalf("sql(%.40q...) = %.80q..., want %.80q...", q, got, want)
		}
		if n := testing.AllocsPerRun(100, func() { s.sql(q) }); n != 0 {
			t.Errorf("sql(%.40q...) allocates %v times, want 0", q, n)
		}
		if got := s.sql(q); got != want {
			t.Errorf("sql(%.40q...) again = %.80q..., want %.80q...", q, got, want)
		}
	}
}
