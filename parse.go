package scheduler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tailscale/hujson"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/jsonpath"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

// Limits on a job definition, as the Azure Scheduler documented them.
const (
	// MaxJobSize is the largest job definition in bytes, measured
	// without comments and insignificant whitespace.
	MaxJobSize = 16000
	// MaxURILength is the longest HTTP request URI, in characters.
	MaxURILength = 2048
	// MaxHeaders is the largest number of HTTP request headers.
	MaxHeaders = 50
	// MaxBodyLength is the longest HTTP request body, in characters.
	MaxBodyLength = 8192
	// MaxStartAhead is how far in the future a startTime may lie: 18
	// months (548 days). It is checked only when ParseOptions.Now is set.
	MaxStartAhead = 548 * 24 * time.Hour
	// MaxInputSize is the largest input ParseJob reads at all, comments
	// included; larger input is rejected before parsing.
	MaxInputSize = 1 << 20
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

// ParseOptions adjusts what ParseJob and Job.Validate accept. A nil
// *ParseOptions means the zero value.
type ParseOptions struct {
	// ActionTypes lists the action types a host has registered besides
	// the built-in ones. They are matched without regard to case and
	// written back in the spelling given here; their payload is the
	// action's "custom" member. Nil means only the built-in types.
	ActionTypes []action.Type
	// MinRetryInterval is the smallest retryInterval accepted. Zero
	// means retry.MinInterval (15 seconds); lower it for local tests.
	MinRetryInterval time.Duration
	// Now, when set, is the current time against which a startTime more
	// than MaxStartAhead ahead is rejected. Zero skips that check.
	Now time.Time
	// Created is the instant the job is created (or last replaced), from
	// which a job without startTime counts its recurrence's periods, as
	// [Job.Timing] does. The check that a schedule can ever run counts
	// from it too: every 3 months from a job created in March reaches
	// December, from one created in February it never does. Zero means
	// Now, and when Now is zero as well, 2001-01-01T00:00Z. A job with a
	// startTime counts from its startTime whatever Created says.
	Created time.Time
	// AllowInsecureAuthentication permits HTTP authentication on an
	// http (not https) URI, for tests against local servers. False
	// means authentication requires https.
	AllowInsecureAuthentication bool

	// executor, when set, looks up the executor of an action type: a
	// type without one is refused at its path, and an executor that is
	// an action.Validator checks its actions. A Scheduler sets it.
	executor func(action.Type) (action.Executor, bool)
	// hostTypes, when set, returns the host's action types as they are
	// now: ActionTypes may lack types registered since it was made, so a
	// type that is neither built in nor found in ActionTypes is looked
	// for again in what hostTypes returns. A Scheduler sets it.
	hostTypes func() []action.Type
}

// ParseJob parses and validates a job definition. It returns the job in
// canonical form, or a nil Job and an error listing every problem: joined
// [*ValidationError] values, or a single [*SyntaxError]. Both match
// [ErrInvalid]. opts may be nil. See the package documentation for the
// accepted syntax and the rules.
func ParseJob(data []byte, opts *ParseOptions) (*Job, error) {
	if opts == nil {
		opts = &ParseOptions{}
	}
	if len(data) > MaxInputSize {
		return nil, &ValidationError{Path: rootPath, Reason: fmt.Sprintf("is %d bytes, more than the %d bytes read at most", len(data), MaxInputSize)}
	}
	if job, ok := parseFast(data, opts); ok {
		return job, nil
	}
	return parseGeneral(data, opts)
}

// parseGeneral is ParseJob's general path: it reports every problem of
// any input. The fast path (parseFast) hands it every input that is not a
// valid job.
func parseGeneral(data []byte, opts *ParseOptions) (*Job, error) {
	if len(data) > 0 && data[len(data)-1] != '\n' {
		// A // comment on the last line needs a newline to end it.
		data = append(data[:len(data):len(data)], '\n')
	}
	ast, err := hujson.Parse(data)
	if err != nil {
		return nil, hujsonSyntaxError(err)
	}
	ast.Standardize()
	std := ast.Pack()
	var compact bytes.Buffer
	if err := json.Compact(&compact, std); err != nil {
		return nil, jsonSyntaxError(std, err)
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, jsonSyntaxError(std, err)
	}

	p := &parser{}
	if compact.Len() > MaxJobSize {
		p.add(rootPath, "", fmt.Sprintf("is %d bytes, more than the limit of %s", compact.Len(), thousands(MaxJobSize)))
	}
	root, ok := tree.(map[string]any)
	if !ok {
		p.add(rootPath, valueText(tree), "is not an object")
		return nil, p.err()
	}
	prefix := ""
	if props, ok := envelope(p, root); ok {
		root, prefix = props, "properties"
		if root == nil {
			return nil, p.err()
		}
	}
	norm, _ := p.walk(prefix, root, jobType)
	canon, err := json.Marshal(norm)
	if err != nil {
		p.add(rootPath, "", "cannot be encoded: "+err.Error())
		return nil, p.err()
	}
	job := new(Job)
	if err := json.Unmarshal(canon, job); err != nil {
		p.add(rootPath, "", "cannot be decoded: "+err.Error())
		return nil, p.err()
	}
	job.Status = nil
	canonicalize(job, opts)
	for _, e := range validateJob(job, opts) {
		if prefix != "" {
			e.Path = prefix + "." + e.Path
		}
		p.addChecked(e)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return job, nil
}

// rootPath is the path of problems with the definition as a whole.
const rootPath = "job"

// envelope recognises the ARM resource envelope {"id", "name", "type",
// "properties"}. It returns the properties object (nil when it is not an
// object) and true when root is an envelope.
func envelope(p *parser, root map[string]any) (map[string]any, bool) {
	var propsKey string
	for k := range root {
		if strings.EqualFold(k, "properties") {
			propsKey = k
		}
	}
	if propsKey == "" {
		return nil, false
	}
	keys := sortedKeys(root)
	for _, k := range keys {
		switch {
		case k == propsKey:
		case strings.EqualFold(k, "id"), strings.EqualFold(k, "name"), strings.EqualFold(k, "type"):
			if v := root[k]; v != nil {
				if _, ok := v.(string); !ok {
					p.add(strings.ToLower(k), valueText(v), "is not a string")
				}
			}
		case strings.EqualFold(k, "properties"):
			p.add(k, "", "is a duplicate of "+strconv.Quote(propsKey))
		default:
			p.add(pathKey("", k), "", "unknown field")
		}
	}
	props, ok := root[propsKey].(map[string]any)
	if !ok {
		p.add("properties", valueText(root[propsKey]), "is not an object")
		return nil, true
	}
	return props, true
}

// ParseTime parses an ISO 8601 date or date-time as job definitions write
// them: "2012-08-04T00:00Z" (seconds optional), "2012-08-04T00:00:00.123+02:00",
// offsets as "+02:00", "+0200" or "+02", and a bare date "2012-11-04"
// meaning midnight UTC. A date-time without an offset is UTC. The letters T
// and Z may be lower case.
func ParseTime(s string) (time.Time, error) {
	if t, ok := parseTimeUTC(s); ok {
		return t, nil
	}
	return parseTimeLayouts(s)
}

// parseTimeLayouts is ParseTime by way of time.Parse and its layouts.
func parseTimeLayouts(s string) (time.Time, error) {
	u := strings.ToUpper(s)
	// Each form matches one layout: try that one first, and the others
	// only when it fails, as a failed time.Parse costs an error value.
	if layout := timeLayoutOf(u); layout != "" {
		if t, err := time.Parse(layout, u); err == nil {
			return t, nil
		}
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, u); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an ISO 8601 time such as \"2012-08-04T00:00Z\" or \"2012-11-04\"", s)
}

// parseTimeUTC reads the forms most definitions use, "2012-08-04",
// "2012-08-04T00:00Z" and "2012-08-04T00:00:00Z" (T and Z in either case,
// Z optional after a time), as time.Parse reads them with the matching
// layout, without its general machinery. It returns false for anything
// else, including every value time.Parse would refuse.
func parseTimeUTC(s string) (time.Time, bool) {
	var hour, minute, second int
	switch {
	case len(s) == len("2006-01-02"):
	case len(s) >= len("2006-01-02T15:04") && (s[10] == 'T' || s[10] == 't'):
		rest := s[16:]
		if rest != "" && (rest[len(rest)-1] == 'Z' || rest[len(rest)-1] == 'z') {
			rest = rest[:len(rest)-1]
		}
		switch {
		case rest == "":
		case len(rest) == len(":05") && rest[0] == ':':
			if second = twoDigits(rest[1:]); second < 0 || second > 59 {
				return time.Time{}, false
			}
		default:
			return time.Time{}, false
		}
		hour, minute = twoDigits(s[11:13]), twoDigits(s[14:16])
		if s[13] != ':' || hour < 0 || hour > 23 || minute < 0 || minute > 59 {
			return time.Time{}, false
		}
	default:
		return time.Time{}, false
	}
	century, year := twoDigits(s[0:2]), twoDigits(s[2:4])
	month, day := twoDigits(s[5:7]), twoDigits(s[8:10])
	if century < 0 || year < 0 || s[4] != '-' || s[7] != '-' || month < 1 || month > 12 {
		return time.Time{}, false
	}
	year += century * 100
	if day < 1 || day > daysIn(time.Month(month), year) {
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, second, 0, time.UTC), true
}

// twoDigits returns the number two ASCII digits spell, or -1.
func twoDigits(s string) int {
	if s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9' {
		return -1
	}
	return int(s[0]-'0')*10 + int(s[1]-'0')
}

