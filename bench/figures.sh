#!/usr/bin/env bash
# Every figure the README quotes, from one run on one machine.
#
#   bash bench/figures.sh                 # from the repository's root
#   bash bench/figures.sh > docs/figures-$(date -u +%F).txt
#
# It prints the machine (cores, Go, load average at the start and the end,
# date), then one section per README table, each with the command that
# measures it and the table in the README's form. Every benchmark is run
# through the existing harnesses: the bench module (loopback and in-memory
# retry layers, express-rate-limit at a quota's edge), bench/callgrind.sh
# (instructions per operation), interleaved rounds as bench/rounds.sh runs
# them (one test binary, the whole set in turn, medians), the faults
# module's resumed download (nginx, toxiproxy), the redisquota fleet,
# `steady simulate` and `steady demo`.
#
# In-memory figures are counted, not timed: instructions by callgrind
# (GOMAXPROCS=1, GOGC=off) and allocations per operation, since a shared
# machine moves nanoseconds by ±50-100 %. Where valgrind fails on a
# binary, the section says so and gives the interleaved median time.
#
# It is sized to stay under about 12 minutes on 2 busy cores (the run of
# 2026-12-01 took 330 s at a load average of 1-3), so it runs fewer rounds
# than the harnesses' comments suggest; each section says how many, and the
# end lists what was cut. Settings:
#
#   ROUNDS=N            interleaved rounds of the timed benchmarks (5)
#   RESUME_BENCH_MB=N   size of the resumed download in MiB (1024; 256
#                       takes a quarter of the time), 5 interleaved rounds
#   FIGURES_SUITE=1     also time the README's second command, the whole
#                       test suite under -race (several minutes more)
#   FIGURES_ONLY="a b"  run only the named sections (for trying the script)
#
# Needs: go, valgrind, nginx, redis-server, node with
# `npm ci --prefix testdata/ratelimit` done, /usr/bin/time, bc. A section
# whose component is missing says so and the run goes on.
set -uo pipefail

cd "$(dirname "$0")/.."
root=$(pwd)
ROUNDS=${ROUNDS:-5}
export RESUME_BENCH_MB=${RESUME_BENCH_MB:-1024}
tmp=$(mktemp -d /tmp/figures.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cut_notes=()
skipped() { cut_notes+=("$*"); }

want() { # section: whether FIGURES_ONLY names it (or is unset)
	[ -z "${FIGURES_ONLY:-}" ] && return 0
	case " $FIGURES_ONLY " in *" $1 "*) return 0 ;; esac
	return 1
}

section() {
	printf '\n=== %s (%s, load %s)\n' "$1" "$(date -u +%T)" "$(cut -d' ' -f1-3 /proc/loadavg)"
}

