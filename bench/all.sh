#!/usr/bin/env bash
# Runs every benchmark whose figures BENCHMARKS.md reports, once, in one go,
# on one machine, and prints markdown on stdout: the commit, date, processors,
# Go and PostgreSQL versions at the top, then one part per benchmark command,
# each with the BENCHMARKS.md sections it feeds, the command, the load average
# before and after it, how long it took and its figures (the `go test -bench`
# lines in a code block; bench/river's tables as they are). Progress goes to
# stderr. It starts the Service Bus peer and a PostgreSQL server as
# scripts/test.sh does and stops them at the end, and a fresh Azurite for the
# executors' part alone (see the part); bench/river/run.sh starts (and
# restarts durable) a server of its own.
#
#   bash bench/all.sh > /tmp/all.md                  # everything, about 40-45 minutes on 2 cores
#   QUICK=1 bash bench/all.sh > /tmp/quick.md        # small sizes: checks the wiring in a few minutes
#   PROFILES=/tmp/prof bash bench/all.sh > /tmp/all.md
#   MILLION10M=1 bash bench/all.sh > /tmp/all.md     # bench/million with 10M jobs as well
#   LIST=1 bash bench/all.sh                         # only print the commands, one a line
#
# PROFILES=DIR (outside the repository) writes CPU profiles of River's and
# jobclock's burst (bench/river's -cpuprofile, every window of run.sh) and of
# `jobclock serve` during each load run (perf record: serve is another
# process and has no profile flag), and prints the top of each.
# MILLION10M=1 adds bench/million with 10,000,000 jobs: about 10 GiB of disk
# for the database (1M jobs made a 1 GiB schema) and about 20 minutes more
# (the 1M put ran at 12-17k jobs/s).
#
# Cuts, to finish within 45 minutes on a 2-core machine:
#   - every command runs once: -count 1 where BENCHMARKS.md's sections say
#     -count 2 or 3 (recurrence in bench/ keeps -count 3: it takes seconds);
#   - bench/river: RUNS=1 (BENCHMARKS.md's tables are ranges over 3 runs), all
#     scenarios, N=20,000, PostgreSQL fast and durable and SQLite;
#   - bench/million: 10k and 1M jobs; not 100k; 10M only with MILLION10M=1;
#   - dashboard: -benchtime 10x (BENCHMARKS.md: 20x; the search pages take
#     up to 2 s each);
#   - store/sqlite: ClaimDue, ClaimRecord and Engine only (`-bench .` at
#     20000x would also run the puts at 20000x; the puts run at their own
#     sizes);
#   - not re-run at all: the before/after pairs of test binaries of older
#     commits (the sections marked preliminary: this run gives today's side),
#     callgrind instruction counts, the cold build of cmd/jobclock (~100 CPU
#     seconds) and pg_stat_statements readings.
# Estimated duration on a quiet machine, from each part's size and from
# timing two parts on the shared machine (bench/engine: 14 min at a load
# average of 10-12, 5 min of CPU; bench/river's burst and put-one on SQLite:
# 2.9 min at 12), so preliminary: bench/engine ~6 min, bench/river ~15 min
# (~5 per setting), bench/million ~4 min, bench/load ~3 min, the stores' and
# puts' benchmarks ~7 min, dashboard ~1 min, bench/size and the command
# ~2.5 min, executors ~1 min, the root module's ~3 min: about 40-45 minutes.
#
# A part that fails is reported as failed, with the end of its output, and
# the run goes on; the exit status is 1 when any part failed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

