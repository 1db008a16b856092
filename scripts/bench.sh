#!/usr/bin/env bash
# Runs every benchmark that BENCHMARKS.md reports, once, in one go, with the
# services they need (Azurite, the Service Bus peer, PostgreSQL) started as
# scripts/test.sh starts them. Output goes to stdout; keep it to compare.
#
#   bash scripts/bench.sh > bench.txt
set -euo pipefail
cd "$(dirname "$0")/.."

state=$(mktemp -d /tmp/jobclock-bench.XXXXXX)
chmod 755 "$state"
export JOBCLOCK_TESTENV_RUN=$state
cleanup() {
	for f in "$state"/*.stop; do
		[ -e "$f" ] && bash "$f" >/dev/null 2>&1 || true
	done
	for f in "$state"/*.pid; do
		[ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
	done
	rm -rf "$state"
}
trap cleanup EXIT
for svc in azurite sbpeer postgres; do
	eval "$(bash "scripts/start-$svc.sh" "$state")"
done

run() { printf '\n== %s\n' "$*"; "$@" 2>&1 | grep -E '^(Benchmark|ok|FAIL|---|jobclock serve|setup:|op |put |get |list |history |occurrences:|start lateness|    )' || true; }

echo "== $(go version); $(nproc) CPUs; $(date -u +%FT%TZ); $(git rev-parse --short HEAD)"
(cd bench && run go test -run '^$' -bench . -benchtime 1x ./engine)
(cd bench && run go test -run '^$' -bench . -benchtime 20000x -count 3 ./recurrence/)
(cd bench && run go test -run '^$' -bench . -benchtime 1x ./size)
run go test -run '^$' -bench . -benchtime 20000x ./recurrence/
run go test -run '^$' -bench 'BenchmarkParseJob$|PutJobGoValue' -benchtime 2000x -count 3 .
run go test -run '^$' -bench 'BenchmarkAttempt|SealedAttempt' -benchtime 10x -count 2 .
run go test -run '^$' -bench . -benchtime 2000x -count 3 ./httpapi/
run go test -run '^$' -bench . -benchtime 20000x ./store/sqlite/
run go test -run '^$' -bench 'ClaimRecord|Engine' -benchtime 20000x ./store/postgres/
run go test -run '^$' -bench ClaimDue -benchtime 2000x ./store/postgres/
run go test -run '^$' -bench PutTx -benchtime 1000x -count 3 ./store/sqlite/ ./store/postgres/
run go test -run '^$' -bench 'ClaimRecordBatch|GetJob|ListJobs|BurstClaimComplete' -benchtime 100000x ./store/memory/
run go test -run '^$' -bench Prune -benchtime 500x ./store/memory/
run go test -run '^$' -bench Execute -benchtime 2000x -benchmem ./action/http/
run go test -run '^$' -bench PfxIterations -benchtime 20x ./action/http/
run go test -run '^$' -bench . -benchtime 2s ./action/storagequeue/ ./action/servicebus/
run go test -run '^$' -bench BenchmarkExecute ./action/
run go test -run '^$' -bench . -benchtime 20x ./dashboard/
(cd bench && run go run ./load)
(cd bench && run go run ./load -postgres "$JOBCLOCK_POSTGRES_DSN")