# med FILE NAME UNIT: the median of UNIT over the benchmark lines of NAME
# (the -GOMAXPROCS suffix ignored), or "-" when there is none.
med() {
	awk -v want="$2" -v unit="$3" '
		/^Benchmark/ {
			n = $1; sub(/-[0-9]+$/, "", n)
			if (n != want) next
			for (i = 3; i < NF; i++) if ($(i+1) == unit) v[c++] = $i + 0
		}
		END {
			if (c == 0) { print "-"; exit }
			for (i = 0; i < c; i++) for (j = i + 1; j < c; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			m = (c % 2) ? v[int(c/2)] : (v[c/2-1] + v[c/2]) / 2
			print m
		}' "$1"
}

# rng FILE NAME UNIT: "min-max" over the rounds.
rng() {
	awk -v want="$2" -v unit="$3" '
		/^Benchmark/ {
			n = $1; sub(/-[0-9]+$/, "", n)
			if (n != want) next
			for (i = 3; i < NF; i++) if ($(i+1) == unit) { x = $i + 0; if (c == 0 || x < lo) lo = x; if (c == 0 || x > hi) hi = x; c++ }
		}
		END { if (c == 0) print "-"; else printf "%g-%g\n", lo, hi }' "$1"
}

calc() { echo "scale=6; $*" | bc -l; }
fmt() { printf "%.${1}f" "$2"; } # fmt DECIMALS NUMBER
ratio() { # a b: a/b to 2 decimals, "-" when either is missing
	if [ "$1" = - ] || [ "$2" = - ] || [ "$2" = 0 ]; then echo -; else fmt 2 "$(calc "$1 / $2")"; fi
}
pct() { # a b: a against b in per cent, signed
	if [ "$1" = - ] || [ "$2" = - ]; then echo -; else printf '%+.1f %%' "$(calc "($1 / $2 - 1) * 100")"; fi
}

# rounds OUT DIR PKG-BINARY-NAME BENCH-RE [test flags...]: builds the test
# binary of the package in DIR once, then runs the whole set ROUNDS times
# in turn (bench/rounds.sh's method), appending to OUT.
rounds() {
	local out=$1 dir=$2 bre=$3
	shift 3
	local bin="$tmp/$(echo "$dir" | tr / _).test"
	[ -x "$bin" ] || (cd "$dir" && go test -c -o "$bin" .) || return 1
	for _ in $(seq "$ROUNDS"); do
		(cd "$dir" && "$bin" -test.run '^$' -test.bench "$bre" -test.benchmem "$@") >>"$out" 2>&1
	done
}

# cg OUT DIR N BENCH...: instructions per op by bench/callgrind.sh into OUT
# ("name count instructions/op" lines); failures are noted in OUT.
cg() {
	local out=$1 dir=$2 n=$3
	shift 3
	(cd "$dir" && sh "$root/bench/callgrind.sh" . "$n" "$@") >>"$out" 2>>"$out.err" || true
}
ins() { # OUT NAME: the instruction count callgrind.sh gave NAME, or "-"
	awk -v want="$2" '$1 == want && $3 == "instructions/op" { print $2; f = 1 } END { if (!f) print "-" }' "$1"
}
insmed() { # OUT NAME: the median of the counts callgrind.sh gave NAME in OUT, or "-"
	awk -v want="$2" '$1 == want && $3 == "instructions/op" { v[c++] = $2 + 0 }
		END {
			if (c == 0) { print "-"; exit }
			for (i = 0; i < c; i++) for (j = i + 1; j < c; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			print v[int((c - 1) / 2)]
		}' "$1"
}
kb() { # bytes as KB or MB
	if [ "${1%.*}" -ge 1000000 ]; then printf '%.1f MB' "$(calc "$1/1000000")"; else printf '%.1f KB' "$(calc "$1/1000")"; fi
}
kins() { # instructions in thousands or millions
	case $1 in -) echo - ;; *) if [ "$1" -ge 10000000 ]; then printf '%.0f M' "$(calc "$1/1000000")"; else printf '%.1f k' "$(calc "$1/1000")"; fi ;; esac
}

start=$(date -u +%s)
echo "bash bench/figures.sh"
echo "date:     $(date -u '+%F %T UTC')"
echo "machine:  $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(uname -sr)"
echo "go:       $(go version)"
echo "commit:   $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) at the start"
echo "rounds:   $ROUNDS interleaved rounds for timed benchmarks; RESUME_BENCH_MB=$RESUME_BENCH_MB"
echo "valgrind: $(valgrind --version 2>/dev/null || echo absent)"

