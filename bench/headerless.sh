#!/usr/bin/env bash
# Headerless 429s with the defaults, before and after a change, side by side
# in one run: the code at BASE (a git revision) and the working tree each run
# the working tree's measurements (TestHeaderlessDefaults in the root: a page
# walk and a 32-way fan-out through the facade; TestHarvestHeaderlessDefaults
# in cmd/steady: harvests following links and fetching computed pages 32 at
# once), behind express-rate-limit answering a bare 429, 50 per 5 s, round
# by round in turn, so a burst of load on the shared machine lands on both.
# Each line gives the wall time against the quota's floor and the 429s.
#
#   bash bench/headerless.sh BASE [ROUNDS]   # from the repository's root
#
# Needs node and `npm ci --prefix testdata/ratelimit`. A run that has not
# ended in ten times its floor is stopped there and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
base=${1:?usage: bench/headerless.sh BASE [ROUNDS]}
rounds=${2:-1}
tmp=$(mktemp -d /tmp/headerless.XXXXXX)
trap 'git -C "$root" worktree remove --force "$tmp/src" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add -q --detach "$tmp/src" "$base"
cp -r testdata/ratelimit/node_modules "$tmp/src/testdata/ratelimit/"
# The same measurements on both sides: the working tree's test files.
cp limiter_test.go "$tmp/src/limiter_test.go"
cp cmd/steady/limiter_test.go "$tmp/src/cmd/steady/limiter_test.go"

build() {
	local dir=$1 tag=$2
	(cd "$dir" && go test -c -o "$tmp/facade.$tag" .)
	(cd "$dir/cmd/steady" && go test -c -o "$tmp/command.$tag" .)
}
build "$tmp/src" before
build "$root" after

run() {
	local tag=$1 dir=$2
	(cd "$dir" && "$tmp/facade.$tag" -test.run '^TestHeaderlessDefaults$' -test.v -test.timeout 20m -headerless.rounds 1) | grep 'round ' || true
	(cd "$dir/cmd/steady" && "$tmp/command.$tag" -test.run '^TestHarvestHeaderlessDefaults$' -test.v -test.timeout 20m -headerless.rounds 1) | grep -E 'round |exit ' || true
}
for r in $(seq "$rounds"); do
	echo "== round $r: before ($base)"
	run before "$tmp/src"
	echo "== round $r: after (working tree)"
	run after "$root"
done
