package sqlstore

import (
	"math"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func TestNanos(t *testing.T) {
	tests := []struct {
		name string
		in   time.Time
		want any
	}{
		{"zero", time.Time{}, nil},
		{"epoch", time.Unix(0, 0), int64(0)},
		{"nanoseconds", time.Date(2030, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600)), time.Date(2030, 1, 2, 2, 4, 5, 6, time.UTC).UnixNano()},
		{"after 2262", time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), int64(math.MaxInt64)},
		{"before 1678", time.Date(1, 1, 2, 0, 0, 0, 0, time.UTC), int64(math.MinInt64)},
	}
	for _, tt := range tests {
		if got := Nanos(tt.in); got != tt.want {
			t.Errorf("%s: Nanos(%v) = %v, want %v", tt.name, tt.in, got, tt.want)
		}
	}
	in := time.Date(2030, 1, 2, 3, 4, 5, 987654321, time.FixedZone("X", -7200))
	got := Time(NanosInt(in), true)
	if !got.Equal(in) || got.Location() != time.UTC {
		t.Errorf("Time(NanosInt(%v)) = %v, want the same instant in UTC", in, got)
	}
	if !Time(42, false).IsZero() {
		t.Errorf("Time(NULL) is not the zero Time")
	}
}

func TestLoadMigrations(t *testing.T) {
	tests := []struct {
		name  string
		files fstest.MapFS
		want  string // error substring; empty for success
		n     int
	}{
		{"ordered", fstest.MapFS{"m/002_b.sql": {Data: []byte("B")}, "m/001_a.sql": {Data: []byte("A")}, "m/README": {}}, "", 2},
		{"gap", fstest.MapFS{"m/001_a.sql": {}, "m/003_c.sql": {}}, "version 3, want 2", 0},
		{"no number", fstest.MapFS{"m/init.sql": {}}, "does not start with a version number", 0},
		{"zero", fstest.MapFS{"m/000_x.sql": {}}, "does not start with a version number", 0},
	}
	for _, tt := range tests {
		got, err := LoadMigrations(tt.files, "m")
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: LoadMigrations: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: LoadMigrations error %v, want one containing %q", tt.name, err, tt.want)
		case tt.want == "" && (len(got) != tt.n || got[0].SQL != "A" || got[1].Version != 2):
			t.Errorf("%s: LoadMigrations = %+v, want A then B", tt.name, got)
		}
	}
}