# ---------------------------------------------------------------------------
if want retry; then
	section "The retry layer on a successful GET (bench module)"
	o=$tmp/retry.txt
	echo "cd bench && go test -run '^\$' -bench 'GET|Overhead' -benchmem, $ROUNDS interleaved rounds, -benchtime 0.5s, medians"
	echo "in-memory instructions: bench/callgrind.sh . 2000 'Overhead/<impl>\$' (from bench/)"
	rounds "$o" bench '^Benchmark(GET|Overhead)$' -test.benchtime 0.5s
	cg "$o.cg" bench 2000 'Overhead/bare$' 'Overhead/steady$' 'Overhead/retryablehttp$' 'Overhead/failsafe$'
	echo
	echo "| | bare \`http.Transport\` | steady | go-retryablehttp | failsafe-go |"
	echo "|---|---:|---:|---:|---:|"
	b=$(med "$o" BenchmarkGET/bare ns/op)
	row="| GET on loopback, time (median of $ROUNDS) | $(fmt 1 "$(calc "$b/1000")") µs"
	for i in steady retryablehttp failsafe; do
		v=$(med "$o" "BenchmarkGET/$i" ns/op)
		row+=" | $(fmt 1 "$(calc "$v/1000")") µs ($(pct "$v" "$b"))"
	done
	echo "$row |"
	b=$(med "$o" BenchmarkGET/bare allocs/op)
	row="| GET on loopback, allocations | $b"
	for i in steady retryablehttp failsafe; do
		v=$(med "$o" "BenchmarkGET/$i" allocs/op)
		row+=" | $v ($(printf '%+d' "$((${v%.*} - ${b%.*}))"))"
	done
	echo "$row |"
	bi=$(ins "$o.cg" 'Overhead/bare$')
	row="| the layer alone (in-memory transport), instructions | $(kins "$bi")"
	for i in steady retryablehttp failsafe; do
		v=$(ins "$o.cg" "Overhead/$i\$")
		row+=" | $(kins "$v") ($(ratio "$v" "$bi")x)"
	done
	echo "$row |"
	row="| the layer alone, time (median of $ROUNDS; noisy) | $(fmt 0 "$(med "$o" BenchmarkOverhead/bare ns/op)") ns"
	for i in steady retryablehttp failsafe; do row+=" | $(fmt 0 "$(med "$o" "BenchmarkOverhead/$i" ns/op)") ns"; done
	echo "$row |"
	row="| the layer alone, bytes / allocations"
	for i in bare steady retryablehttp failsafe; do
		row+=" | $(med "$o" "BenchmarkOverhead/$i" B/op) B / $(med "$o" "BenchmarkOverhead/$i" allocs/op)"
	done
	echo "$row |"
	echo
	echo "loopback GET time, range over the rounds: bare $(rng "$o" BenchmarkGET/bare ns/op) ns, steady $(rng "$o" BenchmarkGET/steady ns/op) ns"
	[ -s "$o.cg.err" ] && { echo "callgrind: $(cat "$o.cg.err")"; skipped "callgrind failed on some in-memory retry-layer benchmarks: time medians only there"; }

	echo
	echo "BudgetDeposit (budget): go test -run '^\$' -bench BudgetDeposit -cpu 1,2 ./budget, $ROUNDS rounds, medians"
	o=$tmp/budget.txt
	rounds "$o" budget '^BenchmarkBudgetDeposit$' -test.cpu 1,2 -test.benchtime 0.5s
	one=$(awk '/^BenchmarkBudgetDeposit /{print $3}' "$o" | sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}')
	two=$(awk '/^BenchmarkBudgetDeposit-2 /{print $3}' "$o" | sort -n | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}')
	echo "  one core $one ns, two goroutines contending $two ns, $(awk '/^BenchmarkBudgetDeposit/{print $5 " " $6 ", " $7 " " $8}' "$o" | sort -u | tr '\n' ' ')"
fi

# ---------------------------------------------------------------------------
if want walk; then
	section "Page walk, 1,000 pages of 100 features (paginate)"
	o=$tmp/walk.txt
	echo "go test -run '^\$' -bench 'Walk/pages=' -benchtime 3x ./paginate, $ROUNDS interleaved rounds, medians"
	rounds "$o" paginate '^BenchmarkWalk$' -test.benchtime 3x
	for n in 100 1000; do
		p=$(med "$o" "BenchmarkWalk/pages=$n/paginate" µs/page) h=$(med "$o" "BenchmarkWalk/pages=$n/hand" µs/page)
		echo "  $n pages: paginate.Pages $p µs a page ($(rng "$o" "BenchmarkWalk/pages=$n/paginate" µs/page)), hand loop $h ($(rng "$o" "BenchmarkWalk/pages=$n/hand" µs/page)): $(ratio "$h" "$p")x the throughput;" \
			"$(med "$o" "BenchmarkWalk/pages=$n/paginate" B/page) B vs $(med "$o" "BenchmarkWalk/pages=$n/hand" B/page) B allocated a page"
	done
	grep -E '^BenchmarkWalk/pages=1000/' "$o" | awk '{n=$1; sub(/-[0-9]+$/,"",n); print "  " n}' | sort -u | tr '\n' ' '
	echo
	echo
	echo "go test -run '^\$' -bench LoopGuard -benchtime 3x ./paginate"
	(cd paginate && go test -run '^$' -bench LoopGuard -benchtime 3x .) 2>&1 | grep '^Benchmark' | sed 's/^/  /'
fi

