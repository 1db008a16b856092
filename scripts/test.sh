#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs and starts what the
# tests need (the local test peers from npm, PostgreSQL and Chromium from
# Debian's packages), checks formatting, then, in every module of the
# workspace (go.work: the library, and the modules that keep heavier
# dependencies out of its go.mod), runs vet, staticcheck and every
# package's tests with the race detector; the benchmark module's tests run
# once, without it. staticcheck runs at a pinned version (STATICCHECK
# overrides the module@version to run).
#
# PostgreSQL and Chromium are installed with apt-get, which needs root (or
# the packages installed already); the npm peers need node >= 20 and npm.
#
#   bash scripts/test.sh            # everything
#   bash scripts/test.sh ./recurrence/... ./telemetry/...   # only the packages given
#   bash scripts/test.sh -h         # this text
#
# Given packages, the script still checks gofmt, vet and staticcheck in
# every module, and installs and starts the services, before it runs the
# tests of those packages alone: any other arguments go to go test.
#
# With CI=true a test that needs a service fails when the service is missing.
set -euo pipefail
case "${1:-}" in
-h | -help | --help)
	sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p;}' "$0"
	exit 0
	;;
esac
cd "$(dirname "$0")/.."

state=$(mktemp -d /tmp/jobclock-test.XXXXXX)
chmod 755 "$state"
# The npm-based peers put their logs and pid files here.
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

step() { printf '\n== %s\n' "$*"; }

step "toolchain: $(go version)"

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

# The modules of the workspace, as paths from the root ("." first).
modules=()
while IFS= read -r dir; do
	modules+=(".${dir#"$PWD"}")
done < <(go list -m -f '{{.Dir}}')

# Some tests build programs outside the workspace (GOWORK=off, GOPROXY=off:
# the README's Go snippets, bench/size's programs) against a module's own
# go.mod, whose versions may differ from the workspace's: fetch them first.
for m in "${modules[@]}"; do
	step "go mod download ($m, outside the workspace)"
	(cd "$m" && GOWORK=off go mod download)
done

for m in "${modules[@]}"; do
	step "go vet ($m)"
	(cd "$m" && go vet ./...)
done

staticcheck=${STATICCHECK:-honnef.co/go/tools/cmd/staticcheck@v0.8.2}
for m in "${modules[@]}"; do
	step "staticcheck $staticcheck ($m)"
	(cd "$m" && go run "$staticcheck" ./...)
done

# Services. Each start script takes the state directory, starts its service
# on a free loopback port, leaves a .pid or .stop file there and prints the
# export lines the tests read.
for svc in azurite sbpeer postgres; do
	script=scripts/start-$svc.sh
	if [ -f "$script" ]; then
		step "start $svc"
		exports=$(bash "$script" "$state")
		echo "$exports"
		eval "$exports"
	fi
done

# The dashboard's browser tests drive headless Chromium from Debian's
# package; they fail without it when CI=true.
if ! command -v chromium >/dev/null 2>&1; then
	step "install chromium"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y --no-install-recommends chromium; then
		apt-get update && apt-get install -y --no-install-recommends chromium ||
			echo "test.sh: could not install chromium; the browser tests will skip (or fail with CI=true)" >&2
	fi
fi

if [ $# -gt 0 ]; then
	step "go test -race $*"
	go test -race -count=1 -timeout 20m "$@"
	exit 0
fi

for m in "${modules[@]}"; do
	if [ "$m" = ./bench ]; then
		step "go test ($m: the benchmarks' own tests, once)"
		(cd "$m" && go test -count=1 -timeout 10m ./...)
		continue
	fi
	step "go test -race ($m)"
	(cd "$m" && go test -race -count=1 -timeout 20m ./...)
done
