package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/action"
	"github.com/jobclock/scheduler/store/postgres"
	"github.com/jobclock/scheduler/store/storetest"
)

// go test -run '^$' -bench . -benchtime 20000x ./store/postgres/

func instances(b *testing.B, n int) []scheduler.Store {
	schema := newSchema(b)
	stores := make([]scheduler.Store, n)
	for i := range stores {
		stores[i] = open(b, schema)
	}
	return stores
}

func BenchmarkClaimRecord(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			storetest.BenchmarkClaimRecord(b, instances(b, n), 16/n)
		})
	}
}

func BenchmarkEngine(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			storetest.BenchmarkEngine(b, instances(b, n))
		})
	}
}

// BenchmarkClaimDue measures claiming 10 due jobs among n stored ones. Each
// round claims the same 10 jobs again, their previous leases having ended.
func BenchmarkClaimDue(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			schema := newSchema(b)
			s := open(b, schema)
			if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "big"}); err != nil {
				b.Fatal(err)
			}
			base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			conn, err := pgx.Connect(ctx, dsn(b))
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			q := pgx.Identifier{schema}.Sanitize()
			_, err = conn.Exec(ctx, `INSERT INTO `+q+`.jobs (collection, name, definition, state, status, schedule, etag, version, due_at, lease_owner, coll_enabled, slot)
				SELECT 'big', 'j' || lpad(i::text, 7, '0'), '{"action":{"type":"Http","request":{"uri":"http://127.0.0.1/","method":"GET"}}}', 'Enabled',
					'{"executionCount":0,"failureCount":0,"faultedCount":0}', '{}', 'e', 1,
					CASE WHEN i < 10 THEN $2::bigint ELSE $3::bigint + i END, '', true, i
				FROM generate_series(0, $1 - 1) AS i`, n, base.UnixNano(), base.Add(24*time.Hour).UnixNano())
			if err == nil {
				_, err = conn.Exec(ctx, "ANALYZE "+q+".jobs")
			}
			conn.Close(ctx)
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("inserted %d jobs in %v", n, time.Since(start))
			now := base
			for b.Loop() {
				got, err := s.ClaimDue(ctx, now, "bench", now.Add(time.Second), 10)
				if err != nil || len(got) != 10 {
					b.Fatalf("ClaimDue = %d jobs, %v; want 10", len(got), err)
				}
				now = now.Add(time.Second)
			}
		})
	}
}

// BenchmarkClaimFew measures claims of up to 100 jobs (the engine's
// usual MaxConcurrency) that find none, or one: what they allocate
// follows the rows returned, not the limit.
func BenchmarkClaimFew(b *testing.B) {
	for _, jobs := range []int{0, 1} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			s := open(b, newSchema(b))
			if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
				b.Fatal(err)
			}
			def := &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://127.0.0.1/", Method: "GET"}}}
			for i := range jobs {
				j := &scheduler.JobRecord{Collection: "c", Name: fmt.Sprintf("j%d", i), Job: def, State: scheduler.JobEnabled, Schedule: scheduler.JobSchedule{DueAt: t0}}
				if err := s.PutJob(ctx, j); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			now := t0
			for b.Loop() {
				got, err := s.ClaimDue(ctx, now, "bench", now.Add(time.Second), 100)
				if err != nil || len(got) != jobs {
					b.Fatalf("ClaimDue = %d jobs, %v; want %d", len(got), err, jobs)
				}
				now = now.Add(time.Second)
			}
		})
	}
}

var _ = postgres.DefaultSchema

// BenchmarkPutTx: PutJob against PutJobTx in a host's transaction.
func BenchmarkPutTx(b *testing.B) {
	storetest.BenchmarkPutTx(b, txBackend)
}

// BenchmarkPuts: putting jobs one at a time, from 8 goroutines, in one
// host transaction and in bulk (go test -bench Puts -benchtime 20000x).
func BenchmarkPuts(b *testing.B) {
	storetest.BenchmarkPuts(b, txBackend(b))
}

func BenchmarkLimiter(b *testing.B) { storetest.BenchmarkLimiter(b, instances(b, 1)[0]) }

