package httpapi

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	scheduler "github.com/jobclock/scheduler"
)

// page is the paging, filtering and order of a list request.
type page struct {
	// filter holds the value of each member the $filter names, by the
	// member's name as listing.filters spells it; its values of a
	// filterField's values are spelled as there.
	filter     map[string]string
	orderBy    scheduler.JobOrder
	descending bool
	top, skip  int
}

// listing is what the query of a list may ask for.
type listing struct {
	// filters are the members its $filter may name.
	filters []filterField
	// orders are the members its $orderby may name, by the JobOrder
	// each stands for; without any, $orderby is refused with noOrder,
	// which says in what order the list comes.
	orders  []orderMember
	noOrder string
}

// filterField is a member a list may be filtered on: with values, one of
// them in any case and optionally in single quotes; without, any text
// in single quotes (a quote in it doubled), compared exactly.
type filterField struct {
	name   string
	values []string
	// requires is the member that must be in the same $filter.
	requires string
	// empty is why a condition with an empty text is refused; without
	// it, the empty text is refused as a missing value.
	empty string
}

// orderMember is a member a list may be ordered by, named by its OData
// path in the resource (properties/status/nextExecutionTime) or the last
// segment of the path alone, in any case.
type orderMember struct {
	path  string
	order scheduler.JobOrder
}

// jobOrders are the members of $orderby on the job list.
var jobOrders = []orderMember{
	{"name", scheduler.JobsByName},
	{"properties/status/nextExecutionTime", scheduler.JobsByNextExecution},
	{"properties/status/lastExecutionTime", scheduler.JobsByLastExecution},
	{"properties/status/failureCount", scheduler.JobsByFailures},
}

// jobListing is what the job list's query may ask for.
var jobListing = listing{
	filters: []filterField{
		{name: "state", values: []string{"Enabled", "Disabled", "Completed", "Faulted"}},
		{name: "health", values: []string{"OK", "Skipped", "Stale", "Late", "Failing"}},
		{name: "tagName"},
		{name: "tagValue", requires: "tagName", empty: "filter by tagName alone to find the jobs with the tag, whatever its value"},
	},
	orders: jobOrders,
}

// historyListing is what the history list's query may ask for.
var historyListing = listing{
	filters: []filterField{
		{name: "status", values: []string{"Completed", "Failed", "Postponed", "Skipped"}},
		{name: "faulted", values: []string{"true", "false"}},
	},
	noOrder: "a job's history is listed newest first, in no other order",
}

// filterCondition is one "MEMBER eq VALUE" of a $filter.
type filterCondition struct {
	text   string // as written
	member string
	op     string
	value  string // without its quotes
	quoted bool
}

// filterToken is a word or a quoted string of a $filter, from start to
// end in it.
type filterToken struct {
	text       string // the word, or the string without its quotes
	quoted     bool
	start, end int
}

// tokenizeFilter splits f into words and quoted strings ('...', a quote
// in them doubled), between spaces, tabs and line ends.
func tokenizeFilter(f string) ([]filterToken, error) {
	var toks []filterToken
	space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for i := 0; i < len(f); {
		switch {
		case space(f[i]):
			i++
		case f[i] == '\'':
			var b strings.Builder
			j := i + 1
			for ; ; j++ {
				if j == len(f) {
					return nil, fmt.Errorf("its quoted text from %s has no closing quote", f[i:])
				}
				if f[j] != '\'' {
					b.WriteByte(f[j])
					continue
				}
				if j+1 < len(f) && f[j+1] == '\'' {
					b.WriteByte('\'')
					j++
					continue
				}
				break
			}
			toks = append(toks, filterToken{text: b.String(), quoted: true, start: i, end: j + 1})
			i = j + 1
		default:
			j := i
			for j < len(f) && !space(f[j]) && f[j] != '\'' {
				j++
			}
			toks = append(toks, filterToken{text: f[i:j], start: i, end: j})
			i = j
		}
	}
	return toks, nil
}

// odataComparisons are OData's comparison operators, of which a $filter
// supports eq.
var odataComparisons = []string{"eq", "ne", "gt", "ge", "lt", "le"}

