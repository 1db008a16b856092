package main

// The jobclock side of every put scenario, one function per way of putting.

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	scheduler "github.com/jobclock/scheduler"
)

// putJobclock puts job i due at due[i] the way how says.
func putJobclock(ctx context.Context, j *jobclockSide, how putMode, due []time.Time, probe func(int)) error {
	switch how {
	case putOne:
		return putJobclockOne(ctx, j, due, probe)
	case putEight:
		return putJobclockParallel(ctx, j, due, 1)
	case putSetup:
		return putJobclockParallel(ctx, j, due, collections)
	case putTx:
		return putJobclockTx(ctx, j, due, probe)
	case putBulk:
		return putJobclockBulk(ctx, j, due)
	case putBulkFast:
		return errNotAvailable
	}
	return fmt.Errorf("jobclock: unknown put mode %q", how)
}

// putJobclockOne puts the jobs one at a time with PutJob into collection c0.
func putJobclockOne(ctx context.Context, j *jobclockSide, due []time.Time, probe func(int)) error {
	for i, d := range due {
		if probe != nil {
			probe(i)
		}
		if _, err := j.s.PutJob(ctx, "c0", jobName(i), j.job(i, d), nil); err != nil {
			return fmt.Errorf("jobclock: put job %d: %w", i, err)
		}
	}
	if probe != nil {
		probe(len(due))
	}
	return nil
}

// putJobclockParallel puts the jobs with PutJob from 8 goroutines, into
// collections c0 to c{colls-1} (goroutine w into c{w mod colls}).
func putJobclockParallel(ctx context.Context, j *jobclockSide, due []time.Time, colls int) error {
	return parallel(len(due), func(w, i int) error {
		if _, err := j.s.PutJob(ctx, "c"+strconv.Itoa(w%colls), jobName(i), j.job(i, due[i]), nil); err != nil {
			return fmt.Errorf("jobclock: put job %d: %w", i, err)
		}
		return nil
	})
}

// putJobclockTx puts every job with PutJobTx inside one transaction of the
// host's, and commits it.
func putJobclockTx(ctx context.Context, j *jobclockSide, due []time.Time, probe func(int)) error {
	put := func(tx any) error {
		for i, d := range due {
			if probe != nil {
				probe(i)
			}
			if _, err := j.s.PutJobTx(ctx, tx, "c0", jobName(i), j.job(i, d), nil); err != nil {
				return fmt.Errorf("jobclock: put job %d in a transaction: %w", i, err)
			}
		}
		return nil
	}
	if j.pool != nil {
		tx, err := j.pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		if err := put(tx); err != nil {
			return err
		}
		if probe != nil {
			probe(len(due))
		}
		if err := tx.Commit(ctx); err != nil {
			return err
		}
	} else {
		tx, err := j.db.BeginTx(ctx, &sql.TxOptions{})
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := put(tx); err != nil {
			return err
		}
		if probe != nil {
			probe(len(due))
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// putJobclockBulk puts every job in one batch with PutJobs into collection
// c0, as River's InsertMany inserts them in one call.
func putJobclockBulk(ctx context.Context, j *jobclockSide, due []time.Time) error {
	batch := make([]scheduler.JobPut, len(due))
	for i, d := range due {
		batch[i] = scheduler.JobPut{Name: jobName(i), Job: j.job(i, d)}
	}
	if _, err := j.s.PutJobs(ctx, "c0", batch, nil); err != nil {
		return fmt.Errorf("jobclock: put %d jobs in one batch: %w", len(batch), err)
	}
	return nil
}
