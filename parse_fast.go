package scheduler

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jobclock/scheduler/retry"
)

// The fast path of ParseJob.
//
// ParseJob's general path standardises the input with hujson, decodes it
// into a generic tree, walks the tree against the Job type collecting every
// problem with its path, encodes the result and decodes it into a Job. That
// is thorough but slow. Most definitions are valid, and for them the fast
// path below reads the input once, straight into a Job, checking the same
// grammar and the same per-member rules on the way. It gives up, and lets
// the general path run from the start, at anything it is not certain about:
// a syntax error, a member that is unknown or given twice, a value of the
// wrong type, a non-ASCII member name, a value out of range, and any rule
// violation found afterwards. So every error a user sees still comes from
// the general path, with its paths and wording, and the fast path only has
// to agree with the general one on the jobs both accept
// (TestParseFastAgrees checks that it does).

// fastKind is how the fast path decodes a Go type.
type fastKind uint8

const (
	fastUnsupported fastKind = iota // the general path decides
	fastString
	fastStringUnmarshaler // a string type with its own UnmarshalJSON (an enum)
	fastInt
	fastBool
	fastTime
	fastDuration
	fastRaw
	fastSlice
	fastMap
	fastStruct
)

// fastType is the decoding plan of one Go type; pointers are followed.
type fastType struct {
	kind fastKind
	typ  reflect.Type // the type after following pointers
	ptrs int          // number of pointers followed to reach typ
	bits int          // fastInt: the integer's size
	elem *fastType    // fastSlice, fastMap: the element
	// fastStringUnmarshaler: what UnmarshalJSON made of a string
	// literal (such as "monday" -> "Monday"), for at most maxEnumMemo
	// literals. The types are enums whose UnmarshalJSON is a pure
	// function of the literal, and encoding/json's unquoting is what
	// costs.
	enum     sync.Map
	enumSize atomic.Int32
	// fastStruct: the members, a lower-case name (or alias) to a member,
	// the names of members as encoding/json writes them (except those
	// that are dropped) to a member, and the lower-case names that are
	// accepted and dropped.
	fields  []fastField
	byName  map[string]int
	byExact map[string]int
	ignored map[string]bool
}

type fastField struct {
	index    []int
	t        *fastType
	positive bool // an integer that must be at least 1
}

var (
	fastPlans   = map[reflect.Type]*fastType{}
	fastPlansMu sync.Mutex
	jobPlan     = sync.OnceValue(func() *fastType { return planOf(jobType) })

	stringMapType       = reflect.TypeFor[map[string]string]()
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// planOf returns the decoding plan of t, as walk would treat it.
func planOf(t reflect.Type) *fastType {
	fastPlansMu.Lock()
	defer fastPlansMu.Unlock()
	return planLocked(t)
}

func planLocked(t reflect.Type) *fastType {
	if p, ok := fastPlans[t]; ok {
		return p
	}
	p := &fastType{}
	fastPlans[t] = p // before the members: types may refer to themselves
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
		p.ptrs++
	}
	p.typ = t
	custom := reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)
	switch {
	case t == timeType:
		p.kind = fastTime
	case t == durationType:
		p.kind = fastDuration
	case t == rawType:
		p.kind = fastRaw
	case t.Kind() == reflect.String && custom && reflect.PointerTo(t).Implements(unmarshalerType):
		p.kind = fastStringUnmarshaler
	case custom:
		// A type that decodes itself otherwise: leave it to the
		// general path.
	case t.Kind() == reflect.String:
		p.kind = fastString
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64, t.Kind() == reflect.Int32:
		p.kind, p.bits = fastInt, t.Bits()
	case t.Kind() == reflect.Bool:
		p.kind = fastBool
	case t.Kind() == reflect.Slice:
		p.kind, p.elem = fastSlice, planLocked(t.Elem())
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && !reflect.PointerTo(t.Key()).Implements(textUnmarshalerType):
		p.kind, p.elem = fastMap, planLocked(t.Elem())
	case t.Kind() == reflect.Struct:
		p.kind = fastStruct
		p.byName = map[string]int{}
		p.ignored = ignoredFields[t]
		p.byExact = map[string]int{}
		for _, f := range fieldsOf(t) {
			if !p.ignored[lowerASCII(f.name)] {
				p.byExact[f.name] = len(p.fields)
			}
			p.byName[lowerASCII(f.name)] = len(p.fields)
			p.fields = append(p.fields, fastField{index: f.index, t: planLocked(f.typ), positive: positiveFields[t][f.name]})
		}
		for alias, name := range fieldAliases[t] {
			if i, ok := p.byName[lowerASCII(name)]; ok {
				p.byName[alias] = i
			}
		}
	}
	return p
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// fastParser reads JSON with comments and trailing commas (the grammar
// hujson accepts) straight into Go values. Its methods return false when
// the general path must decide.
type fastParser struct {
	b     []byte
	i     int
	size  int // bytes of the input without comments, whitespace and trailing commas
	depth int
	key   [64]byte // a member name in lower case
}

