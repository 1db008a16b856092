package jsonc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tailscale/hujson"

	"github.com/jobclock/scheduler/internal/jsonc"
)

// oracle reads src with hujson and encoding/json, the way job definitions
// were read before this package: it returns the value as encoding/json
// decodes it with UseNumber, the compact size, or the syntax error with
// its line and column.
func oracle(src []byte) (v any, size int, err error) {
	data := src
	added := len(data) > 0 && data[len(data)-1] != '\n'
	if added {
		data = append(data[:len(data):len(data)], '\n')
	}
	ast, err := hujson.Parse(data)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "hujson: ")
		var line, col int
		if n, _ := fmt.Sscanf(msg, "line %d, column %d: ", &line, &col); n == 2 {
			_, msg, _ = strings.Cut(msg, ": ")
		}
		if lines := 1 + bytes.Count(src, []byte("\n")); added && line == lines+1 && col == 1 {
			// At the end of the newline added: jsonc places it just
			// after src's last byte, on src's last line.
			line, col = lines, 1+len(src)-(bytes.LastIndexByte(src, '\n')+1)
		}
		return nil, 0, &jsonc.SyntaxError{Line: line, Column: col, Msg: msg}
	}
	ast.Standardize()
	std := ast.Pack()
	var compact bytes.Buffer
	if err := json.Compact(&compact, std); err != nil {
		return nil, 0, err
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, 0, err
	}
	return v, compact.Len(), nil
}

var seeds = []string{
	``, ` `, `{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `01`, `1.`, `.5`, `1e5`, `1E+5`, `-1.5e-3`, `1e`, `+1`, `tru`, `nul`,
	`"x"`, `"\u00e9"`, `"\ud800"`, `"\x"`, `"a` + "\x01" + `"`, `"` + "\xff" + `"`, "\"\u2028\"", `"\"\\\/\b\f\n\r\t"`,
	`{"a":1}`, `{"a":1,}`, `[1,2,]`, `[1,,]`, `[,]`, `{,}`, `{"a"}`, `{"a" 1}`, `{"a":}`, `{"a":1 "b":2}`, `[1 2]`,
	`{1:2}`, `{]`, `[}`, `{"a":[1,{"b":null}],"a":2}`, `{} {}`, `{}x`, `'a'`, `{"a":1}//c`, `{"a":1}/*c`, `{"a":1}/*c*/`,
	"{\"a\": // c\n 1}", "{\"a\": /* c */ 1, // d\n}", "// only\n{}", "{\"a\":1}// \u2028 x\n", "{\"a\":1}// \xff\n",
	"{\n  \"action\": ,\n}", "{\n  \"action\": {\n", "{\"state\": enabled}", `{"properties": {"action": }}`,
	`[1, /* , */ ]`, `{"a": 1, /* } */ }`, `/`, `{"a":1}/`, `{"a":"` + strings.Repeat("x", 100) + `}`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
}

// exampleSeeds adds the job definitions of the repository's testdata:
// indented, with comments.
func exampleSeeds(t testing.TB) []string {
	files, err := filepath.Glob("../../testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example definitions: %v", err)
	}
	var out []string
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func FuzzParse(f *testing.F) {
	for _, s := range append(seeds, exampleSeeds(f)...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		agree(t, src)
	})
}

// TestParseAgrees runs the seeds and variants of each with a byte cut
// off or changed at every position.
func TestParseAgrees(t *testing.T) {
	for _, s := range exampleSeeds(t) {
		agree(t, []byte(s))
		for i := range len(s) {
			agree(t, []byte(s[:i]))
			b := []byte(s)
			b[i] = '"'
			agree(t, b)
		}
	}
	for _, s := range seeds {
		agree(t, []byte(s))
		if len(s) > 200 {
			continue
		}
		for i := range len(s) {
			agree(t, []byte(s[:i]))
			for _, c := range []byte{'"', ',', '}', ']', '/', '\n', 'x', '\\'} {
				b := []byte(s)
				b[i] = c
				agree(t, b)
			}
		}
	}
}

func agree(t *testing.T, src []byte) {
	t.Helper()
	want, wantSize, wantErr := oracle(src)
	s := jsonc.NewScanner(src)
	got, _ := s.Any()
	err := s.Finish()
	if depth(src) > jsonc.MaxDepth {
		// Parse stops at the limit; hujson, without one, read on and may
		// report a later error instead.
		var se *jsonc.SyntaxError
		if !errors.As(err, &se) || wantErr == nil {
			t.Errorf("reading %q = %v, want a syntax error (hujson and encoding/json: %v)", src, err, wantErr)
		}
		return
	}
	if wantErr != nil || err != nil {
		var se, wantSE *jsonc.SyntaxError
		switch {
		case errors.As(wantErr, &wantSE):
			if diff := cmp.Diff(wantSE, err); diff != "" {
				t.Errorf("reading %q error differs from hujson's (-want +got):\n%s", src, diff)
			}
		case wantErr != nil:
			// encoding/json's own limits (nesting): a syntax error too.
			if !errors.As(err, &se) {
				t.Errorf("reading %q = %v, want a syntax error like %v", src, err, wantErr)
			}
		default:
			t.Errorf("reading %q = %v, want no error", src, err)
		}
		return
	}
	if !reflect.DeepEqual(want, got) { // cmp.Diff is slow on deep nesting: only for the message
		t.Errorf("reading %q.Any() differs (-want +got):\n%s", src, cmp.Diff(want, got))
	}
	if s.Size() != wantSize {
		t.Errorf("Size() after reading %q = %d, want %d", src, s.Size(), wantSize)
	}
	b, err := jsonc.Standardize(src)
	if err != nil {
		t.Fatalf("Standardize(%q) = %v", src, err)
	}
	var std any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&std); err != nil || !reflect.DeepEqual(want, std) || len(b) != len(src) {
		t.Errorf("Standardize(%q) = %q, which decodes to %v, %v; want %v", src, b, std, err, want)
	}
}

// depth returns how deeply the arrays and objects of src nest, counting
// brackets outside strings (and, roughly, comments).
func depth(src []byte) int {
	d, most := 0, 0
	inString := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			d++
			most = max(most, d)
		case c == ']' || c == '}':
			d--
		}
	}
	return most
}

// TestErrorAtEnd: an error at the end of the input is placed just after
// its last byte, on its last line: a one-line input's error is on line 1.
func TestErrorAtEnd(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want jsonc.SyntaxError
	}{
		{`{"properties":{`, jsonc.SyntaxError{Line: 1, Column: 16, Msg: "parsing value: unexpected EOF"}},
		{"{\n  \"a\": [1", jsonc.SyntaxError{Line: 2, Column: 10, Msg: "parsing array after value: unexpected EOF"}},
		{"{\n", jsonc.SyntaxError{Line: 2, Column: 1, Msg: "parsing value: unexpected EOF"}},
	} {
		s := jsonc.NewScanner([]byte(tc.src))
		s.Any()
		if diff := cmp.Diff(&tc.want, s.Finish()); diff != "" {
			t.Errorf("reading %q: error (-want +got):\n%s", tc.src, diff)
		}
	}
}
