#!/bin/sh
# Times the real luacheck and ours on the same 100 generated scripts.
# Usage: cmd/luacheck/bench.sh [runs]  (from the repo root; needs lua-check installed)
set -eu
runs=${1:-10}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/corpus"
REDLUA_BENCH_CORPUS="$dir/corpus" go test ./cmd/luacheck -run '^TestWriteBenchCorpus$' -count=1 >/dev/null
go build -o "$dir/ours" ./cmd/luacheck
n=$(ls "$dir/corpus" | wc -l)
# A config like the one a project would keep next to its scripts.
printf 'ignore = {"212/_.*"}\nfiles["**/*.v1.lua"] = {max_line_length = 140}\n' >"$dir/rc"

time_it() { # label, command...
	label=$1
	shift
	t0=$(date +%s%N)
	for _ in $(seq "$runs"); do "$@" >/dev/null 2>&1 || true; done
	t1=$(date +%s%N)
	printf '%-44s %5d ms per run over %d files\n' "$label" $(((t1 - t0) / runs / 1000000)) "$n"
}
time_it "luacheck (real, --no-config)" luacheck --no-cache --no-config -qqq "$dir/corpus"
time_it "luacheck (real, with a config)" luacheck --no-cache --config "$dir/rc" -qqq "$dir/corpus"
time_it "luacheck (ours, --no-config)" "$dir/ours" --no-config -qqq "$dir/corpus"
time_it "luacheck (ours, with a config)" "$dir/ours" --config "$dir/rc" -qqq "$dir/corpus"
time_it "luacheck (ours, --no-config, GOMAXPROCS=1)" env GOMAXPROCS=1 "$dir/ours" --no-config -qqq "$dir/corpus"