// splitFilter reads f as conditions "MEMBER OP VALUE" joined by "and"
// (in any case). It fails, naming the part at fault, on another
// connective (such as "or") and on a condition of other than three parts.
func splitFilter(f string) ([]filterCondition, error) {
	toks, err := tokenizeFilter(f)
	if err != nil {
		return nil, err
	}
	var out []filterCondition
	for i := 0; i < len(toks); {
		end := min(i+3, len(toks))
		c := toks[i:end]
		text := f[c[0].start:c[len(c)-1].end]
		if len(c) < 3 || c[0].quoted || c[1].quoted || !slices.ContainsFunc(odataComparisons, func(op string) bool { return strings.EqualFold(op, c[1].text) }) {
			return nil, fmt.Errorf("its part '%s' is not a condition 'MEMBER eq VALUE'", f[c[0].start:])
		}
		out = append(out, filterCondition{text: text, member: c[0].text, op: c[1].text, value: c[2].text, quoted: c[2].quoted})
		i = end
		if i == len(toks) {
			break
		}
		if join := toks[i]; join.quoted || !strings.EqualFold(join.text, "and") {
			return nil, fmt.Errorf("it joins the condition '%s' to what follows with '%s', which is not supported", text, join.text)
		}
		if i++; i == len(toks) {
			return nil, fmt.Errorf("it ends with 'and', after the condition '%s'", text)
		}
	}
	return out, nil
}

// uses says what a $filter of l may be.
func (l *listing) uses() string {
	var uses []string
	text := false
	for _, fd := range l.filters {
		switch {
		case fd.values == nil && fd.requires != "":
			uses = append(uses, fmt.Sprintf("\"%s eq 'TEXT'\" with one on %s", fd.name, fd.requires))
		case fd.values == nil:
			uses = append(uses, fmt.Sprintf("\"%s eq 'TEXT'\"", fd.name))
		default:
			uses = append(uses, fmt.Sprintf("'%s eq VALUE' with VALUE one of %s", fd.name, strings.Join(fd.values, ", ")))
		}
		text = text || fd.values == nil
	}
	out := strings.Join(uses, ", or ")
	if text {
		out += " (TEXT in single quotes, a quote in it doubled)"
	}
	return out + "; conditions on different members are joined by 'and'"
}

// parseFilter reads the $filter f of l into p.filter; it returns the
// problems, each naming the part of f at fault.
func (l *listing) parseFilter(f string, p *page) []string {
	conds, err := splitFilter(f)
	if err != nil {
		return []string{fmt.Sprintf("The $filter '%s' is not supported: %v; use %s.", f, err, l.uses())}
	}
	var bad []string
	problem := func(format string, args ...any) {
		bad = append(bad, fmt.Sprintf("The $filter '%s' is not supported: ", f)+fmt.Sprintf(format, args...)+".")
	}
	p.filter = map[string]string{}
	seen := map[string]string{}
	for _, c := range conds {
		i := slices.IndexFunc(l.filters, func(fd filterField) bool { return strings.EqualFold(fd.name, c.member) })
		if i < 0 {
			problem("its condition '%s' is on %s, which the list cannot be filtered on: use %s", c.text, c.member, l.uses())
			continue
		}
		fd := l.filters[i]
		if !strings.EqualFold(c.op, "eq") {
			problem("its condition '%s' compares with '%s': only 'eq' is supported", c.text, c.op)
			continue
		}
		if first, ok := seen[fd.name]; ok {
			problem("its conditions '%s' and '%s' both name %s: name each member once", first, c.text, fd.name)
			continue
		}
		seen[fd.name] = c.text
		switch {
		case fd.values != nil:
			k := slices.IndexFunc(fd.values, func(v string) bool { return strings.EqualFold(v, c.value) })
			if k < 0 {
				problem("in its condition '%s', %s is not one of %s", c.text, c.value, strings.Join(fd.values, ", "))
				continue
			}
			p.filter[fd.name] = fd.values[k]
		case !c.quoted:
			problem("in its condition '%s', the value %s is not in single quotes", c.text, c.value)
		case c.value == "" && fd.empty != "":
			problem("its condition '%s' has an empty %s: %s", c.text, fd.name, fd.empty)
		case c.value == "":
			problem("its condition '%s' has an empty %s", c.text, fd.name)
		default:
			p.filter[fd.name] = c.value
		}
	}
	for _, fd := range l.filters {
		if _, ok := seen[fd.name]; ok && fd.requires != "" {
			if _, ok := seen[fd.requires]; !ok {
				problem("its condition '%s' needs one on %s with it", seen[fd.name], fd.requires)
			}
		}
	}
	return bad
}

