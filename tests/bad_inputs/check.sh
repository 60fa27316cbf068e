#!/usr/bin/env bash
# Runs every bad-input case of tests/bad_inputs/cases.json against its sgdsim command ("command":
# run (default), sweep, trace or validate) and checks the project rule for bad input: exit code 2,
# exactly one line on stderr, the line names the input file (or the case's "names" text: a
# referenced profile/platform file, "--set" or "--cfg", when the error lies there) and contains
# the case's "expect" text, and nothing is left behind: the --out directory (run, sweep,
# validate) is not created, or, for a case with "out_files" (files put in --out first, e.g.
# foreign content), holds exactly those files unchanged; TMPDIR (a fresh folder per case) stays
# empty; no file appears in or vanishes from tests/bad_inputs; no *.tmp-* file is anywhere.
# A case's "issue" field names the issue that added it (count: see README, Hardening).
#
# usage: tests/bad_inputs/check.sh [-v] [NAME_SUBSTRING...]
#   -v      print stderr (and stdout, if any) of failing cases
#   NAME    run only the cases whose name contains one of the given substrings
# environment: SGDSIM=path/to/sgdsim (default: build/sgdsim), TIMEOUT=seconds per case (60)
# Cases run from the repository root, as `SGDSIM COMMAND tests/bad_inputs/FILE [--out DIR] ARGS...`.
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
sgdsim="${SGDSIM:-build/sgdsim}"
timeout_s="${TIMEOUT:-60}"
verbose=0
filters=()
for a in "$@"; do
  case "$a" in
    -v) verbose=1 ;;
    -h|--help) sed -n '2,12p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) filters+=("$a") ;;
  esac
done

cd "$root" || exit 1
if [[ ! -x "$sgdsim" ]]; then
  echo "check.sh: $sgdsim not found or not executable (build first, or set SGDSIM)" >&2
  exit 1
fi

# One shell-quoted line per case: name command file expect names args...
mapfile -t rows < <(/usr/bin/python3 - "$here/cases.json" <<'EOF'
import json, shlex, sys
with open(sys.argv[1]) as f:
    cases = json.load(f)
for c in cases:
    names = c.get("names", c["file"].rsplit("/", 1)[-1])
    words = [c["name"], c.get("command", "run"), c["file"], c["expect"], names,
             json.dumps(c.get("out_files", {}))]
    words += [str(a) for a in c.get("args", [])]
    print(" ".join(shlex.quote(w) for w in words))
EOF
)
if [[ ${#rows[@]} -eq 0 ]]; then
  echo "check.sh: no cases read from $here/cases.json" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/sgdsim-bad-inputs.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# Files put in --out before a case, and a listing of a folder's files with their checksums.
populate() {  # DIR JSON
  /usr/bin/python3 - "$1" "$2" <<'EOF'
import json, os, sys
files = json.loads(sys.argv[2])
for name, text in files.items():
    path = os.path.join(sys.argv[1], name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
EOF
}
listing() { (cd "$1" && find . -type f -exec md5sum {} + | sort -k2); }
inputs_before="$(listing "$here")"

passed=0
failed=0
for row in "${rows[@]}"; do
  eval "set -- $row"
  name="$1" command="$2" file="$3" expect="$4" names="$5" out_files="$6"
  shift 6
  if [[ ${#filters[@]} -gt 0 ]]; then
    keep=0
    for f in "${filters[@]}"; do [[ "$name" == *"$f"* ]] && keep=1; done
    [[ $keep -eq 1 ]] || continue
  fi
  out="$work/$name.out"
  out_args=(--out "$out")
  [[ "$command" == trace ]] && out_args=()  # trace's --out is a profile file, given in args
  out_before=""
  if [[ "$out_files" != "{}" ]]; then
    mkdir -p "$out"
    populate "$out" "$out_files"
    out_before="$(listing "$out")"
  fi
  tmp="$work/tmp"
  rm -rf "$tmp" && mkdir -p "$tmp"
  TMPDIR="$tmp" timeout "$timeout_s" "$sgdsim" "$command" "tests/bad_inputs/$file" \
    "${out_args[@]}" "$@" >"$work/stdout" 2>"$work/stderr" </dev/null
  rc=$?
  problems=()
  [[ $rc -eq 2 ]] || problems+=("exit code $rc, expected 2")
  nlines=$(grep -c '' "$work/stderr")
  if [[ $nlines -ne 1 ]]; then
    problems+=("$nlines lines on stderr, expected 1")
  else
    line="$(cat "$work/stderr")"
    [[ -n "$line" ]] || problems+=("empty stderr line")
    [[ "$line" == *"$names"* ]] || problems+=("stderr does not name $names")
    [[ "$line" == *"$expect"* ]] || problems+=("stderr lacks: $expect")
  fi
  if [[ -n "$out_before" ]]; then
    [[ "$(listing "$out")" == "$out_before" ]] || problems+=("--out directory was changed")
    rm -rf "$out"
  elif [[ -e "$out" ]]; then
    problems+=("--out directory was created")
    rm -rf "$out"
  fi
  [[ -z "$(ls -A "$tmp")" ]] || problems+=("left in TMPDIR: $(ls -A "$tmp" | head -3 | tr '\n' ' ')")
  leftover="$(find "$work" "$here" -name '*.tmp-*' | head -3)"
  [[ -z "$leftover" ]] || problems+=("temporary files left: $leftover")
  inputs_now="$(listing "$here")"
  if [[ "$inputs_now" != "$inputs_before" ]]; then
    problems+=("tests/bad_inputs changed: $(diff <(echo "$inputs_before") <(echo "$inputs_now") | grep '^[<>]' | head -2 | tr '\n' ' ')")
    inputs_before="$inputs_now"
  fi
  if [[ ${#problems[@]} -eq 0 ]]; then
    echo "PASS $name"
    passed=$((passed + 1))
  else
    msg="${problems[0]}"
    for p in "${problems[@]:1}"; do msg="$msg; $p"; done
    echo "FAIL $name: $msg"
    if [[ $verbose -eq 1 ]]; then
      sed 's/^/    stderr| /' "$work/stderr"
      [[ -s "$work/stdout" ]] && sed 's/^/    stdout| /' "$work/stdout"
    fi
    failed=$((failed + 1))
  fi
done

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