// maxEnumMemo bounds the literals remembered for each enum type.
const maxEnumMemo = 256

// maxFastDepth bounds nesting on the fast path; deeper input goes the
// general way, which applies encoding/json's own limit.
const maxFastDepth = 200

// parseFast is ParseJob for the common case: it returns the job and true,
// or false when the general path must run (for any problem at all).
func parseFast(data []byte, opts *ParseOptions) (*Job, bool) {
	p := &fastParser{b: data}
	job := new(Job)
	if !p.space() || !p.root(reflect.ValueOf(job).Elem()) || !p.space() || p.i != len(p.b) || p.size > MaxJobSize {
		return nil, false
	}
	job.Status = nil
	canonicalize(job, opts)
	if len(validateJob(job, opts)) > 0 {
		return nil, false
	}
	return job, true
}

// space skips whitespace and comments.
func (p *fastParser) space() bool {
	b, i := p.b, p.i
	for i < len(b) {
		switch c := b[i]; c {
		case ' ':
			// Indentation comes in runs of spaces: eight at a time, and
			// the run's end found in the last eight at once.
			i++
			for i+8 <= len(b) {
				if x := binary.LittleEndian.Uint64(b[i:]) ^ spaces8; x != 0 {
					i += bits.TrailingZeros64(x) / 8
					break
				}
				i += 8
			}
		case '\t', '\r', '\n':
			i++
		case '/':
			if i+1 >= len(b) {
				return false
			}
			var end int
			switch b[i+1] {
			case '/':
				end = bytes.IndexByte(b[i+2:], '\n')
				if end < 0 {
					end = len(b)
				} else {
					end += i + 3
				}
			case '*':
				end = bytes.Index(b[i+2:], commentEnd)
				if end < 0 {
					return false
				}
				end += i + 4
			default:
				return false
			}
			if !isASCII(b[i:end]) {
				return false // the general path checks UTF-8 and line separators
			}
			i = end
		default:
			p.i = i
			return true
		}
	}
	p.i = i
	return true
}

var commentEnd = []byte("*/")

const (
	spaces8 = 0x2020202020202020 // eight spaces
	ones8   = 0x0101010101010101
	highs8  = 0x8080808080808080
)

// stringEnds8 marks the bytes of w (little-endian) that end a string or
// need a closer look: quotes, backslashes and control characters. It sets
// the high bit of the first such byte, and perhaps of later bytes; it is 0
// when there is none.
func stringEnds8(w uint64) uint64 {
	zero := func(v uint64) uint64 { return (v - ones8) &^ v & highs8 } // a zero byte
	return zero(w^(ones8*'"')) | zero(w^(ones8*'\\')) | (w-ones8*0x20)&^w&highs8
}

// isASCII reports whether b holds only ASCII bytes, eight at a time.
func isASCII(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b)&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// root reads the top-level object into the Job v, unwrapping the ARM
// envelope {"id", "name", "type", "properties"}.
func (p *fastParser) root(v reflect.Value) bool {
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return false
	}
	// A job has no member "properties", and an envelope has a member
	// "type" that a job does not have: reading an envelope as a job
	// fails, and so does reading a job as an envelope.
	start := p.i
	if p.value(v, jobPlan()) {
		return true
	}
	p.i, p.size, p.depth = start, 0, 0
	v.SetZero()
	found := false
	return p.object(func(name []byte) bool {
		switch string(p.lower(name)) {
		case "properties":
			if found || p.i >= len(p.b) || p.b[p.i] != '{' {
				return false
			}
			found = true
			return p.value(v, jobPlan())
		case "id", "name", "type":
			if p.i < len(p.b) && p.b[p.i] == 'n' {
				return p.literal("null")
			}
			_, ok := p.str()
			return ok
		}
		return false
	}) && found
}

