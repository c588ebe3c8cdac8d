#!/bin/sh
# Rows a second and CPU of `steady harvest -o` into JSONL and into Parquet,
# side by side in interleaved rounds (medians), against `steady serve` on
# loopback with no faults, at 1,000 rows a page. Parquet's figure includes
# building the file from the staged rows at the end.
#
#   bench/harvest-parquet.sh [ROWS] [ROUNDS]
set -eu
rows=${1:-1000000} rounds=${2:-3}
dir=$(mktemp -d /tmp/harvest-parquet.XXXXXX)
cleanup() {
	[ -z "${srv:-}" ] || kill "$srv" 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
go build -o "$dir/steady" ./cmd/steady
port=$((20000 + $$ % 20000))
"$dir/steady" serve --addr "127.0.0.1:$port" --rows "$rows" --faults none -q 2>"$dir/serve.log" &
srv=$!
for _ in $(seq 50); do
	grep -q serving "$dir/serve.log" && break
	sleep 0.1
done
for r in $(seq "$rounds"); do
	for ext in jsonl parquet; do
		/usr/bin/time -f '%e %U %S %M' -o "$dir/time" \
			"$dir/steady" harvest "http://127.0.0.1:$port/items?limit=1000" -o "$dir/out.$ext" --force -q
		read -r secs user sys rss <"$dir/time"
		echo "$ext $secs $user $sys $rss $(stat -c %s "$dir/out.$ext")" >>"$dir/runs"
		rm -f "$dir/out.$ext"
	done
done
printf '%-8s %10s %12s %14s %10s %12s\n' format seconds rows/s cpu-ms/1k-rows max_rss_kb bytes
for ext in jsonl parquet; do
	grep "^$ext " "$dir/runs" | sort -k2 -n | awk -v n="$rounds" -v rows="$rows" -v f="$ext" \
		'NR == int((n + 1) / 2) { printf "%-8s %10.2f %12.0f %14.3f %10d %12d\n", f, $2, rows / $2, ($3 + $4) * 1000 / (rows / 1000), $5, $6 }'
done
