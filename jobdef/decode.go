package jobdef

import (
	"reflect"
	"strings"

	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/internal/codec"
	"github.com/jobclock/scheduler/internal/jsonc"
	"github.com/jobclock/scheduler/recurrence"
	"github.com/jobclock/scheduler/retry"
)

// A definition is read by package codec, in one pass, into the Go types'
// fields by their json tags (see codec.Decoder for what it reports and how
// it reads members given twice). On top of the tags, a few members have
// rules of their own, kept here: other spellings they are known by,
// members accepted and dropped, members whose values errors never show,
// and integers that must be at least 1 when given.
var definitionRules = &codec.Rules{
	// Names of the 2014-08-01-preview API and of the authentication
	// documentation, and Azure Logic Apps' names of the retry policy
	// members.
	Aliases: map[reflect.Type]map[string]string{
		reflect.TypeFor[action.Authentication](): {"certificateexpiration": "certificateExpirationDate"},
		reflect.TypeFor[action.HTTPRequest]():    {"httpauthentication": "authentication"},
		reflect.TypeFor[retry.Policy]():          {"type": "retryType", "count": "retryCount", "interval": "retryInterval"},
	},
	// The read-only status, whatever it holds.
	Ignored: map[reflect.Type]map[string]bool{
		reflect.TypeFor[Job](): {"status": true},
	},
	Secret: map[string]bool{"password": true, "pfx": true, "secret": true, "sasKey": true, "sasToken": true},
	// Zero means absent in Go.
	Positive: map[reflect.Type]map[string]bool{
		reflect.TypeFor[recurrence.Recurrence](): {"interval": true, "count": true},
	},
}

// rootMember is a member of the top-level object of an envelope: its name
// and where its value starts.
type rootMember struct {
	name string
	at   int
}

// decoder reads a definition: a job, or the ARM envelope around one.
type decoder struct {
	codec.Decoder
	// envelope is set when a member of the top-level object is named
	// "properties" (in any case): the definition is an ARM envelope and
	// must be read as one. When that member comes first, as it most
	// often does, root holds every member of the top-level object.
	envelope bool
	root     []rootMember
	// props is the job read from the properties object of an envelope
	// that starts with it, propsAt where that object starts, and
	// propsFrom and propsTo the span of its problems.
	props              *Job
	propsAt            int
	propsFrom, propsTo int
	// propsSize is the size of the properties object read, as compact
	// JSON: the definition's size (see MaxJobSize).
	propsSize int
	// oversize is the problem of a definition larger than MaxJobSize;
	// nil when it is not (see checkSize).
	oversize *ValidationError
	// tags are the envelope's tags.
	tags map[string]string
}

// top reads the top-level object into job, noting an envelope.
func (d *decoder) top(job *Job) {
	s := &d.Scanner
	var st codec.Struct
	d.StartStruct(&st, reflect.ValueOf(job).Elem())
	first := true
	s.Object(func(name []byte) bool {
		if first && strings.EqualFold(string(name), "properties") || d.root != nil {
			// An envelope: its members are checked by envelope. The
			// properties object that comes first is read now: it is the
			// one that counts, unless another spelling of it follows.
			d.envelope = true
			d.root = append(d.root, rootMember{string(name), s.Offset()})
			if !first || s.Kind() != jsonc.Object {
				return s.Skip()
			}
			first = false
			d.props, d.propsAt, d.propsFrom = new(Job), s.Offset(), len(d.Problems)
			size := s.Size()
			d.Push("properties")
			d.Value(reflect.ValueOf(d.props).Elem())
			d.Pop()
			d.propsTo, d.propsSize = len(d.Problems), s.Size()-size
			return s.Err() == nil
		}
		first = false
		if d.envelope || strings.EqualFold(string(name), "properties") {
			d.envelope = true
			return s.Skip() // it is read again as an envelope
		}
		return d.Member(&st, name)
	})
	d.EndStruct(&st)
}
