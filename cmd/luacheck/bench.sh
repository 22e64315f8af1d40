#!/bin/sh
# Times the real luacheck and ours on the same 100 generated scripts, and
# on the repository's own hand-written Lua (lua/ and every testdata/, about
# 140 files: scripts, lint's cases, the compat cases).
# Usage: cmd/luacheck/bench.sh [runs]  (from the repo root; needs lua-check and /usr/bin/time)
# CPU time is the fair figure on a shared machine: wall time includes
# waiting for a core.
set -eu
runs=${1:-10}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/corpus"
REDLUA_BENCH_CORPUS="$dir/corpus" go test ./cmd/luacheck -run '^TestWriteBenchCorpus$' -count=1 >/dev/null
go build -o "$dir/ours" ./cmd/luacheck
# the real luacheck: the first luacheck on PATH that says "Luacheck:" (ours
# may come first, from go install)
real=
IFS=:
for p in $PATH; do
	if [ -x "$p/luacheck" ] && "$p/luacheck" --version 2>/dev/null | grep -q '^Luacheck:'; then
		real=$p/luacheck
		break
	fi
done
unset IFS
[ -n "$real" ] || { echo "no real luacheck on PATH (apt-get install lua-check)" >&2; exit 1; }
n=$(ls "$dir/corpus" | wc -l)
# A config like the one a project would keep next to its scripts.
printf 'ignore = {"212/_.*"}\nfiles["**/*.v1.lua"] = {max_line_length = 140}\n' >"$dir/rc"

time_it() { # label, command... → wall and CPU (user + system) time per run
	label=$1
	shift
	t0=$(date +%s%N)
	/usr/bin/time -f '%U %S' -o "$dir/cpu" sh -c 'n=$1; shift; for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 || true; done' sh "$runs" "$@"
	t1=$(date +%s%N)
	cpu=$(awk -v r="$runs" '{ printf "%d", ($1 + $2) * 1000 / r }' "$dir/cpu")
	printf '%-44s %5d ms wall %5d ms CPU per run over %d files\n' "$label" $(((t1 - t0) / runs / 1000000)) "$cpu" "$n"
}
time_it "luacheck (real, --no-config)" "$real" --no-cache --no-config -qqq "$dir/corpus"
time_it "luacheck (real, with a config)" "$real" --no-cache --config "$dir/rc" -qqq "$dir/corpus"
time_it "luacheck (ours, --no-config)" "$dir/ours" --no-config -qqq "$dir/corpus"
time_it "luacheck (ours, with a config)" "$dir/ours" --config "$dir/rc" -qqq "$dir/corpus"
time_it "luacheck (ours, --no-config, GOMAXPROCS=1)" env GOMAXPROCS=1 "$dir/ours" --no-config -qqq "$dir/corpus"

# The repository's own Lua files, copied under one directory (each in a
# subdirectory of its own, keeping its name).
mkdir "$dir/repo"
i=0
for f in $(git ls-files '*.lua'); do
	i=$((i + 1))
	mkdir "$dir/repo/$i"
	cp "$f" "$dir/repo/$i/"
done
n=$i
time_it "luacheck (real, repo files)" "$real" --no-cache --no-config -qqq "$dir/repo"
time_it "luacheck (ours, repo files)" "$dir/ours" --no-config -qqq "$dir/repo"