# ---------------------------------------------------------------------------
if want facade; then
	section "The facade and the harvest beside the hand-written loop"
	o=$tmp/facade.txt
	echo "bench/callgrind.sh . 1000 'FacadeHTTP/impl=bare\$' 'FacadeHTTP/impl=HTTP\$' 'FacadeHTTP/impl=Do\$'"
	echo "bench/callgrind.sh . 100 'FacadeGetJSON/size=2KB/impl=hand\$' 'FacadeGetJSON/size=2KB/impl=steady\$'"
	echo "bench/callgrind.sh . 3 'FacadeGetJSON/size=1024KB/impl=hand\$' 'FacadeGetJSON/size=1024KB/impl=steady\$'"
	echo "allocations: go test -run '^\$' -bench 'FacadeGetJSON|FacadeHTTP' -benchmem -benchtime 200x ."
	echo "walk: bench/rounds.sh $ROUNDS . FacadeWalk -test.benchtime 10x"
	echo "over loopback: bench/callgrind.sh . 1000 'FacadeOverLoopback/impl=bare\$' 'FacadeOverLoopback/impl=HTTP\$' 'FacadeOverLoopback/impl=Do\$'; bench/rounds.sh $ROUNDS . FacadeOverLoopback -test.benchtime 20000x"
	cg "$o.cg" . 1000 'FacadeHTTP/impl=bare$' 'FacadeHTTP/impl=HTTP$' 'FacadeHTTP/impl=Do$'
	cg "$o.cg" . 1000 'FacadeOverLoopback/impl=bare$' 'FacadeOverLoopback/impl=HTTP$' 'FacadeOverLoopback/impl=Do$'
	rounds "$o.loop" . '^BenchmarkFacadeOverLoopback$' -test.benchtime 20000x
	cg "$o.cg" . 100 'FacadeGetJSON/size=2KB/impl=hand$' 'FacadeGetJSON/size=2KB/impl=steady$'
	cg "$o.cg" . 3 'FacadeGetJSON/size=1024KB/impl=hand$' 'FacadeGetJSON/size=1024KB/impl=steady$'
	go test -run '^$' -bench 'FacadeGetJSON|FacadeHTTP' -benchmem -benchtime 200x . >"$o" 2>&1
	rounds "$o.walk" . '^BenchmarkFacadeWalk$' -test.benchtime 10x
	o2=$tmp/harvest.txt
	echo "harvest: bench/rounds.sh $ROUNDS ./cmd/steady Harvest -test.benchtime 2x"
	rounds "$o2" cmd/steady '^BenchmarkHarvest$' -test.benchtime 2x
	o3=$tmp/fanout.txt
	echo "fan-out: bench/rounds.sh $ROUNDS ./fanout FanOut -test.benchtime 2x"
	rounds "$o3" fanout '^BenchmarkFanOut$' -test.benchtime 2x
	echo "loop guard: in the page-walk section above; max RSS: bench/harvest-rss.sh (100,000 and 10,000,000 rows)"
	sh bench/harvest-rss.sh 100000 10000000 >"$tmp/rss.txt" 2>&1
	echo
	echo "| what | steady | by hand | ratio |"
	echo "|---|---|---|---|"
	for s in 2KB 1024KB; do
		label=$s
		[ "$s" = 1024KB ] && label=1MB
		st=$(ins "$o.cg" "FacadeGetJSON/size=$s/impl=steady\$") hd=$(ins "$o.cg" "FacadeGetJSON/size=$s/impl=hand\$")
		sa=$(med "$o" "BenchmarkFacadeGetJSON/size=$s/impl=steady" allocs/op) ha=$(med "$o" "BenchmarkFacadeGetJSON/size=$s/impl=hand" allocs/op)
		sb=$(med "$o" "BenchmarkFacadeGetJSON/size=$s/impl=steady" B/op) hb=$(med "$o" "BenchmarkFacadeGetJSON/size=$s/impl=hand" B/op)
		echo "| \`GetJSON\`, $label in-memory response, vs \`http.Client\` + \`json.Decoder\` | $(kins "$st") instructions, $sa allocs, $(kb "$sb") | $(kins "$hd"), $ha, $(kb "$hb") | $(ratio "$st" "$hd")x, $(printf '%+d' "$((${sa%.*} - ${ha%.*}))") allocs |"
	done
	bi=$(ins "$o.cg" 'FacadeHTTP/impl=bare$') ba=$(med "$o" BenchmarkFacadeHTTP/impl=bare allocs/op)
	for i in HTTP Do; do
		v=$(ins "$o.cg" "FacadeHTTP/impl=$i\$")
		label='`HTTP()` client, one GET, in memory, vs a bare `http.Client`'
		[ "$i" = Do ] && label='`Do`, the same'
		echo "| $label | $(kins "$v") instructions, $(med "$o" "BenchmarkFacadeHTTP/impl=$i" allocs/op) allocs | $(kins "$bi"), $ba | $(ratio "$v" "$bi")x |"
	done
	li=$(ins "$o.cg" 'FacadeOverLoopback/impl=bare$') lt=$(med "$o.loop" BenchmarkFacadeOverLoopback/impl=bare ns/op)
	for i in HTTP Do; do
		v=$(ins "$o.cg" "FacadeOverLoopback/impl=$i\$") t=$(med "$o.loop" "BenchmarkFacadeOverLoopback/impl=$i" ns/op)
		label='`HTTP()` client, one GET over loopback, vs a bare `http.Client` on a pool tuned alike'
		[ "$i" = Do ] && label='`Do`, the same'
		echo "| $label (time: median of $ROUNDS) | $(kins "$v") instructions, $(fmt 1 "$(calc "$t/1000")") µs | $(kins "$li"), $(fmt 1 "$(calc "$lt/1000")") µs | $(ratio "$v" "$li")x instructions, $(ratio "$t" "$lt")x time |"
	done
	ws=$(med "$o.walk" BenchmarkFacadeWalk/impl=steady µs/page) wh=$(med "$o.walk" BenchmarkFacadeWalk/impl=hand µs/page)
	echo "| page walk through the facade, 100 pages of 100 features, loopback (median of $ROUNDS) | $(fmt 0 "$ws") µs a page | $(fmt 0 "$wh") µs | $(ratio "$wh" "$ws")x the throughput |"
	for per in 100 1000; do
		sr=$(med "$o2" "BenchmarkHarvest/rows/page=$per/impl=steady" rows/s) nr=$(med "$o2" "BenchmarkHarvest/rows/page=$per/impl=naive" rows/s)
		sc=$(med "$o2" "BenchmarkHarvest/rows/page=$per/impl=steady" cpu-ms/krow) nc=$(med "$o2" "BenchmarkHarvest/rows/page=$per/impl=naive" cpu-ms/krow)
		echo "| \`harvest -o\`, 200,000 rows, $per rows a page, vs a naive Go loop (median of $ROUNDS) | $(fmt 0 "$(calc "$sr/1000")") k rows/s, $(fmt 2 "$sc") CPU-ms per 1,000 rows | $(fmt 0 "$(calc "$nr/1000")") k, $(fmt 2 "$nc") | $(ratio "$sr" "$nr")x (CPU $(ratio "$sc" "$nc")x) |"
	done
	for srv in memory loopback; do
		f=BenchmarkFanOut/server=$srv
		ff=$(med "$o3" $f/impl=fanout x-ideal) fe=$(med "$o3" $f/impl=errgroup x-ideal) fl=$(med "$o3" $f/impl=floor x-ideal)
		label='answered from memory after 10 ms'
		[ $srv = loopback ] && label='answered by a loopback server after 10 ms'
		echo "| fan-out, 2,000 sub-requests $label, concurrency 32, vs errgroup \`SetLimit(32)\` (median of $ROUNDS) | $(fmt 3 "$ff")x the ideal 625 ms | $(fmt 3 "$fe")x (bare goroutines: $(fmt 3 "$fl")x) | $(ratio "$ff" "$fe")x |"
	done
	small=$(awk '$1==100000{print $2}' "$tmp/rss.txt") big=$(awk '$1==10000000{print $2}' "$tmp/rss.txt") bigr=$(awk '$1==10000000{print $4}' "$tmp/rss.txt")
	if [ -n "$big" ] && [ -n "$small" ]; then
		echo "| \`harvest -o\` of 10,000,000 rows (\`steady serve\`), max RSS | $(fmt 1 "$(calc "$big/1000")") MB, $(fmt 2 "$(calc "$bigr/1000000")") M rows/s | $(fmt 1 "$(calc "$small/1000")") MB for 100,000 rows | $(pct "$big" "$small") |"
	else
		echo "| \`harvest -o\` of 10,000,000 rows, max RSS | not measured: $(tail -1 "$tmp/rss.txt") | | |"
		skipped "bench/harvest-rss.sh failed"
	fi
	echo
	for srv in memory loopback; do
		f=BenchmarkFanOut/server=$srv
		echo "fan-out ($srv) ranges over the rounds: fanout $(rng "$o3" $f/impl=fanout x-ideal), errgroup $(rng "$o3" $f/impl=errgroup x-ideal), floor $(rng "$o3" $f/impl=floor x-ideal) (x the ideal); CPU µs a sub-request: fanout $(med "$o3" $f/impl=fanout cpu-µs/item), errgroup $(med "$o3" $f/impl=errgroup cpu-µs/item), floor $(med "$o3" $f/impl=floor cpu-µs/item)"
	done
	echo "over loopback, time ranges: bare $(rng "$o.loop" BenchmarkFacadeOverLoopback/impl=bare ns/op), HTTP $(rng "$o.loop" BenchmarkFacadeOverLoopback/impl=HTTP ns/op), Do $(rng "$o.loop" BenchmarkFacadeOverLoopback/impl=Do ns/op) (ns/op); allocations: bare $(med "$o.loop" BenchmarkFacadeOverLoopback/impl=bare allocs/op), HTTP $(med "$o.loop" BenchmarkFacadeOverLoopback/impl=HTTP allocs/op), Do $(med "$o.loop" BenchmarkFacadeOverLoopback/impl=Do allocs/op)"
	echo "harvest rows/s ranges: 100/page steady $(rng "$o2" 'BenchmarkHarvest/rows/page=100/impl=steady' rows/s), naive $(rng "$o2" 'BenchmarkHarvest/rows/page=100/impl=naive' rows/s)"
	echo "harvest-rss.sh:"
	sed 's/^/  /' "$tmp/rss.txt"
	[ -s "$o.cg.err" ] && { echo "callgrind: $(cat "$o.cg.err")"; skipped "callgrind failed on some facade benchmarks"; }
