#!/usr/bin/env bash
# start-azurite.sh starts Azurite's queue service (in memory, on a free
# loopback port) for the storage queue tests and prints the environment the
# Go tests read, as `export VAR=value` lines on stdout:
#
#   eval "$(scripts/start-azurite.sh)"
#   go test ./action/storagequeue/...
#   kill "$JOBCLOCK_AZURITE_PID"
#
# Needs node >= 20 and npm; installs testenv/node's locked dependencies
# (npm ci) when they are missing. Logs and the pid file go to
# $JOBCLOCK_TESTENV_RUN (default testenv/run).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
nodedir=$repo/testenv/node
run=${JOBCLOCK_TESTENV_RUN:-$repo/testenv/run}
mkdir -p "$run"

if [ ! -x "$nodedir/node_modules/.bin/azurite-queue" ]; then
	echo "start-azurite: installing npm dependencies (npm ci in testenv/node)" >&2
	(cd "$nodedir" && npm ci --no-audit --no-fund >&2)
fi

log=$run/azurite.log
: >"$log"
# In-memory mode writes nothing to disk; --location must not be given with it.
"$nodedir/node_modules/.bin/azurite-queue" --queueHost 127.0.0.1 --queuePort 0 \
	--inMemoryPersistence --disableTelemetry --extentMemoryLimit 256 >"$log" 2>&1 &
pid=$!
echo "$pid" >"$run/azurite.pid"

port=
for _ in $(seq 1 400); do # up to 20 s
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "start-azurite: azurite exited; log:" >&2
		cat "$log" >&2
		exit 1
	fi
	port=$(sed -n 's|.*Azurite Queue service successfully listens on http://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$log" | head -n1)
	[ -n "$port" ] && break
	sleep 0.05
done
if [ -z "$port" ]; then
	echo "start-azurite: azurite did not report its port within 20 s; log:" >&2
	cat "$log" >&2
	kill "$pid" 2>/dev/null || true
	exit 1
fi
echo "start-azurite: pid $pid listening on 127.0.0.1:$port (log $log)" >&2
echo "export JOBCLOCK_AZURITE_QUEUE_ENDPOINT=http://127.0.0.1:$port/devstoreaccount1/"
echo "export JOBCLOCK_AZURITE_PID=$pid"
