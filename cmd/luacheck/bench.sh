#!/bin/sh
# Times the real luacheck and ours on the same 100 generated scripts.
# Usage: cmd/luacheck/bench.sh  (from the repo root; needs lua-check installed)
set -eu
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/corpus"
REDLUA_BENCH_CORPUS="$dir/corpus" go test ./cmd/luacheck -run '^TestWriteBenchCorpus$' -count=1 >/dev/null
go build -o "$dir/ours" ./cmd/luacheck
runs=10
t0=$(date +%s%N)
for _ in $(seq $runs); do luacheck --no-cache --no-config -qqq "$dir/corpus" >/dev/null || true; done
t1=$(date +%s%N)
for _ in $(seq $runs); do "$dir/ours" -qqq "$dir/corpus" >/dev/null || true; done
t2=$(date +%s%N)
echo "luacheck (real): $(( (t1 - t0) / runs / 1000000 )) ms per run over 100 files"
echo "luacheck (ours): $(( (t2 - t1) / runs / 1000000 )) ms per run over 100 files"