fi

# ---------------------------------------------------------------------------
if want resume; then
	section "A resumed download from nginx through toxiproxy (faults)"
	echo "RESUME_BENCH_MB=$RESUME_BENCH_MB go -C faults test -run '^\$' -bench ResumeDownload -benchtime 5x -timeout 20m"
	echo "(5 interleaved rounds of $RESUME_BENCH_MB MiB, cut every 64 MiB; steady with its default policy; every body written to a file in /dev/shm)"
	o=$tmp/resume.txt
	go -C faults test -run '^$' -bench ResumeDownload -benchtime 5x -timeout 20m >"$o" 2>&1
	if grep -q '^BenchmarkResumeDownload' "$o"; then
		grep -E 'MiB cut every|CPU time of the (client|servers)|each continuation|continuations at|Range requests of|nginx sent|no /dev/shm' "$o" | sed 's/^ *[a-z_]*\.go:[0-9]*: /  /'
		m() { med "$o" BenchmarkResumeDownload "$1"; }
		echo "  steady resumes $(m resumes) times and takes $(fmt 2 "$(m s-cut)") s, $(fmt 3 "$(m cut/uncut)")x the uncut download through the same proxy ($(fmt 2 "$(m s-uncut)") s; $(fmt 3 "$(m cut/uncut-in-round)")x within a round);" \
			"its CPU time $(ratio "$(m cpu-s-cut)" "$(m cpu-s-uncut)")x the uncut one's ($(fmt 2 "$(m cpu-s-cut)") s against $(fmt 2 "$(m cpu-s-uncut)") s);" \
			"each continuation: the cut seen $(fmt 2 "$(m ms-resume-close)") ms after the last byte, $(fmt 2 "$(m ms-resume-client)") ms from there to the request written, $(fmt 2 "$(m ms-resume-proxy)") ms to the first byte through the proxy, $(fmt 2 "$(m ms-resume-ramp)") ms of ramp, $(fmt 3 "$(m resumes-cost/uncut)") of the uncut time in all;" \
			"the same file as uncut 64 MiB ranges on new connections (plain net/http): $(fmt 2 "$(m s-pieces)") s, $(fmt 3 "$(m pieces/uncut)")x, steady cut $(fmt 3 "$(m cut/pieces)")x that ($(fmt 3 "$(m cut/pieces-in-round)")x within a round);" \
			"bytes on the wire $(fmt 4 "$(m wire/size)")x the size (nginx sent $(fmt 4 "$(m nginx-sent/size)")x: what the cut connections held in their sockets); $(fmt 0 "$(calc "$(m alloc-B)/1000")") KB allocated in all." \
			"\`curl -C -\` in a retry loop: $(fmt 2 "$(m s-curl)") s, $(fmt 3 "$(m curl/uncut)")x ($(fmt 3 "$(m curl/uncut-in-round)")x within a round; CPU $(fmt 2 "$(m cpu-s-curl)") s; $(fmt 2 "$(m ms-resume-curl)") ms a continuation)"
	else
		echo "  not measured:"
		tail -15 "$o" | sed 's/^/    /'
		skipped "BenchmarkResumeDownload did not run (see its section)"
	fi
