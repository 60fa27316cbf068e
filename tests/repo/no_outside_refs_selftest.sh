#!/usr/bin/env bash
# Shows that no_outside_refs.sh can fail: a scratch tree (not a git checkout, so the walk is
# used) and a scratch git checkout, each with one planted reference, must both be refused, and
# the same trees without it accepted.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
mkdir -p "$d/walk/docs" "$d/git/docs"
trees=walk
command -v git >/dev/null && trees="walk git"   # without git only the walk can be checked
for t in $trees; do printf 'clean\n' > "$d/$t/docs/ok.md"; done
[ "$trees" = walk ] || { git -C "$d/git" init -q && git -C "$d/git" add docs/ok.md; }
for t in $trees; do
  "$here/no_outside_refs.sh" "$d/$t" >/dev/null || { echo "selftest: clean $t tree refused"; exit 1; }
  printf 'see ../%s/validation/SOURCES.md\n' shared > "$d/$t/docs/bad.md"
  [ $t = git ] && git -C "$d/git" add docs/bad.md
  if "$here/no_outside_refs.sh" "$d/$t" >/dev/null 2>&1; then echo "selftest: planted ref in $t tree not found"; exit 1; fi
done
echo "selftest: no_outside_refs.sh refuses planted references ($trees)"
