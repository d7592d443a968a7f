#!/usr/bin/env bash
# No C function in src/ is longer than 100 lines (STYLE.md: under about 60,
# none over 100; issue 38).  A function counts from the line that names it
# to its closing brace, as pgindent lays functions out (the name at the
# start of a line, the braces alone in the first column).  One check per
# source file, which names its longest function; ends with "N passed, N
# failed".  Reads the sources only: no PostgreSQL, no root.
# Usage: test/scripts/function_lengths.sh [LIMIT] (100 when not given).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
limit=${1:-100}
passed=0
failed=0

# "functions longest-lines longest-name" and then one line per function
# over the limit, "name lines", for one file
measure() {
	awk -v limit="$limit" '
		# the lines a macro continues (a function a macro defines is not counted)
		continued { continued = /\\$/; next }
		{ continued = /\\$/ }
		continued { next }
		!body && /^[A-Za-z_][A-Za-z0-9_]*\(/ { name = substr($0, 1, index($0, "(") - 1); start = FNR; named = !/;[ \t]*$/; next }
		named && !body && /;[ \t]*$/ { named = 0 }	# a declaration, not a definition
		named && /^\{/ { body = 1 }
		body && /^\}/ {
			lines = FNR - start + 1
			n++
			if (lines > longest) { longest = lines; longest_name = name }
			if (lines > limit) over = over sprintf("%s %d\n", name, lines)
			body = 0; named = 0
		}
		END { printf "%d %d %s\n%s", n, longest, longest_name, over }' "$1"
}

while IFS= read -r file; do
	result=$(measure "$top/$file")
	read -r n longest name <<<"$(head -n 1 <<<"$result")"
	over=$(tail -n +2 <<<"$result" | awk 'NF { printf "%s%s (%d lines)", sep, $1, $2; sep = ", " }')
	if [ "$n" -eq 0 ]; then
		passed=$((passed + 1)); echo "ok - $file: no function"
	elif [ -z "$over" ]; then
		[ "$n" -eq 1 ] && what="1 function," || what="$n functions, the longest"
		passed=$((passed + 1)); echo "ok - $file: $what $name ($longest lines)"
	else
		failed=$((failed + 1)); echo "not ok - $file: over $limit lines: $over"
	fi
done < <(cd "$top" && find src -name '*.c' | sort)

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