quick=${QUICK:-}
list=${LIST:-}
profiles=${PROFILES:-}
if [ -n "$profiles" ]; then
	mkdir -p "$profiles"
	profiles=$(cd "$profiles" && pwd)
	case "$profiles/" in
	"$root"/*)
		echo "all.sh: PROFILES must be outside the repository" >&2
		exit 2
		;;
	esac
fi

state=$(mktemp -d /tmp/jobclock-all.XXXXXX)
chmod 755 "$state"
export JOBCLOCK_TESTENV_RUN=$state
# The parts' own scratch files (a binary built to be measured).
export JOBCLOCK_ALL_DIR=$state
cleanup() {
	for f in "$state"/*.stop; do
		[ -e "$f" ] && bash "$f" >/dev/null 2>&1
	done
	for f in "$state"/*.pid; do
		[ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null
	done
	rm -rf "$state"
}
trap cleanup EXIT

progress() { printf 'all.sh: %s\n' "$*" >&2; }

if [ -z "$list" ]; then
	for svc in sbpeer postgres; do
		progress "starting $svc"
		if ! env_lines=$(bash "scripts/start-$svc.sh" "$state"); then
			echo "all.sh: scripts/start-$svc.sh failed" >&2
			exit 1
		fi
		eval "$env_lines"
	done
	export JOBCLOCK_POSTGRES_DSN
fi

# q FULL QUICK: the full command, or the quick one under QUICK=1.
q() { if [ -n "$quick" ]; then printf '%s' "$2"; else printf '%s' "$1"; fi; }

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

failed=()
nparts=0
# part SECTIONS MODE COMMAND: runs COMMAND (a bash command line, run from
# the repository's root) and prints it as a markdown section. SECTIONS names
# the BENCHMARKS.md sections it gives figures for. MODE says what of its
# output to print: bench (the lines of `go test -bench`), text (all of its
# stdout) or markdown (stdout as it is, not in a code block); the rest of
# the output goes to a log, whose end is printed when the command fails.
# Under LIST=1 it only prints COMMAND.
part() {
	local sections=$1 mode=$2 cmd=$3
	if [ -n "$list" ]; then
		printf '%s\n' "$cmd"
		return
	fi
	nparts=$((nparts + 1))
	local out=$state/part$nparts.out log=$state/part$nparts.log
	progress "part $nparts: $cmd"
	printf '\n## %d. %s\n\n`%s`\n\n' "$nparts" "$sections" "$cmd"
	local before t0=$SECONDS rc=0
	before=$(loadavg)
	if [ "$mode" = bench ]; then
		bash -c "$cmd" >"$out" 2>&1 || rc=$?
		cp "$out" "$log"
	else
		bash -c "$cmd" >"$out" 2>"$log" || rc=$?
	fi
	printf 'Load average before: %s; after: %s; %d s.\n\n' "$before" "$(loadavg)" $((SECONDS - t0))
	case $mode in
	bench)
		printf '```\n'
		grep -E '^(Benchmark|ok |FAIL|--- |panic:|pkg: |    )' "$out"
		printf '```\n'
		;;
	text) printf '```\n%s\n```\n' "$(cat "$out")" ;;
	markdown) cat "$out" ;;
	esac
	if [ $rc -ne 0 ]; then
		failed+=("$nparts")
		printf '\n**Failed** (exit status %d). The end of its output:\n\n```\n%s\n```\n' "$rc" "$(tail -n 40 "$log")"
	fi
}

[ -z "$list" ] && cat <<EOF
# jobclock benchmarks, one run

- commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')
- date: $(date -u +'%F %T UTC')
- processors (nproc): $(nproc); memory: $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)
- $(go version)
- PostgreSQL: $("$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)/postgres" --version)
- load average at the start: $(loadavg)
- mode: $(q 'full' 'QUICK=1 (small sizes: for checking the script, not for figures)')

Every part below ran once, in this order, on this machine; the peers (robfig/cron, gocron, River) ran in the same
parts as jobclock.
EOF

# The engine in memory against robfig/cron and gocron; also the heap kept
# per job at 1M (Register/jobclock/1000000).
part 'Engine: against robfig/cron v3 and gocron v2; Keeping no history; Seconds: 1,000 jobs every second; heap kept per job at 1M (the register rows); the engine rows of the before/after sections' bench \
	"$(q "cd bench && go test -run '^\$' -bench . -benchtime 1x ./engine" \
		"cd bench && go test -run '^\$' -bench 'Register/jobclock/100000\$|Burst100k/(jobclock|robfig)\$' -benchtime 1x ./engine")"
if [ -z "$list" ]; then
	heap=$(awk '/^BenchmarkRegister\/jobclock\/1000000-/ { for (i = 1; i < NF; i++) if ($(i + 1) == "B/job") print $i }' "$state/part$nparts.out")
	[ -n "$heap" ] && heap="$heap B" || heap="not measured$(q '' ': QUICK registers 100k jobs')"
	printf '\nHeap kept per job at 1M jobs: %s (limit 400 B).\n' "$heap"
fi

part 'Recurrence: Rule.Next against robfig/cron v3; Cron specs' bench \
	"$(q "cd bench && go test -run '^\$' -bench . -benchtime 20000x -count 3 ./recurrence/" \
		"cd bench && go test -run '^\$' -bench . -benchtime 10x ./recurrence/")"

part 'Rule.Next near a clock change; Spreading; Exclusion calendars; Moving occurrences off excluded days' bench \
	"go test -run '^\$' -bench . -benchtime $(q 20000x 10x) ./recurrence/"

part 'Parsing and the REST API (ParseJob, PutJob of a Go value); the parse rows of the before/after sections' bench \
	"go test -run '^\$' -bench 'BenchmarkParseJob\$|PutJobGoValue' -benchtime $(q 2000x 10x) ."

part 'The Go front door: typed handlers (BenchmarkAttempt, SealedAttempt)' bench \
	"go test -run '^\$' -bench 'BenchmarkAttempt|SealedAttempt' -benchtime $(q 10x 1x) ."

part 'Run policies, pauses, backfill and health (StepAfterAWeek)' bench \
	"go test -run '^\$' -bench StepAfterAWeek -benchtime $(q 200x 1x) ."

part 'Parsing and the REST API (PUT and GET over httpapi); Per-action timeout and failure handling' bench \
	"go test -run '^\$' -bench . -benchtime $(q 2000x 10x) ./httpapi/"

part 'Stores: SQLite and PostgreSQL end to end, the store loop, claims among 1k and 1M jobs' bench \
	"$(q "go test -run '^\$' -bench 'ClaimDue|ClaimRecord|Engine' -benchtime 20000x ./store/sqlite/ && go test -run '^\$' -bench 'ClaimRecord|Engine' -benchtime 20000x ./store/postgres/ && go test -run '^\$' -bench ClaimDue -benchtime 2000x ./store/postgres/" \
		"go test -run '^\$' -bench 'ClaimDue/jobs=1000\$|ClaimRecord|Engine' -benchtime 100x ./store/sqlite/ ./store/postgres/")"

part 'Stores: the memory store' bench \
	"go test -run '^\$' -bench 'ClaimRecordBatch|GetJob|ListJobs|BurstClaimComplete' -benchtime $(q 100000x 100x) ./store/memory/ && go test -run '^\$' -bench Prune -benchtime $(q 500x 5x) ./store/memory/"

part 'Putting jobs: one at a time, 8 goroutines, one host transaction, in bulk; The Go front door: transactional puts' bench \
	"go test -run '^\$' -bench 'Puts/(one|parallel8|tx)' -benchtime $(q 5000x 20x) ./store/postgres/ ./store/sqlite/ && go test -run '^\$' -bench Puts/bulk -benchtime $(q 20000x 100x) ./store/postgres/ ./store/sqlite/ ./store/memory/ && go test -run '^\$' -bench PutTx -benchtime $(q 1000x 10x) ./store/sqlite/ ./store/postgres/"

part 'Limits toward a target (the limiter per occurrence)' bench \
	"go test -run '^\$' -bench Limiter -benchtime $(q 2000x 10x) ./store/memory/ ./store/postgres/ ./store/sqlite/"

# Azurite deletes the extents of deleted messages once a minute, one at a
# time, sorting its index of extents again for each: after the thousands of
# messages the storage queue benchmarks send, that stalls every request for
# minutes, at a whole core. So the executors' part gets an Azurite of its
# own, started just before it (its first sweep comes a minute later, after
# the part) and stopped just after, and no later part shares a core with it.
if [ -z "$list" ]; then
	progress "starting azurite"
	if ! env_lines=$(bash scripts/start-azurite.sh "$state"); then
		echo "all.sh: scripts/start-azurite.sh failed" >&2
		exit 1
	fi
	eval "$env_lines"
fi
part 'Executors' bench \
	"go test -run '^\$' -bench Execute -benchtime $(q 2000x 10x) -benchmem ./action/http/ && go test -run '^\$' -bench PfxIterations -benchtime $(q 20x 1x) ./action/http/ && go test -run '^\$' -bench . -benchtime $(q 2s 10x) ./action/storagequeue/ ./action/servicebus/ && go test -run '^\$' -bench BenchmarkExecute -benchtime $(q 1s 10x) ./action/"
if [ -z "$list" ]; then
	# Azurite finishes a sweep before it ends on SIGTERM.
	kill "$JOBCLOCK_AZURITE_PID" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$JOBCLOCK_AZURITE_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$JOBCLOCK_AZURITE_PID" 2>/dev/null
	rm -f "$state/azurite.pid"
fi

part 'Dashboard pages' bench \
	"go test -run '^\$' -bench . -benchtime $(q 10x 1x) ./dashboard/"

part 'What an import costs' bench \
	"$(q "cd bench && go test -run '^\$' -bench . -benchtime 1x ./size" \
		"cd bench && go test -run '^\$' -bench 'BinarySize/(core|hello)\$' -benchtime 1x ./size")"

part 'The jobclock command without OpenTelemetry'"'"'s exporters (packages and binary; not the cold build)' text \
	"go list -deps ./cmd/jobclock | wc -l | sed 's/^/packages in the build: /' && go list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' ./cmd/jobclock | grep -c . | sed 's/^/of them outside the standard library: /' && go build -o \"\$JOBCLOCK_ALL_DIR/jobclock-size\" ./cmd/jobclock && stat -c 'binary: %s bytes' \"\$JOBCLOCK_ALL_DIR/jobclock-size\""

million() { # million JOBS
	part "A million jobs in PostgreSQL: $1 jobs" text \
		"cd bench && go run ./million -postgres \"\$JOBCLOCK_POSTGRES_DSN\" -jobs $1$( [ "$1" -lt 10000 ] && printf ' -due %d' "$1")"
}
if [ -n "$quick" ]; then
	million 2000
else
	million 10000
	million 1000000
	[ -n "${MILLION10M:-}" ] && million 10000000
fi

# The load runs. With PROFILES, serve runs under perf record: a wrapper
# given to -jobclock execs perf with the command built here.
loadrun() { # loadrun NAME [FLAGS]
	local name=$1 flags=${2:-}
	local small
	small=$(q '' ' -jobs 500 -rate 250 -clients 10 -grace 10s')
	if [ -n "$profiles" ] && [ -z "$list" ]; then
		if [ ! -x "$state/jobclock" ]; then
			go build -o "$state/jobclock" ./cmd/jobclock || return
		fi
		printf '#!/bin/sh\nexec perf record -F 499 -g -o %s -- %s "$@"\n' \
			"$profiles/load-$name.perf.data" "$state/jobclock" >"$state/jobclock-perf-$name"
		chmod +x "$state/jobclock-perf-$name"
		flags="$flags -jobclock $state/jobclock-perf-$name"
	fi
	part "Load: jobclock serve under API clients while jobs fire ($name)" text \
		"cd bench && go run ./load$small$flags"
}
loadrun sqlite
loadrun postgres ' -postgres "$JOBCLOCK_POSTGRES_DSN"'

part 'River on the same database (all scenarios; PostgreSQL fast and durable, SQLite); Steady firing; Cheaper puts' markdown \
	"$(q '' 'N=200 SCENARIOS=burst,put-one,put-bulk ')RUNS=1$( [ -n "$profiles" ] && printf ' PROFILES=%s/river' "$profiles") bash bench/river/run.sh"

[ -n "$list" ] && exit 0

if [ -n "$profiles" ]; then
	printf '\n## Profiles\n\nFiles in %s (not in the repository).\n' "$profiles"
	for f in "$profiles"/river/*.burst.*.cpu; do
		[ -e "$f" ] || continue
		printf '\n`go tool pprof -top -nodecount 25 %s`\n\n```\n%s\n```\n' "$f" "$(go tool pprof -top -nodecount 25 "$f" 2>&1)"
	done
	for f in "$profiles"/load-*.perf.data; do
		[ -e "$f" ] || continue
		printf '\n`perf report -i %s --stdio --no-children -g none --sort symbol --percent-limit 1`\n\n```\n%s\n```\n' "$f" \
			"$(perf report -i "$f" --stdio --no-children -g none --sort symbol --percent-limit 1 2>/dev/null |
			grep -E '^ +[0-9.]+%' | sed -E 's/[[:space:]]+-[[:space:]]+-[[:space:]]*$//' | head -40)"
	done
fi

printf '\nLoad average at the end: %s.\n' "$(loadavg)"
if [ ${#failed[@]} -gt 0 ]; then
	printf '\n**Parts that failed: %s.**\n' "${failed[*]}"
	exit 1
fi
