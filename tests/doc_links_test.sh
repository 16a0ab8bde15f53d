#!/usr/bin/env bash
# Every relative link in README.md and docs/*.md resolves: the file (or directory) exists,
# and a #anchor names a heading of the target Markdown file, as GitHub makes anchors from
# headings (lower case; everything but letters, digits, spaces, '-' and '_' dropped; spaces
# become '-'; a repeated heading gets -1, -2, ...). Links in code blocks and code spans are
# not links and are skipped, as are http(s) and mailto links.
# Usage: doc_links_test.sh [SOURCE_DIR]  (default: the repository this script is in)
set -euo pipefail
export LC_ALL=C
src=${1:-"$(dirname "$0")/.."}
cd "$src"

# The anchors of Markdown file $1, one a line.
anchors() {
  awk '
    /^ *(```|~~~)/ { fence = !fence; next }
    fence || !/^#+ / { next }
    {
      s = $0
      sub(/^#+ +/, "", s); sub(/ +#* *$/, "", s)
      s = tolower(s)
      gsub(/[^a-z0-9 _-]/, "", s)
      gsub(/ /, "-", s)
      n = seen[s]++
      print (n ? s "-" n : s)
    }' "$1"
}

# "FILE:LINE:TARGET" for every link of Markdown file $1 outside code.
links() {
  awk -v file="$1" '
    /^ *(```|~~~)/ { fence = !fence; next }
    fence { next }
    {
      s = $0
      gsub(/`[^`]*`/, "", s)
      while (match(s, /\]\([^) ]+\)/)) {
        print file ":" NR ":" substr(s, RSTART + 2, RLENGTH - 3)
        s = substr(s, RSTART + RLENGTH)
      }
    }' "$1"
}

checked=0
failures=0
fail() {
  echo "FAIL: $1" >&2
  failures=$((failures + 1))
}
files=(README.md docs/*.md)
for f in "${files[@]}"; do
  while IFS= read -r entry; do
    target=${entry#*:*:}
    where=${entry%:"$target"}
    case $target in http://* | https://* | mailto:*) continue ;; esac
    checked=$((checked + 1))
    path=${target%%#*}
    anchor=
    [[ $target == *"#"* ]] && anchor=${target#*#}
    if [[ -z $path ]]; then
      path=$f
    else
      path=$(dirname "$f")/$path
    fi
    if [[ ! -e $path ]]; then
      fail "$where: $target: no such file $path"
      continue
    fi
    if [[ -n $anchor ]]; then
      if [[ $path != *.md ]]; then
        fail "$where: $target: an anchor into a file that is not Markdown"
      elif ! anchors "$path" | grep -qxF -- "$anchor"; then
        fail "$where: $target: $path has no heading with anchor #$anchor"
      fi
    fi
  done < <(links "$f")
done
if ((checked == 0)); then
  fail "no relative link found in ${files[*]}: the check would prove nothing"
fi
echo "$checked relative links checked in ${#files[@]} files, $failures broken"
((failures == 0))
