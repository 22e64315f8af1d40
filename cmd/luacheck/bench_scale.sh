#!/bin/sh
# Times ours and the real luacheck, as separate processes in the same run,
# on generated scripts of 64 KB to 8 MB of five shapes (scale_test.go):
# many do-blocks with locals in one chunk, many locals in scope, many
# functions, deep nesting, long if-chains. Prints wall time, CPU time
# (user + system: the fair figure on a shared machine) and peak memory
# per file with each exit code (1: warnings; 124: stopped after the
# timeout, and '-' for the larger files of that shape, not run; anything
# else from the real one: it crashed), and ours' time per MB.
# Usage: cmd/luacheck/bench_scale.sh [max_bytes] [real_timeout_s]
#   (from the repo root; needs lua-check and /usr/bin/time installed)
set -eu
max=${1:-8388608}
limit=${2:-120}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/corpus"
REDLUA_SCALE_CORPUS="$dir/corpus" REDLUA_SCALE_MAX="$max" go test ./cmd/luacheck -run '^TestWriteScaleCorpus$' -count=1 >/dev/null
go build -o "$dir/ours" ./cmd/luacheck
# the real luacheck: the first luacheck on PATH that says "Luacheck:"
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

measure() { # command... → "wall_s cpu_s peakKB exitcode" (124: stopped at $limit s)
	/usr/bin/time -f '%e %U %S %M %x' -o "$dir/t" timeout "$limit" "$@" >/dev/null 2>&1 || true
	tail -n 1 "$dir/t" | awk '{ printf "%s %.2f %s %s\n", $1, $2 + $3, $4, $5 }'
}
printf '# load average: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
printf '%-10s %6s %7s %7s %7s %4s %7s %7s %7s %4s %9s\n' shape KB ours_s cpu_s MB exit real_s cpu_s MB exit cpu_s/MB
for f in "$dir"/corpus/*.lua; do
	name=$(basename "$f" .lua)
	shape=${name%-*}
	kb=$(($(wc -c <"$f") / 1024))
	set -- $(measure "$dir/ours" --no-config -qqq "$f")
	os=$1 oc=$2 om=$(($3 / 1024)) ox=$4
	if [ "${slow:-}" = "$shape" ]; then # timed out on a smaller file of this shape
		rs=">$limit" rc=- rm=0 rx=-
	else
		set -- $(measure "$real" --no-config --no-cache --globals KEYS ARGV redis -qqq "$f")
		rs=$1 rc=$2 rm=$(($3 / 1024)) rx=$4
		[ "$rx" = 124 ] && rs=">$limit" slow=$shape
	fi
	printf '%-10s %6d %7s %7s %7d %4s %7s %7s %7d %4s %9.2f\n' "$shape" "$kb" "$os" "$oc" "$om" "$ox" "$rs" "$rc" "$rm" "$rx" "$(echo "$oc * 1024 / $kb" | bc -l)"
done
