#!/bin/sh
# Memory and speed of `steady harvest -o` by collection size: the maximum
# resident set of the harvesting process and its rows a second, for each
# ROWS given (default: 100,000 and 10,000,000), against `steady serve` on
# loopback with no faults, at 1,000 rows a page. Memory is flat when the
# largest harvest's max RSS is within 10% of the smallest's.
#
#   bench/harvest-rss.sh [ROWS...]
set -eu
[ $# -gt 0 ] || set -- 100000 10000000
dir=$(mktemp -d /tmp/harvest-rss.XXXXXX)
cleanup() {
	[ -z "${srv:-}" ] || kill "$srv" 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
go build -o "$dir/steady" ./cmd/steady
port=$((20000 + $$ % 20000))
printf '%12s %10s %10s %12s\n' rows max_rss_kb seconds rows/s
for rows in "$@"; do
	"$dir/steady" serve --addr "127.0.0.1:$port" --rows "$rows" --faults none -q 2>"$dir/serve.log" &
	srv=$!
	for _ in $(seq 50); do
		grep -q serving "$dir/serve.log" && break
		sleep 0.1
	done
	/usr/bin/time -f '%M %e' -o "$dir/time" \
		"$dir/steady" harvest "http://127.0.0.1:$port/items?limit=1000" -o "$dir/out.jsonl" --force -q
	got=$(wc -l <"$dir/out.jsonl")
	[ "$got" -eq "$rows" ] || { echo "harvested $got rows, want $rows" >&2; exit 1; }
	read -r rss secs <"$dir/time"
	printf '%12d %10d %10s %12.0f\n' "$rows" "$rss" "$secs" "$(echo "$rows / $secs" | bc -l)"
	kill "$srv"
	wait "$srv" 2>/dev/null || true
	srv=
	rm -f "$dir/out.jsonl"
done
