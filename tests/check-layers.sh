#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The layering check (README.md, section Layout).  The README's layer table
# is the source: one row per folder, lowest first, each naming the folders
# its files may include.  Every `#include "FOLDER/..."` in a folder's .c and
# .h files must name its own folder or one its row allows; a row may only
# allow folders listed above it, so includes point down the table and no
# two folders include each other.  Source folders without a row fail too.
#
#   tests/check-layers.sh [TOP]    TOP: the tree to check (default: this one)
#
# Exit 0 when the tree keeps the layering, 1 with one line per violation.
set -u
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
readme=$top/README.md
[ -f "$readme" ] || { echo "layers: no README.md in $top" >&2; exit 1; }

# Rows of the table under "## Layout": | N | `folder/` | what | may include |
table=$(awk '
	/^## / { inside = ($0 == "## Layout") ; next }
	inside && /^\| *[0-9]+ *\|/ { print }
' "$readme")
[ -n "$table" ] || { echo "layers: README.md has no layer table under \"## Layout\"" >&2; exit 1; }

declare -A rank=() allowed=()
order=()
bad=0
while IFS='|' read -r _ num folder _ uses _; do
	num=${num//[[:space:]]/}
	folder=$(grep -oE '`[a-z_]+/`' <<<"$folder" | tr -d '`/')
	[ -n "$folder" ] || continue
	rank[$folder]=$num
	order+=("$folder")
	allowed[$folder]=" $(grep -oE '`[a-z_]+/`' <<<"$uses" | tr -d '`/' | tr '\n' ' ')"
done <<<"$table"

# The table itself: a folder may only use folders listed above it.
for f in "${order[@]}"; do
	for u in ${allowed[$f]}; do
		if [ -z "${rank[$u]:-}" ]; then
			echo "layers: README row $f/ allows $u/, which has no row"; bad=1
		elif [ "${rank[$u]}" -ge "${rank[$f]}" ]; then
			echo "layers: README row $f/ allows $u/, which is not below it"; bad=1
		fi
	done
done

# Every folder with C sources at the top level has a row (tests/ and
# examples/ may include anything and are not layers).
for d in "$top"/*/; do
	d=$(basename "$d")
	case $d in tests|examples|man|build*) continue ;; esac
	ls "$top/$d"/*.[ch] >/dev/null 2>&1 || continue
	[ -n "${rank[$d]:-}" ] || { echo "layers: $d/ has C sources but no row in README.md's layer table"; bad=1; }
done

for f in "${order[@]}"; do
	[ -d "$top/$f" ] || { echo "layers: README row $f/ names a folder that does not exist"; bad=1; continue; }
	while IFS=: read -r file line inc; do
		[ -n "$file" ] || continue
		dep=${inc%%/*}
		[ "$dep" = "$inc" ] && continue	# same-folder include without a folder
		[ "$dep" = "$f" ] && continue
		case "${allowed[$f]} " in *" $dep "*) continue ;; esac
		if [ -n "${rank[$dep]:-}" ] && [ "${rank[$dep]}" -gt "${rank[$f]}" ]; then
			why="$dep/ is above $f/ in the layer table"
		else
			uses=$(for u in ${allowed[$f]}; do printf '%s/ ' "$u"; done)
			uses=${uses% }
			why="$f/ may include only ${uses:-its own headers}"
		fi
		echo "layers: ${file#"$top"/}:$line includes \"$inc\": $why"
		bad=1
	done < <(grep -nHoE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^"]+"' "$top/$f"/*.[ch] 2>/dev/null |
		 sed -E 's/^([^:]+):([0-9]+):.*"([^"]+)"$/\1:\2:\3/')
done
[ $bad -eq 0 ] && echo "layers: ${#order[@]} folders, every include points down the table"
exit $bad