// daysIn returns the number of days in month m of year.
func daysIn(m time.Month, year int) int {
	if m == time.February && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		return 29
	}
	return int(monthDays[m-1])
}

var monthDays = [12]uint8{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// timeLayoutOf returns the layout of timeLayouts that u has the shape of,
// or "" when it has none of their shapes.
func timeLayoutOf(u string) string {
	if len(u) == len("2006-01-02") {
		return timeLayouts[8]
	}
	if len(u) < len("2006-01-02T15:04") || u[10] != 'T' {
		return ""
	}
	rest, seconds := u[16:], false
	if rest != "" && rest[0] == ':' {
		// Seconds, and a fraction that the layouts with seconds accept.
		seconds = true
		i := 1
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.' || rest[i] == ',') {
			i++
		}
		rest = rest[i:]
	}
	var zone int // index into the layouts with seconds
	switch {
	case rest == "":
		zone = 6
	case rest == "Z" || len(rest) == len("+07:00"):
		zone = 0
	case len(rest) == len("+0700"):
		zone = 2
	case len(rest) == len("+07"):
		zone = 4
	default:
		return ""
	}
	if !seconds {
		zone++
	}
	return timeLayouts[zone]
}

var timeLayouts = []string{
	"2006-01-02T15:04:05Z07:00", // fractional seconds are accepted after the seconds
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04Z0700",
	"2006-01-02T15:04:05Z07",
	"2006-01-02T15:04Z07",
	"2006-01-02T15:04:05", // no offset: time.Parse gives UTC
	"2006-01-02T15:04",
	"2006-01-02",
}

