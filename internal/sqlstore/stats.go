package sqlstore

import (
	"fmt"
	"time"
)

// CheckHistoryRange returns an error unless step is positive and from is
// before to, which the SQL of CountHistory needs.
func CheckHistoryRange(from, to time.Time, step time.Duration) error {
	if step <= 0 || !from.Before(to) {
		return fmt.Errorf("count history: step %v from %v to %v is no range", step, from, to)
	}
	return nil
}

// BucketStart returns the start of bucket number n of CountHistory: from
// plus n steps, in UTC.
func BucketStart(from time.Time, step time.Duration, n int64) time.Time {
	return UTC(from).Add(time.Duration(n) * step)
}
