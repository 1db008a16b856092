package sqlstore

import (
	"encoding/json"
	"fmt"

	scheduler "github.com/jobclock/scheduler"
)

// LeaseKeys returns jobs as the JSON array of [collection, name] pairs
// that the statements of [scheduler.LeaseExtender.ExtendLeases] read.
func LeaseKeys(jobs []scheduler.JobKey) (string, error) {
	pairs := make([][2]string, len(jobs))
	for i, k := range jobs {
		pairs[i] = [2]string{k.Collection, k.Name}
	}
	b, err := json.Marshal(pairs)
	return string(b), err
}

// NotExtended is a job whose lease an ExtendLeases statement did not
// extend, as the statement returns it in a JSON array: the job's place
// in the call (from 1), its lease owner (null: there is no such job)
// and whether its collection exists.
type NotExtended struct {
	Place      int     `json:"i"`
	Holder     *string `json:"holder"`
	Collection bool    `json:"coll"`
}

// ExtendErrors returns the answer of ExtendLeases of jobs by owner whose
// statement returned notExtended, a JSON array of [NotExtended]: nil when
// it is empty (every lease was extended), else one error per job, nil for
// those extended, with ExtendLease's meanings; err, when not nil, is the
// statement's own error, which each job then fails with.
func (d *Dialect) ExtendErrors(owner string, jobs []scheduler.JobKey, notExtended []byte, err error) []error {
	var not []NotExtended
	if err == nil {
		if err = json.Unmarshal(notExtended, &not); err == nil && len(not) == 0 {
			return nil
		}
	}
	errs := make([]error, len(jobs))
	if err != nil {
		for i, k := range jobs {
			errs[i] = d.Wrap("extend lease of job", k.Collection+"/"+k.Name, err)
		}
		return errs
	}
	for _, n := range not {
		if n.Place < 1 || n.Place > len(jobs) {
			continue // not a place of the call
		}
		errs[n.Place-1] = d.NotExtendedError(owner, jobs[n.Place-1], n)
	}
	return errs
}

// NotExtendedError returns the error of job k, whose lease owner asked
// to extend and the statement did not, as n says why: ErrLeaseLost
// naming its holder, or ErrNotFound.
func (d *Dialect) NotExtendedError(owner string, k scheduler.JobKey, n NotExtended) error {
	switch {
	case n.Holder != nil:
		return fmt.Errorf("%s: extend lease of job %q: held by %q, not %q: %w", d.Name, k.Collection+"/"+k.Name, *n.Holder, owner, scheduler.ErrLeaseLost)
	case n.Collection:
		return &scheduler.NotFoundError{Collection: k.Collection, Job: k.Name}
	default:
		return &scheduler.NotFoundError{Collection: k.Collection}
	}
}
