#!/bin/sh
# Interleaved rounds of benchmarks, for a noisy machine: -count repeats each
# sub-benchmark back to back, so a burst of load lands on one contender.
# This runs the whole set ROUNDS times in turn instead (one test binary,
# built once) and summarises the medians with benchstat when it is
# installed (go install golang.org/x/perf/cmd/benchstat@latest).
#
#   bench/rounds.sh ROUNDS PACKAGE BENCHMARK-REGEXP [test flags...]
#   bench/rounds.sh 6 . 'Facade' -test.benchtime 2000x
set -eu
rounds=$1 pkg=$2 re=$3
shift 3
bin=$(mktemp /tmp/rounds-bench.XXXXXX)
out=$(mktemp /tmp/rounds-out.XXXXXX)
trap 'rm -f "$bin" "$out"' EXIT
go test -c -o "$bin" "$pkg"
dir=$(cd "$pkg" && pwd)
for _ in $(seq "$rounds"); do
	(cd "$dir" && "$bin" -test.run '^$' -test.bench "$re" -test.benchmem "$@") >>"$out"
done
if command -v benchstat >/dev/null 2>&1; then
	benchstat -col /impl "$out"
elif [ -x "$(go env GOPATH)/bin/benchstat" ]; then
	"$(go env GOPATH)/bin/benchstat" -col /impl "$out"
else
	grep '^Benchmark' "$out"
fi
