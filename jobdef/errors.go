package jobdef

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jobclock/scheduler/internal/codec"
	"github.com/jobclock/scheduler/internal/jsonc"
	"github.com/jobclock/scheduler/internal/jsonpath"
	"github.com/jobclock/scheduler/internal/suggest"
)

// ErrInvalid is the error that every validation failure matches with
// errors.Is: each [*ValidationError] and [*SyntaxError] reports itself as
// ErrInvalid.
var ErrInvalid = errors.New("scheduler: invalid job definition")

// ValidationError is one problem with a job definition.
type ValidationError struct {
	// Path is the JSON path of the offending field, such as
	// "recurrence.schedule.hours[1]" or "action.request.headers.Accept";
	// "job" for a problem with the definition as a whole.
	Path string
	// Value is the offending value as JSON text (abbreviated when long,
	// left out for secrets); empty when the field is missing or the
	// value does not matter.
	Value string
	// Reason says what is wrong, such as "is not an hour (0-23)".
	Reason string
	// Refs are the paths of the other fields that Reason names, such as
	// the entry that a repeated one repeats ("repeats
	// recurrence.schedule.weekDays[1]") or where a member belongs; each
	// starts where Path starts and stands in Reason as it is written
	// here. [ValidationError.Under] moves them with Path. Nil when Reason
	// names no other field.
	Refs []string
}

// Under puts the problem under at, the path of the object its paths start
// in ("properties" for a definition in the ARM envelope, "jobs.a" for a
// job of a collection file): Path and each of Refs, where Reason names
// it too, get at in front ("properties.recurrence.schedule.weekDays[2]:
// "sunday" repeats properties.recurrence.schedule.weekDays[1]"). An empty
// Path becomes at. Under does nothing when at is empty.
func (e *ValidationError) Under(at string) {
	if at == "" {
		return
	}
	e.Path = jsonpath.Join(at, e.Path)
	if e.Refs == nil {
		return
	}
	refs := make([]string, len(e.Refs)) // e.Refs may be another problem's too
	for i, ref := range e.Refs {
		refs[i] = jsonpath.Join(at, ref)
		e.Reason = jsonpath.Replace(e.Reason, ref, refs[i])
	}
	e.Refs = refs
}

// Error returns "PATH: VALUE REASON", or "PATH: REASON" when Value is
// empty.
func (e *ValidationError) Error() string {
	if e.Value == "" {
		return e.Path + ": " + e.Reason
	}
	return e.Path + ": " + e.Value + " " + e.Reason
}

// Is reports whether target is ErrInvalid.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// SyntaxError reports input that is not JSON (with comments and trailing
// commas allowed). Line and Column count from 1; Column counts bytes.
type SyntaxError struct {
	Line   int
	Column int
	Msg    string
}

// Error returns "line L, column C: MSG".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Is reports whether target is ErrInvalid.
func (e *SyntaxError) Is(target error) bool { return target == ErrInvalid }

// ValidationErrors returns the [*ValidationError] values in err, in order,
// looking through errors joined with errors.Join and wrapped with %w. It
// returns nil when there are none (also for a nil err or a [*SyntaxError]).
func ValidationErrors(err error) []*ValidationError {
	var out []*ValidationError
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case *ValidationError:
			out = append(out, e)
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return out
}

// rootPath is the path of problems with the definition as a whole.
const rootPath = "job"

// problems collects the problems of a definition: those its reading
// finds, then those of the rules, which it keeps only where reading found
// nothing.
type problems struct {
	errs []*ValidationError
	// rank orders the problems at one path: a member's name (0), its
	// value (1), a rule (2).
	rank []int
	// bad holds the paths at which reading found a problem; rule
	// problems at or under them are not reported again.
	bad []string
}

// problemsOf returns the problems read found, but for those dropped.
func problemsOf(read []codec.Problem) *problems {
	p := new(problems)
	for _, r := range read {
		if r.Dropped {
			continue
		}
		rank := 1
		if r.Name {
			rank = 0
		}
		p.errs = append(p.errs, &ValidationError{Path: r.Path, Value: r.Value, Reason: r.Reason, Refs: r.Refs})
		p.rank = append(p.rank, rank)
		p.bad = append(p.bad, r.Path)
	}
	return p
}

// addRule records e, a problem of the rules, unless decoding found one at
// or above e's path (a member dropped for its type must not also be
// "required"), or e says a frequency is missing where decoding dropped the
// cron spec that stands for it.
func (p *problems) addRule(e *ValidationError) {
	if base, ok := strings.CutSuffix(e.Path, "recurrence.frequency"); ok && e.Value == "" && slices.Contains(p.bad, base+"recurrence.cron") {
		return
	}
	for _, b := range p.bad {
		if e.Path == b || strings.HasPrefix(e.Path, b) && (e.Path[len(b)] == '.' || e.Path[len(b)] == '[') {
			return
		}
	}
	e.Reason = withSuggestion(e.Value, e.Reason)
	p.errs = append(p.errs, e)
	p.rank = append(p.rank, 2)
}

