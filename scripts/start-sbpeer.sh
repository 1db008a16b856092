#!/usr/bin/env bash
# start-sbpeer.sh starts testenv/node/sbpeer.js, a local AMQP 1.0 peer that
# speaks enough of Service Bus for azservicebus, on free loopback ports, and
# prints the environment the Go tests read, as `export VAR=value` lines on
# stdout:
#
#   eval "$(scripts/start-sbpeer.sh)"
#   go test ./action/servicebus/...
#   kill "$JOBCLOCK_SBPEER_PID"
#
# Needs node >= 20 and npm; installs testenv/node's locked dependencies
# (npm ci) when they are missing. Logs and the pid file go to
# $JOBCLOCK_TESTENV_RUN (default testenv/run).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
nodedir=$repo/testenv/node
run=${JOBCLOCK_TESTENV_RUN:-$repo/testenv/run}
mkdir -p "$run"

if [ ! -d "$nodedir/node_modules/rhea" ]; then
	echo "start-sbpeer: installing npm dependencies (npm ci in testenv/node)" >&2
	(cd "$nodedir" && npm ci --no-audit --no-fund >&2)
fi

log=$run/sbpeer.log
: >"$log"
node "$nodedir/sbpeer.js" 0 127.0.0.1 0 >"$log" 2>&1 &
pid=$!
echo "$pid" >"$run/sbpeer.pid"

line=
for _ in $(seq 1 200); do # up to 10 s
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "start-sbpeer: sbpeer exited; log:" >&2
		cat "$log" >&2
		exit 1
	fi
	line=$(grep -m1 '"ev":"listening"' "$log" || true)
	[ -n "$line" ] && break
	sleep 0.05
done
if [ -z "$line" ]; then
	echo "start-sbpeer: sbpeer did not start listening within 10 s; log:" >&2
	cat "$log" >&2
	kill "$pid" 2>/dev/null || true
	exit 1
fi
port=$(echo "$line" | sed -n 's/.*"port":\([0-9]*\).*/\1/p')
http=$(echo "$line" | sed -n 's/.*"http":\([0-9]*\).*/\1/p')
echo "start-sbpeer: pid $pid, AMQP on 127.0.0.1:$port, HTTP on 127.0.0.1:$http (log $log)" >&2
echo "export JOBCLOCK_SBPEER_ADDR=127.0.0.1:$port"
echo "export JOBCLOCK_SBPEER_HTTP=http://127.0.0.1:$http"
echo "export JOBCLOCK_SBPEER_PID=$pid"