// object reads an object, calling member for each with the member's name
// as written and p at its value; member reads the value. Names with escapes
// or non-ASCII letters, or longer than p.key, are refused.
func (p *fastParser) object(member func(name []byte) bool) bool {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxFastDepth {
		return false
	}
	p.i++ // '{'
	p.size += 2
	if !p.space() {
		return false
	}
	n := 0
	for {
		if p.i >= len(p.b) {
			return false
		}
		if p.b[p.i] == '}' {
			p.i++
			if n > 0 {
				p.size += n - 1 // commas
			}
			return true
		}
		if p.b[p.i] != '"' {
			return false
		}
		start := p.i
		raw, esc, ok := p.scanString()
		if !ok || esc || len(raw) > len(p.key) || !isASCII(raw) {
			return false
		}
		p.size += p.i - start + 1 // name and colon
		// Each call of space is skipped where the next byte is the one
		// expected (a colon, the value, a comma): the usual case.
		if !p.at(':') && (!p.space() || !p.at(':')) {
			return false
		}
		p.i++
		if !p.atValue() && !p.space() || !member(raw) || !p.at(',') && !p.space() {
			return false
		}
		n++
		if p.i >= len(p.b) {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			if !p.at('"') && !p.space() {
				return false
			}
		case '}':
		default:
			return false
		}
	}
}

// at reports whether the next byte is c.
func (p *fastParser) at(c byte) bool { return p.i < len(p.b) && p.b[p.i] == c }

// atValue reports whether the next byte starts a value rather than
// whitespace or a comment (or is not there).
func (p *fastParser) atValue() bool { return p.i < len(p.b) && p.b[p.i] > ' ' && p.b[p.i] != '/' }

// lower returns the ASCII name in lower case, in p.key.
func (p *fastParser) lower(name []byte) []byte {
	key := p.key[:len(name)]
	for j, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		key[j] = c
	}
	return key
}

// array reads an array, calling elem for each element with p at it.
func (p *fastParser) array(elem func() bool) bool {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxFastDepth {
		return false
	}
	p.i++ // '['
	p.size += 2
	if !p.space() {
		return false
	}
	n := 0
	for {
		if p.i >= len(p.b) {
			return false
		}
		if p.b[p.i] == ']' {
			p.i++
			if n > 0 {
				p.size += n - 1
			}
			return true
		}
		if !elem() || !p.space() {
			return false
		}
		n++
		if p.i >= len(p.b) {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			if !p.space() {
				return false
			}
		case ']':
		default:
			return false
		}
	}
}

// scanString reads the string at p.i and returns its bytes between the
// quotes, and whether it holds escapes. It refuses control characters and
// invalid escapes, as JSON does.
func (p *fastParser) scanString() (raw []byte, esc, ok bool) {
	start := p.i + 1
	for j := start; ; j++ {
		// Eight bytes at a time up to the first one that needs a look.
		if j+8 <= len(p.b) {
			m := stringEnds8(binary.LittleEndian.Uint64(p.b[j:]))
			if m == 0 {
				j += 7
				continue
			}
			j += bits.TrailingZeros64(m) / 8
		} else if j >= len(p.b) {
			return nil, false, false
		}
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			p.size += j + 1 - (start - 1)
			return p.b[start:j], esc, true
		case c < 0x20:
			return nil, false, false
		case c == '\\':
			esc = true
			j++
			if j >= len(p.b) {
				return nil, false, false
			}
			switch p.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(p.b) {
					return nil, false, false
				}
				for _, h := range p.b[j+1 : j+5] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return nil, false, false
					}
				}
				j += 4
			default:
				return nil, false, false
			}
		}
	}
}