// withSuggestion returns reason, a rule's problem with the string value
// (JSON text), with "did you mean" in place of the list of names that ends
// it when one of them is close to value (see package suggest): `"Htp" is
// not an action type (Http, Https or StorageQueue)` becomes `... is not an
// action type, did you mean "Http"?`. The rules of every enumeration
// (action, retry and authentication types, frequencies, weekdays, states,
// HTTP methods) end their refusal so, with the names valid at that place;
// a reason of another form is returned as it is.
func withSuggestion(value, reason string) string {
	var s string
	if !strings.HasPrefix(value, `"`) || json.Unmarshal([]byte(value), &s) != nil || !strings.HasSuffix(reason, ")") {
		return reason
	}
	head, list, ok := strings.Cut(reason, " (")
	if !ok || !strings.HasPrefix(head, "is not ") {
		return reason
	}
	names := strings.FieldsFunc(strings.ReplaceAll(strings.TrimSuffix(list, ")"), " or ", ", "), func(r rune) bool { return r == ',' || r == ' ' })
	if len(names) < 2 || strings.Count(list, " ") != len(names) {
		return reason // not a plain list of names
	}
	if dym := suggest.DidYouMean(s, names); dym != "" {
		return head + dym
	}
	return reason
}

// err returns the problems, ordered by path, joined; nil when there are
// none.
func (p *problems) err() error {
	type entry struct {
		e    *ValidationError
		rank int // at one path: names, values, rules
	}
	all := make([]entry, len(p.errs))
	for i, e := range p.errs {
		all[i] = entry{e, p.rank[i]}
	}
	if len(all) == 0 {
		return nil
	}
	slices.SortStableFunc(all, func(a, b entry) int {
		if c := strings.Compare(pathOrder(a.e.Path), pathOrder(b.e.Path)); c != 0 {
			return c
		}
		return a.rank - b.rank
	})
	errs := make([]error, len(all))
	for i, x := range all {
		errs[i] = x.e
	}
	return errors.Join(errs...)
}

// inOrder returns the problems as err does, but in the order found rather
// than by path: those of reading, then those of the rules.
func (p *problems) inOrder() error {
	errs := make([]error, len(p.errs))
	for i, e := range p.errs {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// pathOrder returns a key that sorts paths by member name and by array
// index in numeric order, with problems of the whole job first.
func pathOrder(path string) string {
	if path == rootPath {
		return ""
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(path, '[')
		if i < 0 {
			b.WriteString(path)
			return b.String()
		}
		b.WriteString(path[:i+1])
		path = path[i+1:]
		j := 0
		for j < len(path) && path[j] >= '0' && path[j] <= '9' {
			j++
		}
		if j > 0 {
			fmt.Fprintf(&b, "%020s", path[:j])
			path = path[j:]
		}
	}
}

// thousands formats n with comma separators ("16,000").
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// valueText and pathKey name a value and a member in a problem, as the
// payload checks of package action do.
func valueText(v any) string { return jsonpath.Text(v) }

func pathKey(path, k string) string { return jsonpath.Key(path, k) }

// asWritten sets the value of each problem of the rules that shows a
// string to the string data holds at the problem's path, so that an error
// quotes what the user wrote ("P19M", "sunday") rather than the value it
// was read as ("P570D", "Sunday"). Problems at a path data has no string
// at keep their value. data is read again only when there is such a
// problem.
func (p *problems) asWritten(data []byte) {
	var doc any
	read := false
	for i, e := range p.errs {
		if p.rank[i] != 2 || !strings.HasPrefix(e.Value, `"`) {
			continue
		}
		if !read {
			doc, _ = jsonc.Any(data)
			read = true
		}
		if s, ok := stringAt(doc, e.Path); ok {
			e.Value = valueText(s)
		}
	}
}

// stringAt returns the string at path in doc, a document read by
// jsonc.Any: members are matched without regard to case and by the other
// spellings of definitionRules.Aliases, as the decoder matches them.
func stringAt(doc any, path string) (string, bool) {
	v := doc
	for path != "" {
		var ok bool
		switch {
		case path[0] == '.':
			path = path[1:]
			continue
		case strings.HasPrefix(path, `["`):
			q, err := strconv.QuotedPrefix(path[1:])
			if err != nil || !strings.HasPrefix(path[1+len(q):], "]") {
				return "", false
			}
			k, _ := strconv.Unquote(q)
			path = path[1+len(q)+1:]
			v, ok = memberOf(v, k)
		case path[0] == '[':
			j := strings.IndexByte(path, ']')
			if j < 0 {
				return "", false
			}
			n, err := strconv.Atoi(path[1:j])
			a, isArray := v.([]any)
			if err != nil || !isArray || n < 0 || n >= len(a) {
				return "", false
			}
			v, ok, path = a[n], true, path[j+1:]
		default:
			j := strings.IndexAny(path, ".[")
			if j < 0 {
				j = len(path)
			}
			v, ok = memberOf(v, path[:j])
			path = path[j:]
		}
		if !ok {
			return "", false
		}
	}
	s, ok := v.(string)
	return s, ok
}

// memberOf returns the member of object v named k in any case, or by
// another spelling that definitionRules.Aliases reads as k.
func memberOf(v any, k string) (any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	for name, x := range m {
		if strings.EqualFold(name, k) {
			return x, true
		}
	}
	for name, x := range m {
		for _, aliases := range definitionRules.Aliases {
			if canon, ok := aliases[strings.ToLower(name)]; ok && strings.EqualFold(canon, k) {
				return x, true
			}
		}
	}
	return nil, false
}