fi

# ---------------------------------------------------------------------------
if want quota; then
	section "Pacing at a quota's edge (express-rate-limit)"
	echo "go -C bench test -run TestQuotaEdge -quota.rounds 1 -v -count 1   (1 walk a form and client; the README's earlier figure took the median of 3)"
	o=$tmp/quota.txt
	go -C bench test -run TestQuotaEdge -quota.rounds 1 -v -count 1 >"$o" 2>&1
	grep -E 'median|SKIP|FAIL|skip' "$o" | sed 's/^ *quota_test\.go:[0-9]*: /  /'
	grep -q median "$o" || skipped "TestQuotaEdge did not run (see its section)"
fi

# ---------------------------------------------------------------------------
if want fleet; then
	section "A fleet behind express-rate-limit (the command, through redisquota)"
	echo "go -C cmd/steady test -run TestFleetBehindExpressRateLimit -v -count 1 .   (one run; the README's earlier figure was three runs in a row)"
	o=$tmp/fleet.txt
	go -C cmd/steady test -run TestFleetBehindExpressRateLimit -v -count 1 . >"$o" 2>&1
	grep -E 'outputs exact|fell back|FAIL|SKIP|^ok|^---' "$o" | sed 's/^ *fleet_test\.go:[0-9]*: /  /'
	grep -q 'outputs exact' "$o" || skipped "TestFleetBehindExpressRateLimit did not run (see its section)"
	echo
	echo "go -C redisquota test -run '^\$' -bench AddedLatency -benchtime 5000x -count 3 .   (three runs of 5,000 pairs; earlier five)"
	o=$tmp/latency.txt
	go -C redisquota test -run '^$' -bench AddedLatency -benchtime 5000x -count 3 . >"$o" 2>&1
	grep '^BenchmarkAddedLatency' "$o" | sed 's/^/  /'
	m() { med "$o" BenchmarkAddedLatency "$1"; }
	echo "  medians of the runs: $(m redis-calls/req) Redis calls a request; p50 $(m local-p50-µs) µs alone, $(m shared-p50-µs) µs shared; p99 $(m local-p99-µs) µs alone, $(m shared-p99-µs) µs shared (added $(m added-p99-µs) µs, range $(rng "$o" BenchmarkAddedLatency added-p99-µs))"
