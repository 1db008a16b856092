package httpapi

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

// TestTopLevelProperties checks the quick envelope check against decoding:
// whenever it finds a top-level "properties" member, decoding finds one.
func TestTopLevelProperties(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want bool
	}{
		{`{"properties": {}}`, true},
		{` // c "properties"` + "\n" + `{ /* { */ "id": "x", "Properties": {"a": 1}}`, true},
		{`{"id": "x,}", "name": {"properties": 1}, "type": [1, {"x": "]"}], "PROPERTIES": null,}`, true},
		{`{"id": "a\"b", "properties": 1}`, true},
		{`{"id": 12, "x": true, "properties": 1}`, true},
		{`{"action": {"properties": {}}}`, false},
		{`{"prop\u0065rties": {}}`, false},
		{`[{"properties": {}}]`, false},
		{`"properties"`, false},
		{`{"a": 1 "properties": {}}`, false},
		{`{"a": / "properties": {}}`, false},
		{`{"a": /* "properties": {}}`, false},
		{``, false},
		{`{`, false},
	} {
		if got := topLevelProperties([]byte(tt.in)); got != tt.want {
			t.Errorf("topLevelProperties(%q) = %v, want %v", tt.in, got, tt.want)
		}
		if tt.want && !decodedProperties(tt.in) {
			t.Errorf("decoding %q finds no top-level properties", tt.in)
		}
	}
}

func decodedProperties(in string) bool {
	std, err := hujson.Standardize([]byte(in))
	if err != nil {
		return false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(std, &top) != nil {
		return false
	}
	for k := range top {
		if strings.EqualFold(k, "properties") {
			return true
		}
	}
	return false
}

// FuzzTopLevelProperties checks that the quick check never finds a member
// that decoding does not.
func FuzzTopLevelProperties(f *testing.F) {
	for _, s := range []string{`{"properties": {}}`, `{"id": "x", "properties": {"a": [1, "}"]}}`, `{"a": {"properties": 1}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if topLevelProperties(data) && !decodedProperties(string(data)) {
			// Decoding may also fail on input that is not JSON, where
			// both envelope checks let the body through to the parser.
			std, err := hujson.Standardize(bytes.Clone(data))
			if err != nil || !json.Valid(std) {
				return
			}
			var top map[string]json.RawMessage
			if json.Unmarshal(std, &top) != nil {
				return
			}
			t.Fatalf("topLevelProperties(%q) = true, decoding finds no properties member", data)
		}
	})
}
