#!/usr/bin/env bash
# Installs into a scratch prefix, moves the prefix, and runs examples from there with the
# installed binary (working directory outside the source tree): relative data paths must
# resolve in <prefix>/share/sgdsim next to the moved binary, or in $SGDSIM_DATA_DIR.
# usage: tests/repo/install_test.sh BUILD_DIR
set -euo pipefail
build="$1"
D=$(mktemp -d); trap 'rm -rf "$D"' EXIT
cmake --install "$build" --prefix "$D/a" >/dev/null
mv "$D/a" "$D/b"
cd "$D"
bin="$D/b/bin/sgdsim"; share="$D/b/share/sgdsim"
"$bin" run "$share/examples/02-minimal.json" --out "$D/out02" --quiet
"$bin" run "$share/examples/07-platform-file.json" --out "$D/out07" --quiet
for f in summary.json iterations.csv; do [ -s "$D/out02/$f" ] || { echo "install_test: no $f"; exit 1; }; done
# The lookup names the moved prefix (not the source tree) when a profile is missing ...
set +e
msg=$("$bin" run "$share/examples/02-minimal.json" --set model=no-such-profile --out "$D/x" 2>&1); rc=$?
set -e
[ $rc = 2 ] || { echo "install_test: exit $rc for a missing profile, expected 2"; exit 1; }
grep -qF "$share/models/profiles/no-such-profile.json" <<<"$msg" ||
  { echo "install_test: the lookup did not try $share: $msg"; exit 1; }
# ... and SGDSIM_DATA_DIR overrides it.
set +e
msg=$(SGDSIM_DATA_DIR="$D/elsewhere" "$bin" run "$share/examples/02-minimal.json" --out "$D/y" 2>&1); rc=$?
set -e
[ $rc = 2 ] && grep -qF "$D/elsewhere/models/profiles/resnet50.json" <<<"$msg" ||
  { echo "install_test: SGDSIM_DATA_DIR not used (exit $rc): $msg"; exit 1; }
# The analysis scripts are installed and run on the installed results.
/usr/bin/python3 "$share/analysis/plot_timeline.py" "$D/out02" --out "$D/out02/timeline.png" >/dev/null
[ -s "$D/out02/timeline.png" ] || { echo "install_test: no timeline.png"; exit 1; }
# The Python module (when built) imports from the moved prefix and finds its data there.
if [ -d "$D/b/lib/python3/dist-packages/sgdsim" ]; then
  out=$(PYTHONPATH="$D/b/lib/python3/dist-packages" /usr/bin/python3 -c "import sgdsim; print(sgdsim.__file__); r = sgdsim.run('$share/examples/02-minimal.json'); print(r.iterations.head())")
  grep -qF "$D/b/lib/python3/dist-packages/sgdsim/__init__.py" <<<"$out" && grep -q "worker" <<<"$out" ||
    { echo "install_test: the installed Python module did not run: $out"; exit 1; }
  set +e
  msg=$(PYTHONPATH="$D/b/lib/python3/dist-packages" /usr/bin/python3 -c "import sgdsim; sgdsim.run('$share/examples/02-minimal.json', set={'model': 'no-such-profile'})" 2>&1)
  set -e
  grep -qF "$share/models/profiles/no-such-profile.json" <<<"$msg" ||
    { echo "install_test: the installed Python module did not look in $share: $msg"; exit 1; }
  echo "install_test: the installed Python module ran example 02 from $D/b"
fi
echo "install_test: installed, moved to $D/b, ran examples 02 and 07 and plot_timeline.py from there"
