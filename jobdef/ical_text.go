package jobdef

import (
	"strings"
)

// icalLine is a content line of an iCalendar text, unfolded: NAME;PARAMS:VALUE.
type icalLine struct {
	n      int // the line it starts on
	name   string
	params map[string]string // upper-case keys, values unquoted
	value  string
}

// icalComponent is a BEGIN:NAME ... END:NAME block of an iCalendar text:
// its properties and the components inside it, in the order given.
type icalComponent struct {
	name  string // upper case
	begin int    // the line of its BEGIN
	props []*icalLine
	subs  []*icalComponent
}

// prop returns c's first property called name, or nil.
func (c *icalComponent) prop(name string) *icalLine {
	for _, l := range c.props {
		if l.name == name {
			return l
		}
	}
	return nil
}

// readICalComponents reads the components of the lines of a text (the
// VCALENDARs and whatever stands beside them) and the problems with its
// structure: a line that is no content line, an END that closes no
// BEGIN, a BEGIN without its END.
func readICalComponents(lines []*icalLine) (top []*icalComponent, problems []icalProblem) {
	var open []*icalComponent
	for _, l := range lines {
		switch {
		case l.name == "":
			problems = append(problems, icalProblem{l.n, "is not a content line NAME:VALUE"})
		case l.name == "BEGIN":
			c := &icalComponent{name: strings.ToUpper(l.value), begin: l.n}
			if len(open) == 0 {
				top = append(top, c)
			} else {
				parent := open[len(open)-1]
				parent.subs = append(parent.subs, c)
			}
			open = append(open, c)
		case l.name == "END":
			name := strings.ToUpper(l.value)
			i := len(open) - 1
			for i >= 0 && open[i].name != name {
				i--
			}
			if i < 0 {
				problems = append(problems, icalProblem{l.n, "END:" + l.value + " closes no BEGIN:" + l.value})
				continue
			}
			for _, c := range open[i+1:] {
				problems = append(problems, unclosed(c))
			}
			open = open[:i]
		case len(open) > 0:
			c := open[len(open)-1]
			c.props = append(c.props, l)
		}
	}
	for _, c := range open {
		problems = append(problems, unclosed(c))
	}
	return top, problems
}

func unclosed(c *icalComponent) icalProblem {
	return icalProblem{c.begin, "BEGIN:" + c.name + " has no END:" + c.name}
}

// unfoldICal splits text into content lines, joining the folded ones (a
// line that begins with a space or a tab continues the one before), in
// time linear in the text. A byte order mark before the text is dropped;
// lines end in CRLF or LF.
func unfoldICal(text string) []*icalLine {
	text = strings.TrimPrefix(text, "\uFEFF")
	var out []*icalLine
	var line strings.Builder // the content line being unfolded
	start := 0               // its first line; 0 before the first
	flush := func() {
		if start > 0 {
			out = append(out, parseICalLine(start, line.String()))
		}
	}
	for i, s := range strings.Split(text, "\n") {
		s = strings.TrimSuffix(s, "\r")
		if (strings.HasPrefix(s, " ") || strings.HasPrefix(s, "\t")) && start > 0 {
			line.WriteString(s[1:])
			continue
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		flush()
		line.Reset()
		line.WriteString(s)
		start = i + 1
	}
	flush()
	return out
}

// parseICalLine splits a content line at the first colon and the
// semicolons before it that are outside double quotes, so that a quoted
// parameter value may hold ':' and ';'; its name is empty when it has no
// such colon.
func parseICalLine(n int, s string) *icalLine {
	var head []string
	quoted, from := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			quoted = !quoted
		case quoted:
		case s[i] == ';':
			head, from = append(head, s[from:i]), i+1
		case s[i] == ':':
			head = append(head, s[from:i])
			l := &icalLine{n: n, name: strings.ToUpper(head[0]), value: s[i+1:], params: map[string]string{}}
			for _, p := range head[1:] {
				k, v, _ := strings.Cut(p, "=")
				l.params[strings.ToUpper(k)] = strings.ReplaceAll(v, `"`, "")
			}
			return l
		}
	}
	return &icalLine{n: n}
}
