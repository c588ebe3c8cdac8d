#!/bin/sh
# Instructions per operation of benchmarks, counted by callgrind, for a
# machine too busy for times to mean much. Each benchmark runs twice under
# callgrind, for 1 and for N+1 iterations; the difference over N is what one
# iteration costs, setup and process start cancelled out.
#
#   bench/callgrind.sh PACKAGE N BENCHMARK...
#   bench/callgrind.sh . 200 'FacadeHTTP/impl=bare$' 'FacadeHTTP/impl=HTTP$'
#
# By default the whole process is counted, so the runtime's background
# threads (the collector's workers, the scavenger) add a share that varies
# by some tens of instructions an operation between runs and binaries. With
# CALLGRIND_FN set to a function's name (callgrind's pattern, * a wildcard)
# only the instructions run inside that function and what it calls are
# counted, on the thread that calls it, which leaves the runtime's threads
# out:
#
#   CALLGRIND_FN='*retry.(*Transport).RoundTrip' bench/callgrind.sh ./retry 2000 'PacedResponse/draft-8_fields$'
set -eu
pkg=$1 n=$2
shift 2
bin=$(mktemp /tmp/callgrind-bench.XXXXXX)
trap 'rm -f "$bin"' EXIT
go test -c -o "$bin" "$pkg"
# Valgrind sometimes aborts on the Go runtime's threads; such a run prints
# no count and is run again. Its usual cause is the signal the runtime
# sends to preempt a goroutine (callgrind asserts on it while another
# thread is in a system call), so asynchronous preemption is turned off:
# with GOMAXPROCS=1 it would only interleave the benchmark with the
# runtime's own goroutines anyway.
fn=${CALLGRIND_FN:-}
count() { # benchmark iterations
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		c=$(GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 GOGC=off valgrind --tool=callgrind --callgrind-out-file=/dev/null \
			${fn:+--collect-atstart=no} ${fn:+"--toggle-collect=$fn"} \
			"$bin" -test.run '^$' -test.bench "^Benchmark$1" -test.benchtime "${2}x" 2>&1 >/dev/null |
			sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
		if [ -n "$c" ]; then
			echo "$c"
			return
		fi
	done
	echo "callgrind failed 10 times on $1" >&2
	exit 1
}
for b in "$@"; do
	one=$(count "$b" 1)
	many=$(count "$b" $((n + 1)))
	if [ -n "$fn" ]; then
		echo "$b $(( (many - one) / n )) instructions/op inside $fn"
	else
		echo "$b $(( (many - one) / n )) instructions/op"
	fi
done