// parseOrder reads the $orderby o of l, "MEMBER" or "MEMBER asc|desc",
// into p; it returns the problem, naming the part at fault.
func (l *listing) parseOrder(o string, p *page) string {
	if len(l.orders) == 0 {
		return fmt.Sprintf("The $orderby '%s' is not supported: %s.", o, l.noOrder)
	}
	paths := make([]string, len(l.orders))
	for i, m := range l.orders {
		paths[i] = m.path
	}
	use := fmt.Sprintf("use one of %s (the last segment alone will do), optionally followed by asc or desc; ties are in name order", strings.Join(paths, ", "))
	words := strings.Fields(o)
	if len(words) > 2 || strings.Contains(o, ",") {
		return fmt.Sprintf("The $orderby '%s' is not supported: it orders by one member only: %s.", o, use)
	}
	i := slices.IndexFunc(l.orders, func(m orderMember) bool {
		last := m.path[strings.LastIndex(m.path, "/")+1:]
		return strings.EqualFold(words[0], m.path) || strings.EqualFold(words[0], last)
	})
	if i < 0 {
		return fmt.Sprintf("The $orderby '%s' is not supported: %s is not a member to order by: %s.", o, words[0], use)
	}
	p.orderBy = l.orders[i].order
	if len(words) == 2 {
		switch {
		case strings.EqualFold(words[1], "asc"):
		case strings.EqualFold(words[1], "desc"):
			p.descending = true
		default:
			return fmt.Sprintf("The $orderby '%s' is not supported: its direction %s is neither asc nor desc.", o, words[1])
		}
	}
	return ""
}

// parsePage reads the query of a list l: $filter (conditions "MEMBER eq
// VALUE" joined by "and", see listing.parseFilter), $orderby (see
// listing.parseOrder), $top (1..100, default 100) and $skip (0 or more).
func parsePage(r *http.Request, l *listing) (page, error) {
	q := r.URL.Query()
	p := page{top: scheduler.MaxPageSize}
	var details []ErrorDetail
	bad := func(target, format string, args ...any) {
		details = append(details, badRequest(target, format, args...).detail)
	}
	if f := strings.TrimSpace(q.Get("$filter")); f != "" {
		for _, msg := range l.parseFilter(f, &p) {
			bad("$filter", "%s", msg)
		}
	}
	if o := strings.TrimSpace(q.Get("$orderby")); o != "" {
		if msg := l.parseOrder(o, &p); msg != "" {
			bad("$orderby", "%s", msg)
		}
	}
	if v := q.Get("$top"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > scheduler.MaxPageSize {
			bad("$top", "The $top '%s' is invalid: it must be an integer from 1 to %d.", v, scheduler.MaxPageSize)
		}
		p.top = n
	}
	if v := q.Get("$skip"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || int64(n) > 1<<40 {
			bad("$skip", "The $skip '%s' is invalid: it must be an integer of 0 or more.", v)
		}
		p.skip = n
	}
	switch len(details) {
	case 0:
		return p, nil
	case 1:
		return p, &apiError{status: http.StatusBadRequest, detail: details[0]}
	}
	msgs := make([]string, len(details))
	for i, d := range details {
		msgs[i] = d.Message
	}
	return p, &apiError{status: http.StatusBadRequest, detail: ErrorDetail{Code: CodeBadRequest,
		Message: "The request has " + itoa(len(details)) + " errors: " + strings.Join(msgs, " "), Details: details}}
}
