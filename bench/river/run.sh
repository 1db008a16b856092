#!/usr/bin/env bash
# Produces the whole "River on the same database" table of BENCHMARKS.md in
# one go: jobclock against River at its defaults and tuned, on a PostgreSQL
# server started for the run, first with the settings of
# scripts/start-postgres.sh (fsync, synchronous_commit and full_page_writes
# off: test data only), then restarted with the durable settings (all three
# on), then on SQLite files (WAL, synchronous=FULL). Each table's cells are
# ranges over RUNS runs; the sides take turns within a run. Progress goes to
# stderr, the markdown tables to stdout.
#
#   bash bench/river/run.sh > /tmp/river.md
#   RUNS=1 N=2000 SCENARIOS=burst,steady bash bench/river/run.sh
#   PROFILES=/tmp/river-prof bash bench/river/run.sh   # CPU profiles of every measured window
#
# Needs root (or the postgres user) to start PostgreSQL, as the tests do.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-3}
n=${N:-20000}
scenarios=${SCENARIOS:-all}

state=$(mktemp -d /tmp/jobclock-river.XXXXXX)
chmod 755 "$state"
cleanup() {
	[ -e "$state/postgres.stop" ] && bash "$state/postgres.stop" >/dev/null 2>&1 || true
	rm -rf "$state"
}
trap cleanup EXIT

go build -o "$state/river" ./river

run() { # run STORE LABEL [flags...]
	local store=$1 label=$2
	shift 2
	local prof=()
	if [ -n "${PROFILES:-}" ]; then
		mkdir -p "$PROFILES"
		prof=(-cpuprofile "$PROFILES/$label" -memprofile "$PROFILES/$label")
	fi
	printf '\n### %s\n\n' "$label"
	"$state/river" -store "$store" -runs "$runs" -n "$n" -scenario "$scenarios" "${prof[@]}" "$@"
}

eval "$(bash ../scripts/start-postgres.sh "$state")"
dsn=$JOBCLOCK_POSTGRES_DSN
run postgres postgres-fast -dsn "$dsn"

# The same server restarted durable: every commit waits for its WAL to
# reach the disk.
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
data=$(ls -d "$state"/postgres.*/data)
port=${dsn##*127.0.0.1:}
port=${port%%/*}
as_pg=()
[ "$(id -u)" = 0 ] && as_pg=(runuser -u postgres --)
"${as_pg[@]}" "$bin/pg_ctl" -D "$data" -l "$(dirname "$data")/server.log" -m fast -w -t 60 restart \
	-o "-p $port -k $(dirname "$data") -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=on -c synchronous_commit=on -c full_page_writes=on" >&2
run postgres postgres-durable -dsn "$dsn"

scenarios=${scenarios//instances,/}
scenarios=${scenarios//,instances/}
run sqlite sqlite
