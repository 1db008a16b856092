package sqlite_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	scheduler "github.com/jobclock/scheduler"
	"github.com/jobclock/scheduler/store/storetest"
)

// go test -run '^$' -bench . -benchtime 20000x ./store/sqlite/

func BenchmarkClaimRecord(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run("synchronous="+sync, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.db")
			s := openOpts(b, path, sync)
			storetest.BenchmarkClaimRecord(b, []scheduler.Store{s}, 16)
		})
	}
}

func BenchmarkEngine(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bench.db")
	storetest.BenchmarkEngine(b, []scheduler.Store{openOpts(b, path, "FULL")})
}

// BenchmarkClaimDue measures claiming 10 due jobs among n stored ones. Each
// round claims the same 10 jobs again, their previous leases having ended.
func BenchmarkClaimDue(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.db")
			s := openOpts(b, path, "NORMAL")
			if err := s.PutCollection(ctx, &scheduler.CollectionRecord{Name: "big"}); err != nil {
				b.Fatal(err)
			}
			base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
			if err != nil {
				b.Fatal(err)
			}
			// 10 jobs due at base, the others a day later and beyond.
			start := time.Now()
			_, err = db.Exec(`WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ? - 1)
				INSERT INTO jobs (collection, name, definition, state, status, schedule, etag, version, due_at, lease_owner, coll_enabled, slot)
				SELECT 'big', printf('j%07d', i), '{"action":{"type":"Http","request":{"uri":"http://127.0.0.1/","method":"GET"}}}', 'Enabled',
					'{"executionCount":0,"failureCount":0,"faultedCount":0}', '{}', 'e', 1,
					CASE WHEN i < 10 THEN ? ELSE ? + i END, '', 1, i
				FROM n`, n, base.UnixNano(), base.Add(24*time.Hour).UnixNano())
			db.Close()
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

// BenchmarkPutTx: PutJob against PutJobTx in a host's transaction, on a
// store over the host's *sql.DB (synchronous=FULL, the default).
func BenchmarkPutTx(b *testing.B) {
	storetest.BenchmarkPutTx(b, txBackend)
}

// BenchmarkPuts: putting jobs one at a time, from 8 goroutines, in one
// host transaction and in bulk (go test -bench Puts -benchtime 20000x), on
// a store over the host's *sql.DB (synchronous=FULL, the default).
func BenchmarkPuts(b *testing.B) {
	storetest.BenchmarkPuts(b, txBackend(b))
}

func BenchmarkLimiter(b *testing.B) {
	storetest.BenchmarkLimiter(b, openOpts(b, filepath.Join(b.TempDir(), "bench.db"), "FULL"))
}
