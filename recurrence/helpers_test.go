package recurrence_test

import (
	"errors"

	"github.com/jobclock/scheduler/recurrence"
)

func asFieldError(err error, fe **recurrence.FieldError) bool { return errors.As(err, fe) }