// str reads a string value.
func (p *fastParser) str() (string, bool) {
	raw, s, esc, ok := p.strRaw()
	if !esc {
		s = string(raw)
	}
	return s, ok
}

// strRaw reads a string value: its bytes between the quotes, or when it
// has escapes (esc), its decoded text s.
func (p *fastParser) strRaw() (raw []byte, s string, esc, ok bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, "", false, false
	}
	start := p.i
	raw, esc, ok = p.scanString()
	if !ok {
		return nil, "", false, false
	}
	if esc {
		var u string // its own variable: a result whose address is taken lives on the heap
		if json.Unmarshal(p.b[start:p.i], &u) != nil {
			return nil, "", false, false
		}
		return nil, u, true, true
	}
	if !isASCII(raw) && !utf8.Valid(raw) {
		return nil, "", false, false // encoding/json would replace the bad bytes
	}
	return raw, "", false, true
}

// number reads a JSON number and returns its text.
func (p *fastParser) number() (string, bool) {
	b, ok := p.numberBytes()
	return string(b), ok
}

// numberBytes reads a JSON number and returns its text in the input.
func (p *fastParser) numberBytes() ([]byte, bool) {
	b, j := p.b, p.i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && '1' <= b[j] && b[j] <= '9':
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
	default:
		return nil, false
	}
	if j < len(b) && b[j] == '.' {
		j++
		d := j
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		if j == d {
			return nil, false
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		d := j
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		if j == d {
			return nil, false
		}
	}
	if j < len(b) && (b[j] == '+' || b[j] == '.' || 'a' <= b[j] && b[j] <= 'z' || 'A' <= b[j] && b[j] <= 'Z' || '0' <= b[j] && b[j] <= '9') {
		return nil, false // hujson reads such a run as one literal
	}
	n := b[p.i:j]
	p.size += j - p.i
	p.i = j
	return n, true
}

// literal reads true, false or null.
func (p *fastParser) literal(word string) bool {
	end := p.i + len(word)
	if end > len(p.b) || string(p.b[p.i:end]) != word {
		return false
	}
	if end < len(p.b) {
		if c := p.b[end]; c == '+' || c == '-' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			return false
		}
	}
	p.i = end
	p.size += len(word)
	return true
}

// skip reads any value and drops it.
func (p *fastParser) skip() bool {
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(func([]byte) bool { return p.skip() })
	case c == '[':
		return p.array(p.skip)
	case c == '"':
		_, _, _, ok := p.strRaw()
		return ok
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	}
	_, ok := p.numberBytes()
	return ok
}

