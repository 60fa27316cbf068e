#!/usr/bin/env bash
# Shows that docs_check.py fails when a checked docs number is edited: copies docs/collectives.md's
# collectives table block (its command and numbers) into a scratch file, checks that it passes,
# then changes one number (1.47 ms -> 1.48 ms) and requires a failure.
# usage: tests/repo/docs_check_selftest.sh [path/to/sgdsim]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-$root/build/sgdsim}"
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
sed -n '/^<!-- docs-check: experiments\/collectives\/table.sh/,/^<!-- \/docs-check -->/p' \
  "$root/docs/collectives.md" > "$d/block.md"
grep -q '^| ring | 8 | 70.01 us / 70.01 us | 1.47 ms / 1.47 ms' "$d/block.md" ||
  { echo "selftest: docs/collectives.md's collectives table block not found as expected"; exit 1; }
/usr/bin/python3 "$root/tests/repo/docs_check.py" --bin "$bin" "$d/block.md" >/dev/null ||
  { echo "selftest: the unedited block fails"; exit 1; }
sed -i 's/^| ring | 8 | 70.01 us \/ 70.01 us | 1.47 ms/| ring | 8 | 70.01 us \/ 70.01 us | 1.48 ms/' "$d/block.md"
if /usr/bin/python3 "$root/tests/repo/docs_check.py" --bin "$bin" "$d/block.md" >/dev/null; then
  echo "selftest: an edited docs number was not caught"; exit 1
fi
echo "selftest: docs_check.py catches an edited docs number"