fi

# ---------------------------------------------------------------------------
if want otel; then
	section "Tracing and metrics cost (otelsteady)"
	echo "go -C otelsteady test -run '^\$' -bench Success -benchmem, $ROUNDS interleaved rounds, -benchtime 0.5s, medians; instructions: bench/callgrind.sh . 1000 'Success/<stack>\$'"
	o=$tmp/otel.txt
	rounds "$o" otelsteady '^BenchmarkSuccess$' -test.benchtime 0.5s
	cg "$o.cg" otelsteady 1000 'Success/off$' 'Success/otelhttp$' 'Success/adapter$'
	off=$(med "$o" BenchmarkSuccess/off ns/op) oh=$(med "$o" BenchmarkSuccess/otelhttp ns/op) ad=$(med "$o" BenchmarkSuccess/adapter ns/op)
	a0=$(med "$o" BenchmarkSuccess/off allocs/op) a1=$(med "$o" BenchmarkSuccess/otelhttp allocs/op) a2=$(med "$o" BenchmarkSuccess/adapter allocs/op)
	b0=$(med "$o" BenchmarkSuccess/off B/op) b1=$(med "$o" BenchmarkSuccess/otelhttp B/op) b2=$(med "$o" BenchmarkSuccess/adapter B/op)
	i0=$(ins "$o.cg" 'Success/off$') i1=$(ins "$o.cg" 'Success/otelhttp$') i2=$(ins "$o.cg" 'Success/adapter$')
	t1=$(calc "$oh - $off") t2=$(calc "$ad - $off")
	echo
	echo "| | time added | instructions added | allocations added |"
	echo "|---|---:|---:|---:|"
	if [ "$i0" != - ] && [ "$i1" != - ] && [ "$i2" != - ]; then d1=$((i1 - i0)) d2=$((i2 - i0)); else d1=- d2=-; fi
	echo "| otelhttp's span over the retry layer | $(fmt 1 "$(calc "$t1/1000")") µs | $(kins "$d1") | $((${a1%.*} - ${a0%.*})) ($(fmt 1 "$(calc "($b1 - $b0)/1000")") KB) |"
	echo "| the adapter | $(fmt 1 "$(calc "$t2/1000")") µs ($(ratio "$t2" "$t1")x) | $(kins "$d2") ($(ratio "$d2" "$d1")x) | $((${a2%.*} - ${a0%.*})) ($(fmt 1 "$(calc "($b2 - $b0)/1000")") KB, $(ratio "$(calc "$b2 - $b0")" "$(calc "$b1 - $b0")")x) |"
	echo
	echo "time ranges: off $(rng "$o" BenchmarkSuccess/off ns/op), otelhttp $(rng "$o" BenchmarkSuccess/otelhttp ns/op), adapter $(rng "$o" BenchmarkSuccess/adapter ns/op) ns"
	[ -s "$o.cg.err" ] && { echo "callgrind: $(cat "$o.cg.err")"; skipped "callgrind failed on some otelsteady benchmarks"; }
