package jobdef

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/jsonc"
	"github.com/jobclock/scheduler/internal/jsonpath"
)

// Limits on a job definition, as the Azure Scheduler documented them.
const (
	// MaxJobSize is the largest job definition in bytes, measured
	// without comments and insignificant whitespace; of an ARM envelope,
	// only its properties object counts.
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

// ParseOptions adjusts what ParseJob and Job.Validate accept. A nil
// *ParseOptions means the zero value.
type ParseOptions struct {
	// ActionTypes lists the action types a host has registered besides
	// the built-in ones. They are matched without regard to case and
	// written back in the spelling given here; their payload is the
	// action's "custom" member. Nil means only the built-in types (and
	// those of Executors).
	ActionTypes []action.Type
	// Executors, when set, is where each action's type must have an
	// executor: an action whose type has none is refused at its "type",
	// and an executor that is an [action.Validator] checks the actions of
	// its type. Its types besides the built-in ones are accepted as if
	// listed in ActionTypes. An *action.Registry is an Executors; a
	// Scheduler passes its own, which holds its built-in HTTP executor
	// too. Nil means no executor is looked up.
	Executors Executors
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
}

// Executors finds the executor of an action type; see
// [ParseOptions.Executors]. *action.Registry implements it.
type Executors interface {
	// Lookup returns the executor of actions of type t.
	Lookup(t action.Type) (action.Executor, bool)
	// Types returns the types that have an executor, in any order.
	Types() []action.Type
}

// ParseJob parses and validates a job definition. It returns the job in
// canonical form, or a nil Job and an error listing every problem: joined
// [*ValidationError] values, or a single [*SyntaxError]. Both match
// [ErrInvalid]. opts may be nil. See the package documentation for the
// accepted syntax and the rules.
//
// The definition is the job's "properties" object, or the ARM resource
// envelope {"id", "name", "type", "properties"} around it; then the paths
// of problems start with "properties.".
func ParseJob(data []byte, opts *ParseOptions) (*Job, error) {
	job, _, err := ParseJobDocument(data, opts)
	return job, err
}

// ParseJobDocument is ParseJob that also returns at, where the job's
// definition stands in data: "" for the properties object itself,
// "properties" in the ARM envelope. A caller that finds more problems with
// the job, at paths relative to it, names them in data under at.
func ParseJobDocument(data []byte, opts *ParseOptions) (job *Job, at string, err error) {
	res, err := ParseJobResource(data, opts)
	if err != nil {
		return nil, "", err
	}
	return res.Job, res.At, nil
}

// JobResource is a job definition read by [ParseJobResource]: the job, where
// its definition stands in the input, and the tags of the ARM envelope
// around it.
type JobResource struct {
	// Job is the definition in canonical form.
	Job *Job
	// At is "" when the input is the properties object itself,
	// "properties" when it is the ARM envelope.
	At string
	// Tags are the envelope's "tags", checked by [ValidateTags]; nil
	// when it has none (or the input is a bare definition).
	Tags map[string]string
}

// ParseJobResource is [ParseJobDocument] that also returns the tags of the
// ARM envelope ({"tags": {"team": "ops"}, "properties": {...}}), whose
// problems are reported with the definition's at their paths ("tags",
// "tags.NAME"; see [ValidateTags]).
func ParseJobResource(data []byte, opts *ParseOptions) (*JobResource, error) {
	if opts == nil {
		opts = &ParseOptions{}
	}
	if len(data) > MaxInputSize {
		return nil, &ValidationError{Path: rootPath, Reason: fmt.Sprintf("is %d bytes, more than the %d bytes read at most", len(data), MaxInputSize)}
	}
	var d decoder
	d.Rules = definitionRules
	job, at := d.decode(data)
	if d.Scanner.Err() != nil {
		return nil, scanError(&d.Scanner, rootPath, `a job definition is a JSON object such as {"action": {"type": "Http", "request": {"uri": "https://example.com/", "method": "GET"}}}`)
	}
	p := problemsOf(d.Problems)
	if d.oversize != nil {
		p.errs, p.rank = append(p.errs, d.oversize), append(p.rank, 1)
	}
	if job != nil {
		canonicalize(job, opts)
		for _, e := range validateJob(job, opts) {
			e.Under(at)
			p.addRule(e)
		}
		p.asWritten(data)
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return &JobResource{Job: job, At: at, Tags: d.tags}, nil
}

// scanError returns the error of input that s could not read as JSON: a
// [*SyntaxError], or when it holds nothing but whitespace and comments, a
// problem at root saying it is empty and what it should be (example).
func scanError(s *jsonc.Scanner, root, example string) error {
	se := s.Err().(*jsonc.SyntaxError)
	if s.Size() == 0 && se.Msg == "parsing value: unexpected EOF" {
		return &ValidationError{Path: root, Reason: "is empty; " + example}
	}
	return &SyntaxError{Line: se.Line, Column: se.Column, Msg: se.Msg}
}

// decode reads the definition in data, a job or the ARM envelope around
// one, recording its problems. It returns the job (nil when there is none
// to validate) and where it stands in data; d.Scanner holds the syntax
// error, if any.
func (d *decoder) decode(data []byte) (job *Job, at string) {
	var top any // the top-level value when it is not an object
	s := &d.Scanner
	d.Reset(data)
	job = new(Job)
	isObject := s.Kind() == jsonc.Object
	if isObject {
		d.top(job)
	} else {
		top, _ = s.Any()
	}
	if s.Finish() != nil {
		return nil, ""
	}
	if d.envelope && d.root == nil {
		// "properties" did not come first: the problems found reading
		// the envelope as a bare definition do not count.
		d.Problems = d.Problems[:0]
	}
	switch {
	case !isObject:
		d.checkSize(rootPath, s.Size())
		d.Add(rootPath, jsonpath.Text(top), "is not an object")
		return nil, ""
	case !d.envelope:
		d.checkSize(rootPath, s.Size())
		return job, ""
	}
	if d.root == nil {
		// "properties" did not come first: read the envelope's members
		// again, from the start.
		s.Reset(data)
		s.Object(func(name []byte) bool {
			d.root = append(d.root, rootMember{string(name), s.Offset()})
			return s.Skip()
		})
	}
	props, ok := d.envelopeMembers()
	if !ok {
		d.Drop(d.propsFrom, d.propsTo)
		return nil, ""
	}
	if d.props != nil && props == d.propsAt {
		d.checkSize("properties", d.propsSize)
		return d.props, "properties" // read already
	}
	d.Drop(d.propsFrom, d.propsTo)
	s.Seek(props)
	job = new(Job)
	size := s.Size()
	d.Push("properties")
	d.Value(reflect.ValueOf(job).Elem())
	d.Pop()
	d.checkSize("properties", s.Size()-size)
	return job, "properties"
}

// checkSize notes path, the definition, as too large when its size as
// compact JSON (without comments and insignificant whitespace) is more
// than MaxJobSize; an envelope's other members do not count. The problem
// is kept apart from those found reading (d.Problems), which hide the
// rules' problems under their paths: the definition's other problems are
// reported with it.
func (d *decoder) checkSize(path string, size int) {
	if size > MaxJobSize {
		d.oversize = &ValidationError{Path: path, Reason: sizeReason(size)}
	}
}

// sizeReason is the reason of a definition of size bytes as compact JSON
// that is over MaxJobSize.
func sizeReason(size int) string {
	return fmt.Sprintf("is %d bytes as compact JSON (without whitespace and comments), more than the limit of %s", size, thousands(MaxJobSize))
}

// envelope is the ARM resource envelope around a job, for what a member
// it does not have is reported with.
type envelope struct {
	ID         string            `json:"id"`
	Name       string            `json:"name"`
	Type       string            `json:"type"`
	Tags       map[string]string `json:"tags"`
	Properties Job               `json:"properties"`
}

// envelopeMembers checks the members of the ARM resource envelope {"id",
// "name", "type", "properties"}, d.root, recording the problems of all but
// "properties". It returns where the properties object starts, and false
// when it is not an object.
func (d *decoder) envelopeMembers() (props int, ok bool) {
	s := &d.Scanner
	var members []rootMember
	var again []string // the names given more than once
	for _, g := range d.root {
		if !slices.ContainsFunc(members, func(m rootMember) bool { return m.name == g.name }) {
			members = append(members, g)
		} else if !slices.Contains(again, g.name) { // the first counts
			again = append(again, g.name)
			d.AddName(jsonpath.Key("", g.name), "is given more than once")
		}
	}
	slices.SortFunc(members, func(a, b rootMember) int { return strings.Compare(a.name, b.name) })
	// The member "properties", or else the first of its spellings in
	// other cases.
	propsKey := ""
	for _, m := range members {
		if strings.EqualFold(m.name, "properties") && (propsKey == "" || m.name == "properties") {
			propsKey, props = m.name, m.at
		}
	}
	counts := map[string]string{"properties": propsKey} // by the name in lower case, the spelling that counts
	for _, m := range members {
		k := m.name
		lower := strings.ToLower(k)
		switch lower {
		case "id", "name", "type", "tags", "properties":
			if c, ok := counts[lower]; ok && c != k {
				d.AddName(jsonpath.Key("", k), "is a duplicate of "+strconv.Quote(c))
				continue
			}
			counts[lower] = k // the first in byte order
		}
		switch {
		case k == propsKey:
		case strings.EqualFold(k, "id"), strings.EqualFold(k, "name"), strings.EqualFold(k, "type"):
			s.Seek(m.at)
			if kind := s.Kind(); kind != jsonc.Null && kind != jsonc.String {
				v, _ := s.Any()
				d.Add(strings.ToLower(k), jsonpath.Text(v), "is not a string")
			}
		case strings.EqualFold(k, "tags"):
			s.Seek(m.at)
			d.readTags()
		default:
			d.AddUnknown("", reflect.TypeFor[envelope](), k)
		}
	}
	s.Seek(props)
	if s.Kind() != jsonc.Object {
		v, _ := s.Any()
		d.Add("properties", jsonpath.Text(v), "is not an object")
		return 0, false
	}
	return props, true
}

// readTags reads the envelope's "tags", where the scanner stands, into
// d.tags, recording its problems.
func (d *decoder) readTags() {
	s := &d.Scanner
	switch s.Kind() {
	case jsonc.Null:
		s.Skip()
		return
	case jsonc.Object:
	default:
		v, _ := s.Any()
		d.Add("tags", jsonpath.Text(v), `is not an object; tags are {"name": "value", ...}`)
		return
	}
	tags := make(map[string]string)
	ok := true
	var seen, again []string // the names read, those given more than once
	s.Object(func(name []byte) bool {
		k := string(name)
		if slices.Contains(seen, k) { // the first counts
			if !slices.Contains(again, k) {
				again = append(again, k)
				d.AddName(jsonpath.Key("tags", k), "is given more than once")
			}
			return s.Skip()
		}
		seen = append(seen, k)
		if s.Kind() != jsonc.String {
			v, _ := s.Any()
			d.Add(jsonpath.Key("tags", k), jsonpath.Text(v), "is not a string")
			ok = false
			return s.Err() == nil
		}
		v, _ := s.String()
		tags[k] = v
		return s.Err() == nil
	})
	for _, e := range ValidationErrors(ValidateTags(tags)) {
		d.Add(e.Path, e.Value, e.Reason)
	}
	if ok && len(tags) > 0 {
		d.tags = tags
	}
}