// generic reads any value as encoding/json decodes it into an any with
// UseNumber.
func (p *fastParser) generic() (any, bool) {
	if p.i >= len(p.b) {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		m := map[string]any{}
		ok := p.object(func(name []byte) bool {
			v, ok := p.generic()
			m[string(name)] = v
			return ok
		})
		return m, ok
	case c == '[':
		a := []any{}
		ok := p.array(func() bool {
			v, ok := p.generic()
			a = append(a, v)
			return ok
		})
		return a, ok
	case c == '"':
		return p.str()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	n, ok := p.number()
	return json.Number(n), ok
}

// value reads the value at p.i into v, which has type t.typ behind t.ptrs
// pointers. null leaves v as it is.
func (p *fastParser) value(v reflect.Value, t *fastType) bool {
	if p.i >= len(p.b) {
		return false
	}
	if p.b[p.i] == 'n' {
		return p.literal("null")
	}
	for range t.ptrs {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	switch t.kind {
	case fastString:
		s, ok := p.str()
		v.SetString(s)
		return ok
	case fastStringUnmarshaler:
		start := p.i
		if p.b[p.i] != '"' {
			return false
		}
		if _, _, ok := p.scanString(); !ok {
			return false
		}
		raw := p.b[start:p.i] // UnmarshalJSON decodes escapes and checks UTF-8
		if c, ok := t.enum.Load(string(raw)); ok {
			v.SetString(c.(string))
			return true
		}
		if v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw) != nil {
			return false
		}
		if t.enumSize.Add(1) <= maxEnumMemo {
			t.enum.Store(string(raw), v.String())
		}
		return true
	case fastInt:
		b, ok := p.numberBytes()
		if !ok {
			return false
		}
		n, err := strconv.ParseInt(string(b), 10, t.bits)
		if err != nil {
			return false
		}
		v.SetInt(n)
		return true
	case fastBool:
		switch {
		case p.i < len(p.b) && p.b[p.i] == 't':
			v.SetBool(true)
			return p.literal("true")
		case p.i < len(p.b) && p.b[p.i] == 'f':
			v.SetBool(false)
			return p.literal("false")
		}
		return false
	case fastTime:
		s, ok := p.str()
		if !ok {
			return false
		}
		tm, err := ParseTime(s)
		if err != nil {
			return false
		}
		if tm.Location() != time.UTC {
			// As the general path does: through RFC 3339 text and back.
			if tm, err = time.Parse(time.RFC3339Nano, tm.Format(time.RFC3339Nano)); err != nil {
				return false
			}
		}
		if v.CanAddr() {
			*v.Addr().Interface().(*time.Time) = tm // without boxing tm
		} else {
			v.Set(reflect.ValueOf(tm))
		}
		return true
	case fastDuration:
		s, ok := p.str()
		if !ok {
			return false
		}
		d, err := retry.ParseDuration(s)
		if err != nil || d <= 0 {
			return false
		}
		v.SetInt(int64(d))
		return true
	case fastRaw:
		g, ok := p.generic()
		if !ok {
			return false
		}
		b, err := json.Marshal(g)
		if err != nil {
			return false
		}
		v.SetBytes(b)
		return true
	case fastSlice:
		if p.b[p.i] != '[' {
			return false
		}
		v.SetLen(0)
		ok := p.array(func() bool {
			n := v.Len()
			if n == v.Cap() {
				v.Grow(max(n, 4)) // lists are short: room for four at first
			}
			v.SetLen(n + 1)
			return p.value(v.Index(n), t.elem)
		})
		if ok && v.IsNil() {
			v.Set(reflect.MakeSlice(t.typ, 0, 0)) // [] is an empty slice, not nil
		}
		return ok
	case fastMap:
		if p.b[p.i] != '{' {
			return false
		}
		if t.typ == stringMapType {
			// Headers: without reflection, which costs a value and a
			// boxed key per member.
			m := map[string]string{}
			ok := p.object(func(name []byte) bool {
				if p.i < len(p.b) && p.b[p.i] == 'n' {
					return p.literal("null") // dropped, as the general path drops it
				}
				s, ok := p.str()
				m[string(name)] = s
				return ok
			})
			v.Set(reflect.ValueOf(m))
			return ok
		}
		m := reflect.MakeMap(t.typ)
		ok := p.object(func(name []byte) bool {
			if p.i < len(p.b) && p.b[p.i] == 'n' {
				return p.literal("null") // dropped, as the general path drops it
			}
			e := reflect.New(t.typ.Elem()).Elem()
			if !p.value(e, t.elem) {
				return false
			}
			m.SetMapIndex(reflect.ValueOf(string(name)).Convert(t.typ.Key()), e)
			return true
		})
		v.Set(m)
		return ok
	case fastStruct:
		if p.b[p.i] != '{' {
			return false
		}
		var seen uint64
		if len(t.fields) > 64 {
			return false
		}
		return p.object(func(name []byte) bool {
			// Most names are written as the member is named: those need
			// no lower-casing.
			i, ok := t.byExact[string(name)]
			if !ok {
				key := p.lower(name)
				if t.ignored[string(key)] {
					return p.skip()
				}
				i, ok = t.byName[string(key)]
			}
			if !ok || seen&(1<<i) != 0 {
				return false // unknown, or a duplicate
			}
			seen |= 1 << i
			f := &t.fields[i]
			if f.t.kind == fastUnsupported {
				return false
			}
			fv := v.FieldByIndex(f.index)
			if !p.value(fv, f.t) {
				return false
			}
			if f.positive {
				if n := reflect.Indirect(fv); n.CanInt() && n.Int() == 0 {
					return false // "must be at least 1"
				}
			}
			return true
		})
	}
	return false
}
