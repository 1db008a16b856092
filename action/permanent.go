package action

import "errors"

// Permanent marks err as an error that will not go away: an attempt of an
// occurrence that fails with it is not retried, and the occurrence faults
// at once (its errorAction, if any, runs). Executors return it for
// failures that no retry can mend, such as a request the target refuses
// as malformed. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

// IsPermanent reports whether err, or an error it wraps, was marked with
// Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }
