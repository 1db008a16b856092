package httpapi

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jobclock/scheduler/internal/jsonc"
)

// sameResource checks the members "id" and "name" of a PUT or PATCH body:
// when given (and not null), each must name the resource of the request's
// path, id as its resource ID and name as one of names, without regard to
// case, as ARM compares them. A body that names another resource is
// refused at the member's path (several problems at once), so that a
// body meant for another job or collection is not applied to this one.
// Bodies that are not a JSON object are left for the parser to report.
func sameResource(data []byte, what, id string, names ...string) error {
	s := jsonc.NewScanner(data)
	if s.Kind() != jsonc.Object {
		return nil
	}
	var details []ErrorDetail
	refuse := func(path, format string, args ...any) {
		details = append(details, ErrorDetail{Code: CodeBadRequest, Target: path, Message: fmt.Sprintf(path+": "+format, args...)})
	}
	s.Object(func(member []byte) bool {
		m := string(member)
		isID, isName := strings.EqualFold(m, "id"), strings.EqualFold(m, "name")
		if !isID && !isName {
			return s.Skip()
		}
		path := "id"
		if isName {
			path = "name"
		}
		switch s.Kind() {
		case jsonc.Null:
			return s.Null()
		case jsonc.String:
		default:
			raw, ok := s.Raw()
			refuse(path, "%s is not a string; it names the %s, and may be left out", raw, what)
			return ok
		}
		v, ok := s.String()
		switch {
		case !ok:
			return false
		case isID && !strings.EqualFold(v, id):
			refuse(path, "%s names another resource than this request's %s, %s; leave it out, or give this %s's id",
				strconv.Quote(v), what, strconv.Quote(id), what)
		case isName && !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(v, n) }):
			refuse(path, "%s names another %s than this request's, %s; leave it out, or give this %s's name",
				strconv.Quote(v), what, strconv.Quote(names[0]), what)
		}
		return true
	})
	if s.Finish() != nil { // a syntax error: the parser says where
		return nil
	}
	if len(details) == 0 {
		return nil
	}
	return detailsError(details)
}
