#!/usr/bin/env bash
# The layers of src/ (DEVELOPER.md, "The map"), lowest first.  A file may
# include ndd's headers of its own layer or of lower ones, never of a higher
# one, and names each by its layer ("sketch/minhash.h"); base/ndd_limits.h
# includes nothing of ndd; src/ndd.c, on top, may include any.  Every file
# of src/ is in a folder of the list, so a new folder is placed on purpose.
# Usage: test/scripts/layers.sh; ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1

layers=(base text sketch keys index sqlgen features)
passed=0
failed=0
check() {	# check WHAT ERRORS
	if [ -z "$2" ]; then
		passed=$((passed + 1)); echo "ok - $1"
	else
		failed=$((failed + 1)); echo "not ok - $1:"; echo "$2" | sed 's/^/#   /'
	fi
}
rank() {	# rank LAYER: its place in the list, 99 for none
	local i
	for i in "${!layers[@]}"; do [ "${layers[$i]}" = "$1" ] && { echo "$i"; return; }; done
	echo 99
}

# every file of src/ stands in a layer's folder, or is ndd.c
strays=$(find src -name '*.[ch]' | grep -vxE "src/ndd\.c|src/($(IFS='|'; echo "${layers[*]}"))/[a-z_0-9]+\.[ch]")
check "every file of src/ is in a layer's folder (${layers[*]})" "$strays"

for file in src/ndd.c $(for l in "${layers[@]}"; do ls src/"$l"/*.[ch] 2>/dev/null; done); do
	layer=${file#src/}
	layer=${layer%%/*}
	[ "$file" = src/ndd.c ] && own=${#layers[@]} || own=$(rank "$layer")
	errors=
	while read -r header; do
		if [ -f "src/$header" ] && [[ $header == */* ]]; then
			[ "$(rank "${header%%/*}")" -le "$own" ] || errors+="includes $header, a higher layer"$'\n'
			[ "$file" != src/base/ndd_limits.h ] || errors+="includes $header: ndd_limits.h includes nothing of ndd"$'\n'
		elif [ -f "src/$header" ] || [ -f "$(dirname "$file")/$header" ] || ls src/*/"$header" >/dev/null 2>&1; then
			errors+="includes \"$header\" without its layer"$'\n'
		fi
	done < <(sed -n 's/^#include "\(.*\)"$/\1/p' "$file")
	check "$file includes only its layer and lower ones" "${errors%$'\n'}"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