// BenchmarkClaimPastLeased measures claims of 50 due jobs that come, in
// the order of the claim's index, after n due jobs that other claims hold
// leased: what a claim of one of several processes draining a burst
// together pays for the attempts in flight of all of them. Each round
// gives its claim back (untimed), so that every claim takes the same jobs.
func BenchmarkClaimPastLeased(b *testing.B) {
	for _, leased := range []int{0, 1_000} {
		b.Run(fmt.Sprintf("leased=%d", leased), func(b *testing.B) {
			schema := newSchema(b)
			s := open(b, schema)
			if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
				b.Fatal(err)
			}
			conn, err := pgx.Connect(ctx, dsn(b))
			if err != nil {
				b.Fatal(err)
			}
			// The leased jobs first by name: all are due at t0.
			q := pgx.Identifier{schema}.Sanitize()
			_, err = conn.Exec(ctx, `INSERT INTO `+q+`.jobs (collection, name, definition, state, status, schedule, etag, version, due_at, lease_owner, lease_until, coll_enabled, slot)
				SELECT 'c', CASE WHEN i < $1 THEN 'a' ELSE 'b' END || lpad(i::text, 7, '0'), '{"action":{"type":"Http","request":{"uri":"http://127.0.0.1/","method":"GET"}}}', 'Enabled',
					'{"executionCount":0,"failureCount":0,"faultedCount":0}', '{}', 'e', 1, $2::bigint,
					CASE WHEN i < $1 THEN 'other' ELSE '' END, CASE WHEN i < $1 THEN $3::bigint END, true, i
				FROM generate_series(0, $1 + 999) AS i`, leased, t0.UnixNano(), t0.Add(time.Hour).UnixNano())
			if err == nil {
				_, err = conn.Exec(ctx, "ANALYZE "+q+".jobs")
			}
			conn.Close(ctx)
			if err != nil {
				b.Fatal(err)
			}
			now := t0.Add(time.Second)
			for b.Loop() {
				got, err := s.ClaimDueBy(ctx, scheduler.ClaimRequest{Now: now, DueBy: now, Owner: "bench", LeaseUntil: now.Add(time.Minute), Limit: 50})
				if err != nil || len(got) != 50 || got[0].LeaseOwner != "bench" || got[0].Name[0] != 'b' {
					b.Fatalf("ClaimDueBy = %d jobs, %v; want 50 of those without a lease", len(got), err)
				}
				b.StopTimer()
				for i, err := range s.GiveBack(ctx, "bench", got) {
					if err != nil {
						b.Fatalf("GiveBack(%s) = %v", got[i].Name, err)
					}
				}
				b.StartTimer()
			}
		})
	}
}

// BenchmarkRecordBatch measures RecordBatch of 50 outcomes, each with one
// history entry, as the engine records a firing window's occurrences at a
// steady rate: the definition kept, the status and schedule moved on. Each
// round claims the 50 jobs again (untimed). It reports the process's time
// per outcome as ns/outcome.
func BenchmarkRecordBatch(b *testing.B) {
	const n = 50
	s := open(b, newSchema(b))
	if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "c"}); err != nil {
		b.Fatal(err)
	}
	def := &scheduler.Job{Action: action.Action{Type: action.HTTP, Request: &action.HTTPRequest{URI: "http://127.0.0.1/", Method: "GET"}}}
	for i := range n {
		j := &scheduler.JobRecord{Collection: "c", Name: fmt.Sprintf("j%d", i), Job: def, State: scheduler.JobEnabled,
			Schedule: scheduler.JobSchedule{DueAt: t0, Anchor: t0}}
		if err := s.PutJob(ctx, j); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	now := t0
	batch := make([]scheduler.RecordRequest, n)
	for b.Loop() {
		b.StopTimer()
		got, err := s.ClaimDue(ctx, now, "bench", now.Add(time.Minute), n)
		if err != nil || len(got) != n {
			b.Fatalf("ClaimDue = %d jobs, %v; want %d", len(got), err, n)
		}
		for i, j := range got {
			start := now.Add(time.Duration(i) * 17 * time.Microsecond)
			end := start.Add(3 * time.Millisecond)
			h := scheduler.HistoryEntry{Collection: j.Collection, Job: j.Name, ActionName: scheduler.MainAction,
				Status: scheduler.StatusCompleted, ExpectedExecutionTime: j.Schedule.DueAt, StartTime: start, EndTime: end,
				RepeatCount: j.Schedule.Occurrences + 1, ExecutionTag: fmt.Sprintf("%016x", now.UnixNano()+int64(i))}
			j.Schedule.Occurrences++
			j.Schedule.Counted++
			j.Schedule.LastSucceeded = end
			j.Status.ExecutionCount++
			j.Status.LastExecutionTime = &start
			j.Schedule.DueAt = now.Add(time.Second)
			j.Updated = end
			batch[i] = scheduler.RecordRequest{Job: j, History: []scheduler.HistoryEntry{h}, KeepDefinition: true}
		}
		b.StartTimer()
		for i, err := range s.RecordBatch(ctx, "bench", batch) {
			if err != nil {
				b.Fatalf("RecordBatch: element %d: %v", i, err)
			}
		}
		now = now.Add(time.Second)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/outcome")
}
