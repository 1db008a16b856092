package jobdef

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/jobclock/scheduler/internal/jsonpath"
)

// The limits of a job's tags, as Azure Resource Manager sets them.
const (
	// MaxTags is the most tags a job may have.
	MaxTags = 15
	// MaxTagNameLength is the most characters of a tag's name.
	MaxTagNameLength = 512
	// MaxTagValueLength is the most characters of a tag's value.
	MaxTagValueLength = 256
)

// ValidateTags checks a job's tags (the "tags" member of the ARM resource
// around it): at most [MaxTags] of them, each name not empty and at most
// [MaxTagNameLength] characters, each value at most [MaxTagValueLength].
// It reports every problem as a [*ValidationError] at "tags" (their
// number) or "tags.NAME" (a name or a value), joined; nil when tags are
// valid. A nil or empty map is valid. Names are compared as given (two
// names that differ in case are two tags).
func ValidateTags(tags map[string]string) error {
	if len(tags) == 0 {
		return nil
	}
	var errs []error
	if n := len(tags); n > MaxTags {
		errs = append(errs, &ValidationError{Path: "tags", Reason: fmt.Sprintf("has %d tags, more than the limit of %d", n, MaxTags)})
	}
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		path := jsonpath.Key("tags", jsonpath.Abbreviate(k)) // a name too long is named by its start
		switch n := utf8.RuneCountInString(k); {
		case n == 0:
			errs = append(errs, &ValidationError{Path: path, Reason: "has an empty name"})
		case n > MaxTagNameLength:
			errs = append(errs, &ValidationError{Path: path, Reason: fmt.Sprintf("has a name of %d characters, more than the limit of %d", n, MaxTagNameLength)})
		}
		if n := utf8.RuneCountInString(tags[k]); n > MaxTagValueLength {
			errs = append(errs, &ValidationError{Path: path, Value: jsonpath.Abbreviate(strconv.Quote(tags[k])),
				Reason: fmt.Sprintf("is %d characters long, more than the limit of %d for a tag's value", n, MaxTagValueLength)})
		}
	}
	return errors.Join(errs...)
}
