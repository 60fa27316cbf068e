#!/usr/bin/env bash
# tests/repo/data_check.py can fail: on a copy of data/ it must reject a set folder that
# SOURCES.md does not list, and an nccl-tests log with a broken data line.
# usage: tests/repo/data_check_selftest.sh SGDSIM
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
sgdsim=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { /usr/bin/python3 "$root/tests/repo/data_check.py" "$sgdsim" "$tmp/data"; }
cp -r "$root/data" "$tmp/"
check > /dev/null || { echo "the unchanged copy of data/ fails"; exit 1; }
mkdir "$tmp/data/validation/unlisted-set"
printf 'nodes,busbw_GBps\n2,4.5\n' > "$tmp/data/validation/unlisted-set/busbw.csv"
if out=$(check); then echo "a set without a SOURCES.md entry passed"; exit 1; fi
grep -q "validation/unlisted-set/ has no '## unlisted-set/' entry" <<< "$out"
rm -r "$tmp/data/validation/unlisted-set"
sed -i 's/ 163\.3 / x /' "$tmp/data/calibration/nccl-tests-aws-p3dn-tcp/2p3dn.2GPUs.log"
if out=$(check); then echo "a broken nccl-tests line passed"; exit 1; fi
grep -q "2p3dn.2GPUs.log: .*line 10: expected an nccl-tests data line" <<< "$out"
echo "data_check rejects an unlisted set and a broken log"
