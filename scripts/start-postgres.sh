#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the tests of store/postgres.
#
#   eval "$(bash scripts/start-postgres.sh STATE_DIR)"
#   ...                                  # tests read JOBCLOCK_POSTGRES_DSN
#   bash STATE_DIR/postgres.stop         # stops the cluster and removes its files
#
# Installs PostgreSQL from Debian's packages when it is missing, creates a
# cluster as the postgres OS user in STATE_DIR/postgres (no fsync: test data
# only), starts it on a free loopback port and prints
#   export JOBCLOCK_POSTGRES_DSN=postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable
# on stdout. Everything else goes to stderr. Needs root (or the postgres
# user) to run initdb as postgres.
set -euo pipefail

state=${1:?usage: start-postgres.sh STATE_DIR}
mkdir -p "$state"
state=$(cd "$state" && pwd)

log() { printf 'start-postgres: %s\n' "$*" >&2; }

pgbin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

if [ -z "$(pgbin)" ] || [ ! -x "$(pgbin)/initdb" ]; then
	log "installing postgresql from Debian's packages"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y --no-install-recommends postgresql >&2; then
		apt-get update >&2
		apt-get install -y --no-install-recommends postgresql >&2
	fi
fi
bin=$(pgbin)
[ -x "$bin/initdb" ] || { log "initdb not found under /usr/lib/postgresql"; exit 1; }

# A free loopback port: ask the kernel for one.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' 2>/dev/null || true)
if [ -z "$port" ]; then
	for p in $(seq 55432 55532); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
	done
fi
[ -n "$port" ] || { log "no free port found"; exit 1; }

dir=$(mktemp -d "$state/postgres.XXXXXX")
as_pg=()
if [ "$(id -u)" = 0 ]; then
	chown postgres:postgres "$dir"
	# Every parent must be traversable by postgres.
	p=$dir
	while [ "$p" != / ]; do
		p=$(dirname "$p")
		[ -x "$p" ] || chmod o+x "$p"
	done
	as_pg=(runuser -u postgres --)
fi

log "initdb in $dir/data"
"${as_pg[@]}" "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --no-locale --no-sync >"$dir/initdb.log" 2>&1 ||
	{ cat "$dir/initdb.log" >&2; exit 1; }

log "starting on 127.0.0.1:$port"
start=("${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30
	-o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
	start)
"${start[@]}" >&2 || { cat "$dir/server.log" >&2; exit 1; }

for _ in $(seq 1 100); do
	if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then break; fi
	sleep 0.1
done
"$bin/pg_isready" -h 127.0.0.1 -p "$port" >&2

stop="$state/postgres.stop"
{
	echo "#!/usr/bin/env bash"
	echo "# Stops the PostgreSQL cluster started by start-postgres.sh and removes its files."
	printf '%q ' "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop
	echo ">/dev/null 2>&1 || true"
	printf 'rm -rf %q\n' "$dir"
} >"$stop"
chmod +x "$stop"
log "stop it with: bash $stop"

# STATE_DIR/postgres.ctl stop|start stops the server (keeping its files) or
# starts it again on the same port, for tests of what clients do while the
# database is away.
ctl="$state/postgres.ctl"
{
	echo "#!/usr/bin/env bash"
	echo "# Usage: postgres.ctl stop|start: stops the server keeping its files, or starts it again."
	echo 'case "$1" in'
	printf 'stop) '; printf '%q ' "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop; echo ';;'
	printf 'start) '; printf '%q ' "${start[@]}"; echo ';;'
	echo '*) echo "usage: postgres.ctl stop|start" >&2; exit 2 ;;'
	echo 'esac'
} >"$ctl"
chmod +x "$ctl"

echo "export JOBCLOCK_POSTGRES_DSN='postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable'"