// parser collects problems while it walks the decoded JSON tree.
type parser struct {
	errs []error
	// bad holds the paths at which decoding found a problem; rule
	// checks do not report again at or under them.
	bad []string
}

func (p *parser) add(path, value, reason string) {
	p.errs = append(p.errs, &ValidationError{Path: path, Value: value, Reason: reason})
	p.bad = append(p.bad, path)
}

// addChecked adds e unless decoding already reported a problem at or above
// e's path (a field dropped for a type error must not also be "required"),
// or e says a frequency is missing where decoding dropped the cron spec.
func (p *parser) addChecked(e *ValidationError) {
	if base, ok := strings.CutSuffix(e.Path, "recurrence.frequency"); ok && e.Value == "" && slices.Contains(p.bad, base+"recurrence.cron") {
		// A cron member dropped for its type stood in for the frequency.
		return
	}
	for _, b := range p.bad {
		if e.Path == b || strings.HasPrefix(e.Path, b) && (e.Path[len(b)] == '.' || e.Path[len(b)] == '[') {
			return
		}
	}
	p.errs = append(p.errs, e)
}

// err returns the problems found, ordered by path.
func (p *parser) err() error {
	slices.SortStableFunc(p.errs, func(a, b error) int {
		return strings.Compare(pathOrder(a.(*ValidationError).Path), pathOrder(b.(*ValidationError).Path))
	})
	return errors.Join(p.errs...)
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

var (
	jobType      = reflect.TypeFor[Job]()
	timeType     = reflect.TypeFor[time.Time]()
	durationType = reflect.TypeFor[retry.Duration]()
	rawType      = reflect.TypeFor[json.RawMessage]()
	authType     = reflect.TypeFor[action.Authentication]()
	requestType  = reflect.TypeFor[action.HTTPRequest]()
	recurType    = reflect.TypeFor[recurrence.Recurrence]()
	policyType   = reflect.TypeFor[retry.Policy]()
)

// positiveFields are integer members that, when given, must be at least 1
// (their zero value in Go means "absent").
var positiveFields = map[reflect.Type]map[string]bool{
	recurType: {"interval": true, "count": true},
}

// ignoredFields are members accepted and dropped on input.
var ignoredFields = map[reflect.Type]map[string]bool{
	jobType: {"status": true},
}

// secretFields are members whose values errors never show.
var secretFields = map[string]bool{"password": true, "pfx": true, "secret": true, "sasKey": true, "sasToken": true}

// fieldAliases maps other spellings of a member (lower case) to its JSON
// name: names of the 2014-08-01-preview API and of the authentication
// documentation, and Azure Logic Apps' names of the retry policy members.
var fieldAliases = map[reflect.Type]map[string]string{
	authType:    {"certificateexpiration": "certificateExpirationDate"},
	requestType: {"httpauthentication": "authentication"},
	policyType:  {"type": "retryType", "count": "retryCount", "interval": "retryInterval"},
}

// jsonField is one member of a struct as encoding/json sees it.
type jsonField struct {
	name  string
	typ   reflect.Type
	index []int // for reflect.Value.FieldByIndex
	// omitEmpty and omitZero are the tag's options; other is set when
	// the tag has an option beyond these two (such as ",string").
	omitEmpty, omitZero, other bool
}

var fieldCache sync.Map // reflect.Type -> []jsonField

// fieldsOf lists the JSON members of struct type t, flattening embedded
// structs, in declaration order.
func fieldsOf(t reflect.Type) []jsonField {
	if v, ok := fieldCache.Load(t); ok {
		return v.([]jsonField)
	}
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for _, e := range fieldsOf(f.Type) {
				e.index = append([]int{i}, e.index...)
				out = append(out, e)
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		name, options, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		jf := jsonField{name: name, typ: f.Type, index: f.Index}
		for o := range strings.SplitSeq(options, ",") {
			switch o {
			case "":
			case "omitempty":
				jf.omitEmpty = true
			case "omitzero":
				jf.omitZero = true
			default:
				jf.other = true
			}
		}
		out = append(out, jf)
	}
	fieldCache.Store(t, out)
	return out
}

// walk checks v (decoded with UseNumber) against the Go type t and returns
// the value to encode for it in canonical form. ok is false when the value
// is to be left out: it is null, or it was reported as a problem.
func (p *parser) walk(path string, v any, t reflect.Type) (out any, ok bool) {
	if v == nil {
		return nil, false
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case timeType:
		s, isStr := v.(string)
		if !isStr {
			p.add(path, valueText(v), "is not a time; use an ISO 8601 string such as \"2012-08-04T00:00Z\"")
			return nil, false
		}
		tm, err := ParseTime(s)
		if err != nil {
			p.add(path, valueText(v), "is not a time; use ISO 8601 such as \"2012-08-04T00:00Z\" or \"2012-11-04\"")
			return nil, false
		}
		return tm.Format(time.RFC3339Nano), true
	case durationType:
		s, isStr := v.(string)
		if !isStr {
			p.add(path, valueText(v), "is not a duration; use an ISO 8601 string such as \"PT30S\"")
			return nil, false
		}
		d, err := retry.ParseDuration(s)
		if err != nil {
			p.add(path, valueText(v), strings.TrimPrefix(err.Error(), strconv.Quote(s)+" "))
			return nil, false
		}
		if d <= 0 {
			p.add(path, valueText(v), "is not longer than zero")
			return nil, false
		}
		return d.String(), true
	case rawType:
		return v, true
	}
	switch t.Kind() {
	case reflect.String:
		if _, isStr := v.(string); !isStr {
			p.add(path, valueText(v), "is not a string")
			return nil, false
		}
		return v, true
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, isNum := v.(json.Number)
		if !isNum {
			p.add(path, valueText(v), "is not an integer")
			return nil, false
		}
		if _, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil {
			if errors.Is(err, strconv.ErrRange) {
				p.add(path, valueText(v), "is out of range")
			} else {
				p.add(path, valueText(v), "is not an integer")
			}
			return nil, false
		}
		return v, true
	case reflect.Bool:
		if _, isBool := v.(bool); !isBool {
			p.add(path, valueText(v), "is not a boolean (true or false)")
			return nil, false
		}
		return v, true
	case reflect.Slice:
		arr, isArr := v.([]any)
		if !isArr {
			p.add(path, valueText(v), "is not an array")
			return nil, false
		}
		res := make([]any, len(arr))
		for i, x := range arr {
			// A bad element becomes null, which decodes to the zero
			// value, so the indexes of later elements stay right.
			res[i], _ = p.walk(fmt.Sprintf("%s[%d]", path, i), x, t.Elem())
		}
		return res, true
	case reflect.Map:
		obj, isObj := v.(map[string]any)
		if !isObj {
			p.add(path, valueText(v), "is not an object")
			return nil, false
		}
		res := make(map[string]any, len(obj))
		for _, k := range sortedKeys(obj) {
			if x, ok := p.walk(pathKey(path, k), obj[k], t.Elem()); ok {
				res[k] = x
			}
		}
		return res, true
	case reflect.Struct:
		obj, isObj := v.(map[string]any)
		if !isObj {
			p.add(path, valueText(v), "is not an object")
			return nil, false
		}
		return p.walkStruct(path, obj, t), true
	}
	p.add(path, valueText(v), fmt.Sprintf("has unsupported type %s", t))
	return nil, false
}

func (p *parser) walkStruct(path string, obj map[string]any, t reflect.Type) map[string]any {
	fields := fieldsOf(t)
	matched := make([]string, len(fields))
	for _, k := range sortedKeys(obj) {
		if ignoredFields[t][strings.ToLower(k)] {
			continue
		}
		name := k
		if a, ok := fieldAliases[t][strings.ToLower(k)]; ok {
			name = a
		}
		i := slices.IndexFunc(fields, func(f jsonField) bool { return strings.EqualFold(f.name, name) })
		switch {
		case i < 0:
			p.add(pathKey(path, k), "", "unknown field")
		case matched[i] != "":
			p.add(pathKey(path, k), "", fmt.Sprintf("is a duplicate of %q", matched[i]))
		default:
			matched[i] = k
		}
	}
	res := make(map[string]any, len(obj))
	for i, f := range fields {
		if matched[i] == "" {
			continue
		}
		fp := pathKey(path, f.name)
		before := len(p.errs)
		x, ok := p.walk(fp, obj[matched[i]], f.typ)
		if secretFields[f.name] {
			for _, e := range p.errs[before:] {
				e.(*ValidationError).Value = ""
			}
		}
		if !ok {
			continue
		}
		if n, isNum := x.(json.Number); isNum && positiveFields[t][f.name] && strings.TrimLeft(string(n), "-0") == "" {
			p.add(fp, string(n), "must be at least 1")
			continue
		}
		res[f.name] = x
	}
	return res
}

// pathKey, sortedKeys and valueText are shared with the
// payload checks of package action.
var (
	pathKey    = jsonpath.Key
	sortedKeys = jsonpath.SortedKeys
	valueText  = jsonpath.Text
)

// thousands formats n with comma separators ("16,000").
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func hujsonSyntaxError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "hujson: ")
	var line, col int
	if n, _ := fmt.Sscanf(msg, "line %d, column %d: ", &line, &col); n == 2 {
		if _, rest, ok := strings.Cut(msg, ": "); ok {
			msg = rest
		}
		return &SyntaxError{Line: line, Column: col, Msg: msg}
	}
	return &SyntaxError{Line: 1, Column: 1, Msg: msg}
}

func jsonSyntaxError(data []byte, err error) error {
	off := int64(len(data))
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return &SyntaxError{Line: line, Column: col, Msg: err.Error()}
}