fi

# ---------------------------------------------------------------------------
if want demo; then
	section "steady demo, 100,000 rows through the harsh fault mix"
	go build -o "$tmp/steady" ./cmd/steady
	echo "go build -o steady ./cmd/steady && /usr/bin/time steady demo -o DIR/demo.jsonl   (the output in this run's temporary directory)"
	/usr/bin/time -f 'wall %e s, max RSS %M KB, CPU %U s user %S s system' -o "$tmp/demo.time" "$tmp/steady" demo -o "$tmp/demo.jsonl" >"$tmp/demo.txt" 2>"$tmp/demo.err"
	echo "  exit $?; $(cat "$tmp/demo.time")"
	sed 's/^/  /' "$tmp/demo.txt"
fi

# ---------------------------------------------------------------------------
if want simulate; then
	section "What retry policies do to a service (steady simulate)"
	[ -x "$tmp/steady" ] || go build -o "$tmp/steady" ./cmd/steady
	echo "go run ./cmd/steady simulate   (the default: both scenarios, 100 contention trials, seed 1; deterministic)"
	/usr/bin/time -f '%e' -o "$tmp/sim.time" "$tmp/steady" simulate >"$tmp/sim.txt" 2>"$tmp/sim.err"
	echo "  exit $?, $(cat "$tmp/sim.time") s"
	cat "$tmp/sim.txt"
	echo
	echo "go -C cmd/steady test -run TestFleetSharesOneBudget -v -count 1 ./internal/simulate"
	go -C cmd/steady test -run TestFleetSharesOneBudget -v -count 1 ./internal/simulate 2>&1 | grep -vE '^=== RUN' | sed 's/^/  /'
fi

# ---------------------------------------------------------------------------
if [ "${FIGURES_SUITE:-0}" = 1 ] && want suite; then
	section "The whole test suite, -race (the README's second command)"
	s0=$(date +%s)
	go test -race -count=1 work >"$tmp/suite.txt" 2>&1
	echo "  exit $?, $(($(date +%s) - s0)) s"
	grep -E '^(FAIL|---)' "$tmp/suite.txt" | head -20 | sed 's/^/  /'
else
	skipped "the whole test suite's time (the README's second command) was not measured: set FIGURES_SUITE=1"
fi

# ---------------------------------------------------------------------------
printf '\n=== end\n'
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "took:     $(($(date -u +%s) - start)) s"
echo "cut:      timed benchmarks ran $ROUNDS interleaved rounds (the harnesses suggest 6-10); the resumed download $RESUME_BENCH_MB MiB, 5 rounds"
for n in "${cut_notes[@]}"; do echo "cut:      $n"; done
