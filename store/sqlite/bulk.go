package sqlite

import (
	"context"
	"encoding/json"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/internal/sqlstore"
)

var (
	_ scheduler.BulkPutter = (*Store)(nil)
	_ scheduler.PutReader  = (*Store)(nil)
)

// GetJobs implements [scheduler.BulkPutter]: one query.
func (s *Store) GetJobs(ctx context.Context, collection string, names []string) ([]*scheduler.JobRecord, error) {
	if err := s.readable(); err != nil {
		return nil, err
	}
	list, err := json.Marshal(names)
	if err != nil {
		return nil, wrap("get jobs of collection", collection, err)
	}
	rows, err := s.db.QueryContext(ctx, "SELECT "+jobCols+" FROM jobs WHERE collection = ? AND name IN (SELECT value FROM json_each(?))", collection, string(list))
	if err != nil {
		return nil, wrap("get jobs of collection", collection, err)
	}
	defer rows.Close()
	var found []*scheduler.JobRecord
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, wrap("get jobs of collection", collection, err)
		}
		found = append(found, j)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("get jobs of collection", collection, err)
	}
	return sqlstore.InOrder(names, found), nil
}

// PutJobs implements [scheduler.BulkPutter]: one write of the writer,
// all of it or none. The quota is decided before the first write, so a
// batch refused for it writes nothing.
func (s *Store) PutJobs(ctx context.Context, collection string, jobs []*scheduler.JobRecord) error {
	if len(jobs) == 0 {
		return nil
	}
	return s.write(ctx, func(tx *wtx) error { return s.d.PutJobs(tx.ctx, tx, collection, jobs) })
}
