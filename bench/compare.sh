#!/usr/bin/env bash
# The figures a user feels, before and after a change, side by side in one
# run: the code at BASE (a git revision) and the working tree are built once
# each, then every benchmark runs ROUNDS times, the two builds in turn, so a
# burst of load on a shared machine lands on both. Medians by benchstat.
#
#   bash bench/compare.sh BASE [ROUNDS]      # from the repository's root
#
# Figures: a GET through the facade over loopback (BenchmarkFacadeOverLoopback,
# root), harvest rows/s (BenchmarkHarvest, cmd/steady), walk pages/s
# (BenchmarkWalk, paginate) and the pacing ratio against express-rate-limit
# (TestQuotaEdge, bench; needs `npm ci --prefix testdata/ratelimit`).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
base=${1:?usage: bench/compare.sh BASE [ROUNDS]}
rounds=${2:-5}
tmp=$(mktemp -d /tmp/compare.XXXXXX)
trap 'git -C "$root" worktree remove --force "$tmp/src" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add -q --detach "$tmp/src" "$base"
if [ -d testdata/ratelimit/node_modules ]; then
	cp -r testdata/ratelimit/node_modules "$tmp/src/testdata/ratelimit/"
fi

# build DIR TAG: one test binary per figure, from the tree at DIR.
build() {
	local dir=$1 tag=$2
	(cd "$dir" && go test -c -o "$tmp/facade.$tag" .)
	(cd "$dir/cmd/steady" && go test -c -o "$tmp/harvest.$tag" .)
	(cd "$dir/paginate" && go test -c -o "$tmp/walk.$tag" .)
	(cd "$dir/bench" && go test -c -o "$tmp/quota.$tag" .)
}
build "$tmp/src" before
build "$root" after

# run TAG DIR: one round of every figure for one build, its output on stdout.
run() {
	local tag=$1 dir=$2
	(cd "$dir" && "$tmp/facade.$tag" -test.run '^$' -test.bench 'FacadeOverLoopback/impl=(bare|HTTP)$' -test.benchtime 2000x -test.benchmem)
	(cd "$dir/cmd/steady" && "$tmp/harvest.$tag" -test.run '^$' -test.bench 'Harvest/rows/page=1000/impl=steady' -test.benchtime 2x)
	(cd "$dir/paginate" && "$tmp/walk.$tag" -test.run '^$' -test.bench 'Walk/pages=' -test.benchtime 3x -test.benchmem)
}
for i in $(seq "$rounds"); do
	echo "round $i of $rounds" >&2
	run before "$tmp/src" >>"$tmp/before.txt"
	run after "$root" >>"$tmp/after.txt"
done
benchstat=$(command -v benchstat || echo "$(go env GOPATH)/bin/benchstat")
if [ -x "$benchstat" ]; then
	"$benchstat" before="$tmp/before.txt" after="$tmp/after.txt"
else
	grep -h '^Benchmark' "$tmp/before.txt" "$tmp/after.txt"
fi

echo
echo "Pacing against express-rate-limit (TestQuotaEdge, one walk a form and client, before then after):"
for tag in before after; do
	dir=$tmp/src; [ "$tag" = after ] && dir=$root
	echo "-- $tag"
	(cd "$dir/bench" && "$tmp/quota.$tag" -test.run TestQuotaEdge -quota.rounds 1 -test.v) | grep -E 'floor' | sed 's/^ *//'
done
