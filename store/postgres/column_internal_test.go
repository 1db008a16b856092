package postgres

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// TestColumnEncodesWithoutBoxing: pgx encodes a column without an
// allocation per element, where a []string costs one each.
func TestColumnEncodesWithoutBoxing(t *testing.T) {
	m := pgtype.NewMap()
	var texts column[pgtype.Text]
	var ints column[pgtype.Int8]
	for i := range 100 {
		texts.add(text(strings.Repeat("x", i)))
		ints.add(bigint(int64(i)<<40, i%3 != 0))
	}
	buf := make([]byte, 0, 1<<16)
	for _, tt := range []struct {
		name string
		oid  uint32
		v    any
	}{
		{"text[]", pgtype.TextArrayOID, &texts},
		{"bigint[]", pgtype.Int8ArrayOID, &ints},
	} {
		if _, err := m.Encode(tt.oid, pgtype.BinaryFormatCode, tt.v, buf[:0]); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if n := testing.AllocsPerRun(20, func() {
			if _, err := m.Encode(tt.oid, pgtype.BinaryFormatCode, tt.v, buf[:0]); err != nil {
				t.Fatal(err)
			}
		}); n > 2 {
			t.Errorf("encoding a %s of 100 elements: %v allocations, want at most 2", tt.name, n)
		}
	}
}
