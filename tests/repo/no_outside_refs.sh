#!/usr/bin/env bash
# Fails when a file of the repository refers to the folder next to the checkout that the project
# was first built beside (dot-dot, slash, "shared"): users do not have it, the measured data
# lives in data/ (data/README.md). Lists tracked files with `git ls-files` when SRC is a git
# checkout, else walks SRC (an exported tarball) leaving out build folders and results.
# usage: tests/repo/no_outside_refs.sh [SRC]     exit 0 clean, 1 with the offending lines listed
set -euo pipefail
src="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
# Spelled in two pieces so that this file does not match itself.
pattern='\.\./'"shared"
cd "$src"
if git -C . rev-parse --is-inside-work-tree >/dev/null 2>&1 && [ "$(git rev-parse --show-toplevel)" = "$(pwd -P)" ]; then
  list() { git ls-files -z; }
else
  list() { find . \( -path ./.git -o -name 'build*' -o -name results \) -prune -o -type f -print0; }
fi
hits=$(list | xargs -0 -r grep -HnIE -- "$pattern" 2>/dev/null || true)
if [ -n "$hits" ]; then
  printf '%s\n' "$hits"
  echo "no_outside_refs: the files above refer to the outside folder; use data/ (see data/README.md)" >&2
  exit 1
fi
echo "no_outside_refs: no file of $src refers to the outside shared folder"
