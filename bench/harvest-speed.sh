#!/usr/bin/env bash
# `steady harvest -o` against one curl process fetching the same pages, and
# against the steady built at BASE, in one run: every contender fetches the
# same pages from the same `steady serve` on loopback (no faults), ROUNDS
# times, in turn within each round, so a burst of load on a shared machine
# lands on all of them. It prints the median of each: rows/s (wall time),
# CPU-ms per 1,000 rows (user+sys from the process's rusage, /usr/bin/time)
# and max RSS, at 1,000 and at 100 rows a page, for .jsonl, and for the
# working tree's build also .jsonl.gz, .jsonl.zst and any FORMATS given.
#
#   bash bench/harvest-speed.sh [BASE [ROUNDS [ROWS]]]   # from the repository's root
#   FORMATS="parquet" bash bench/harvest-speed.sh 9a023a9 5 1000000
#
# curl gets every page URL in one config file and writes them to
# /dev/null; steady follows the Link headers itself and writes its file
# (fsync and state included) to a tmpfs when /dev/shm exists.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
base=${1:-9a023a9}
rounds=${2:-5}
rows=${3:-1000000}
tmp=$(mktemp -d /tmp/harvest-speed.XXXXXX)
out=$tmp
[ -d /dev/shm ] && out=$(mktemp -d /dev/shm/harvest-speed.XXXXXX)
srv=
cleanup() {
	[ -z "$srv" ] || kill "$srv" 2>/dev/null || true
	git -C "$root" worktree remove --force "$tmp/src" >/dev/null 2>&1 || true
	rm -rf "$tmp" "$out"
}
trap cleanup EXIT
git worktree add -q --detach "$tmp/src" "$base"
(cd "$tmp/src" && go build -o "$tmp/steady.before" ./cmd/steady)
go build -o "$tmp/steady.after" ./cmd/steady

port=$((20000 + $$ % 20000))
"$tmp/steady.after" serve --addr "127.0.0.1:$port" --rows "$rows" --faults none >"$tmp/serve.log" 2>&1 &
srv=$!
for _ in $(seq 100); do
	grep -q serving "$tmp/serve.log" && break
	sleep 0.1
done
url="http://127.0.0.1:$port/items"

# timed NAME ROWS CMD...: one run, appended to $tmp/NAME as "secs cpu rss".
timed() {
	local name=$1 n=$2
	shift 2
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" "$tmp/time" >&2; exit 1; }
	read -r secs user sys rss <"$tmp/time"
	echo "$secs $(echo "$user + $sys" | bc -l) $rss" >>"$tmp/$name"
}

# harvest NAME BIN PER EXT: one steady harvest, its rows checked.
harvest() {
	local name=$1 bin=$2 per=$3 ext=$4 f="$out/out.$4"
	rm -f "$f"
	timed "$name" "$rows" "$bin" harvest "$url?limit=$per" -o "$f" -q
	local got
	case $ext in
	jsonl) got=$(wc -l <"$f") ;;
	jsonl.gz) got=$(gzip -dc "$f" | wc -l) ;;
	jsonl.zst) got=$(zstd -dcq "$f" | wc -l) ;;
	*) got=$rows ;; # checked by the harvest's own total check
	esac
	[ "$got" -eq "$rows" ] || { echo "$name: $got rows, want $rows" >&2; exit 1; }
	rm -f "$f"
}

exts="jsonl jsonl.gz jsonl.zst ${FORMATS:-}"
command -v zstd >/dev/null || exts=${exts/jsonl.zst/}
for per in 1000 100; do
	: >"$tmp/curl.cfg"
	for ((off = 0; off < rows; off += per)); do
		printf 'url = "%s?limit=%d&offset=%d"\noutput = "/dev/null"\n' "$url" "$per" "$off" >>"$tmp/curl.cfg"
	done
	for i in $(seq "$rounds"); do
		echo "rows/page=$per round $i of $rounds" >&2
		timed "curl.$per" "$rows" curl -sS --fail -K "$tmp/curl.cfg"
		harvest "before.$per.jsonl" "$tmp/steady.before" "$per" jsonl
		for ext in $exts; do
			harvest "after.$per.$ext" "$tmp/steady.after" "$per" "$ext"
		done
	done
done

# median FILE COLUMN
median() { cut -d' ' -f"$2" "$1" | sort -n | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

printf '\n%d rows, %d rounds, medians; load %s\n' "$rows" "$rounds" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-22s %12s %14s %12s %10s\n' contender rows/s cpu-ms/krow max_rss_kb vs_curl
for per in 1000 100; do
	c=$(median "$tmp/curl.$per" 1)
	for f in "curl.$per" "before.$per.jsonl" $(for e in $exts; do echo "after.$per.$e"; done); do
		s=$(median "$tmp/$f" 1) cpu=$(median "$tmp/$f" 2) rss=$(median "$tmp/$f" 3)
		printf '%-22s %12.0f %14.3f %12d %9.2fx\n' "$f" "$(echo "$rows / $s" | bc -l)" \
			"$(echo "$cpu * 1000000 / $rows" | bc -l)" "$rss" "$(echo "$c / $s" | bc -l)"
	done
done
