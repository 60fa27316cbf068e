"""Loaders and figure helpers shared by the analysis scripts; they read sgdsim result files only.

A run directory (`sgdsim run ... --out DIR`) holds summary.json, iterations.csv,
convergence.csv (with a training section), timeline.json and scenario.resolved.json. A sweep
directory holds results.jsonl: one summary object per line, with the swept values under
"params" ({dotted.path: value}). See README.md "Outputs" for the meaning of every field.

Every loader turns a missing or malformed file into SystemExit with a one-line message that
names the file, so a script fails like the sgdsim CLI does instead of with a traceback.
"""
import argparse
import json
import math
import numbers
import os
import sys

import matplotlib

matplotlib.use("Agg")  # headless: the scripts only ever write PNG files
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

SUMMARY = "summary.json"
RESOLVED = "scenario.resolved.json"
RESULTS_JSONL = "results.jsonl"

# Every summary.json has these (DESIGN.md section 8); a JSON object without them is not one.
REQUIRED_SUMMARY_KEYS = ("scenario", "scheme", "workers")
CONVERGENCE_COLUMNS = ("time_s", "iteration", "loss", "accuracy")
ITERATION_COLUMNS = ("worker", "iteration", "start_s", "end_s", "iteration_time_s", "compute_s",
                     "comm_s", "update_s", "exposed_comm_s")

# Kept whole rather than flattened: a histogram's keys are data (staleness values), not fields.
UNFLATTENED = {"staleness.histogram"}

FIGSIZE = (7, 4.5)
DPI = 150


def fail(path, message):
    """Stops the script with 'PATH: MESSAGE' (exit status 1, message on stderr)."""
    raise SystemExit(f"{path}: {message}")


def read_json(path, what="a JSON object"):
    """Parses a JSON file that must hold one object."""
    if not os.path.exists(path):
        fail(path, "not found")
    try:
        with open(path) as f:
            data = json.load(f)
    except json.JSONDecodeError as e:
        fail(path, f"malformed JSON at line {e.lineno} column {e.colno}: {e.msg}")
    except (OSError, UnicodeDecodeError) as e:
        fail(path, f"cannot read: {e}")
    if not isinstance(data, dict):
        fail(path, f"expected {what}, found a JSON {type(data).__name__}")
    return data


def flatten(obj, prefix=""):
    """{"a": {"b": 1}} -> {"a.b": 1}; lists and the keys in UNFLATTENED stay whole."""
    flat = {}
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and name not in UNFLATTENED:
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def _check_summary(summary, source):
    missing = [k for k in REQUIRED_SUMMARY_KEYS if k not in summary]
    if missing:
        fail(source, f"not an sgdsim summary: missing {', '.join(missing)}")


def _summary_path(path):
    return path if os.path.isfile(path) else os.path.join(path, SUMMARY)


def load_summary(run_dir):
    """The summary.json of a run directory (or the path of a summary.json itself), as a dict."""
    path = _summary_path(run_dir)
    if not os.path.isdir(run_dir) and not os.path.isfile(run_dir):
        fail(run_dir, "no such run directory")
    summary = read_json(path, "an sgdsim summary object")
    _check_summary(summary, path)
    return summary


def _nodes(workers, per_node):
    """Nodes a run uses: workers fill per_node devices per node (block or cyclic alike)."""
    try:
        return math.ceil(int(workers) / int(per_node))
    except (TypeError, ValueError, ZeroDivisionError):
        return float("nan")


def _row(summary, source, run, params=None, resolved=None):
    row = flatten(summary)
    row["source"] = source
    row["run"] = run
    if params:
        row.update(flatten(params, "params."))
    if resolved:
        row.update(flatten(resolved, "config."))
    if "nodes" not in row:
        per_node = row.get("params.workers.per_node", row.get("config.workers.per_node"))
        row["nodes"] = _nodes(row.get("workers"), per_node)
    return row


def _run_dir_row(path):
    summary = load_summary(path)
    run_dir = os.path.dirname(path) if os.path.isfile(path) else path
    resolved_path = os.path.join(run_dir, RESOLVED)
    # The resolved scenario is optional (older or hand-copied results); it supplies the
    # config.* columns (e.g. config.workers.per_node, config.scheme.predictor).
    resolved = read_json(resolved_path) if os.path.exists(resolved_path) else None
    name = os.path.basename(os.path.normpath(run_dir))
    return _row(summary, _summary_path(path), name, resolved=resolved)


def read_jsonl(path):
    """The objects of a results.jsonl, one per non-blank line."""
    if os.path.isdir(path):
        path = os.path.join(path, RESULTS_JSONL)
    if not os.path.exists(path):
        fail(path, "not found")
    records = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                fail(f"{path}:{lineno}", f"malformed JSON at column {e.colno}: {e.msg}")
            if not isinstance(record, dict):
                fail(f"{path}:{lineno}", f"expected a summary object, found a JSON {type(record).__name__}")
            if "error" in record and "scenario" not in record:
                # A sweep may record a failed run instead of its summary: nothing to plot.
                print(f"note: {path}:{lineno}: failed run skipped: {record['error']}", file=sys.stderr)
                continue
            _check_summary(record, f"{path}:{lineno}")
            if not isinstance(record.get("params", {}), dict):
                fail(f"{path}:{lineno}", '"params" must be an object {"dotted.path": value}')
            records.append((lineno, record))
    if not records:
        fail(path, "no results (empty, or only failed runs)")
    return path, records


def _params_name(params):
    return ", ".join(f"{k}={v}" for k, v in params.items())


def load_jsonl(path):
    """A sweep's results.jsonl (or its directory) as a DataFrame, one row per line.

    Summary fields are flattened with dots (iteration_time_s.mean); swept values become
    params.<dotted.path> columns.
    """
    path, records = read_jsonl(path)
    rows = []
    for lineno, record in records:
        params = record.pop("params", {}) or {}
        run = _params_name(params) or f"{record['scenario']} #{lineno}"
        rows.append(_row(record, f"{path}:{lineno}", run, params=params))
    return pd.DataFrame(rows)


def load_runs(paths):
    """Run directories, summary.json files, results.jsonl files or sweep directories, as one
    DataFrame of flattened summaries (see load_jsonl); columns source and run name each row."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    frames = []
    for path in map(str, paths):
        is_sweep_dir = os.path.isdir(path) and not os.path.exists(os.path.join(path, SUMMARY)) \
            and os.path.exists(os.path.join(path, RESULTS_JSONL))
        if path.endswith(".jsonl") or is_sweep_dir:
            frames.append(load_jsonl(path))
        elif os.path.isdir(path) or os.path.isfile(path):
            frames.append(pd.DataFrame([_run_dir_row(path)]))
        else:
            fail(path, "no such run directory, summary.json or results.jsonl")
    if not frames:
        raise SystemExit("no result paths given")
    return pd.concat(frames, ignore_index=True)


def load_convergence(run_dir):
    """convergence.csv of a run: columns time_s (simulated), iteration, loss, accuracy (0-1)."""
    path = os.path.join(run_dir, "convergence.csv")
    return _read_csv(path, CONVERGENCE_COLUMNS, "the run needs a training section")


def load_iterations(run_dir):
    """iterations.csv of a run: one row per worker and iteration."""
    return _read_csv(os.path.join(run_dir, "iterations.csv"), ITERATION_COLUMNS)


def _read_csv(path, columns, hint=None):
    if not os.path.exists(path):
        fail(path, "not found" + (f" ({hint})" if hint else ""))
    try:
        df = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        fail(path, f"malformed CSV: {str(e).strip()}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        fail(path, f"missing column(s) {', '.join(missing)} (expected {', '.join(columns)})")
    numeric = df[list(columns)].apply(pd.to_numeric, errors="coerce")
    # Empty cells and "nan" (a diverged loss) are read as NaN and allowed; text is not.
    garbled = (numeric.isna() & df[list(columns)].notna()).any(axis=1)
    if garbled.any():
        fail(path, f"non-numeric value on line {garbled.idxmax() + 2}")
    df[list(columns)] = numeric
    return df


def load_timeline(run_dir):
    """The complete ("X") events of a run's timeline.json (Chrome trace) as a DataFrame with
    columns name, cat, pid (worker), tid (0 compute, 1 communication, 2 server applies),
    ts and dur (microseconds of simulated time), iteration, args (the event's args dict)."""
    path = os.path.join(run_dir, "timeline.json")
    if not os.path.exists(path):
        fail(path, "not found (run with output.timeline true)")
    trace = read_json(path, "a Chrome trace object")
    events = trace.get("traceEvents")
    if not isinstance(events, list):
        fail(path, 'not a Chrome trace: no "traceEvents" list')
    rows = []
    for i, e in enumerate(events):
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        try:
            rows.append({"name": e["name"], "cat": e.get("cat", ""), "pid": int(e["pid"]), "tid": int(e["tid"]),
                         "ts": float(e["ts"]), "dur": float(e["dur"]),
                         "iteration": int(e["args"]["iteration"]), "args": e["args"]})
        except (KeyError, TypeError, ValueError) as err:
            fail(path, f"traceEvents[{i}]: complete event without a valid {err}")
    if not rows:
        fail(path, "no complete (ph X) events")
    return pd.DataFrame(rows)


def parser(doc):
    """An argument parser whose --help shows the script's docstring: its first line as the
    description, the paragraphs after the usage block as the epilog."""
    paragraphs = doc.strip().split("\n\n")
    body = [p for p in paragraphs[1:] if not p.startswith("usage:")]
    return argparse.ArgumentParser(description=paragraphs[0].splitlines()[0], epilog="\n\n".join(body) or None,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def add_where_option(parser):
    parser.add_argument("--where", action="append", default=[], metavar="FIELD=VALUE",
                        help="keep only results whose FIELD has this value (e.g. scheme=sync, "
                             "workers.count=8); repeatable, all must hold")


def select(df, conditions):
    """Rows matching every 'FIELD=VALUE' (values compared as text: 8 matches 8 and 8.0)."""
    for condition in conditions:
        name, sep, value = condition.partition("=")
        if not sep:
            raise SystemExit(f"--where '{condition}': expected FIELD=VALUE")
        col = column(df, name.strip(), "--where field")
        df = df[df[col].map(fmt) == value.strip()]
        if df.empty:
            raise SystemExit(f"--where '{condition}': no result matches")
    return df


def column(df, name, what="field"):
    """The column for a field name: exact (iteration_time_s.mean), else a swept value
    (params.NAME) or a resolved-scenario value (config.NAME), so "workers.count" works for
    sweeps and run directories alike."""
    for candidate in (name, f"params.{name}", f"config.{name}"):
        if candidate in df.columns:
            return candidate
    known = sorted(c for c in df.columns if not c.startswith("config."))
    raise SystemExit(f"no {what} '{name}' in the results (known: {', '.join(known)})")


def require(df, col, what):
    """Stops naming the first result that lacks a value for col."""
    if col not in df.columns:
        fail(df["source"].iloc[0], f"no {col} ({what})")
    missing = df[df[col].isna()]
    if len(missing):
        fail(missing["source"].iloc[0], f"no {col} ({what})")


def varying(rows):
    """Swept, scenario and scheme fields whose values differ among rows (seed excluded: runs
    differing only in it are repeats)."""
    cols = [c for c in rows.columns if c.startswith(("params.", "config.")) or c in ("scheme", "workers")]
    return [c for c in cols if c not in ("params.seed", "config.seed")
            and rows[c].map(lambda v: "" if isnan(v) else repr(v)).nunique() > 1]


def ordered(values):
    """Distinct values in a readable order: numeric ones sorted, others (e.g. "25MB") in the
    order they first appear, which is the sweep file's order."""
    distinct = list(dict.fromkeys(v for v in values if not isnan(v)))
    if all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in distinct):
        return sorted(distinct)
    return distinct


def isnan(v):
    return v is None or (isinstance(v, numbers.Real) and math.isnan(v))


def scheme_label(scheme):
    """'pseudo_sync (arrses)' from a resolved scenario's scheme object."""
    text = scheme["type"]
    if "predictor" in scheme:
        text += f" ({scheme['predictor']})"
    if "servers" in scheme:
        text += f" ({scheme['servers']} servers)"
    if "staleness" in scheme:
        text += f" (s = {scheme['staleness']})"
    if "period" in scheme:
        text += f" (H = {scheme['period']})"
    return text


def row_label(row, fields=None):
    """A run's label: the given fields' values joined, else 'scheme, N workers'."""
    if fields:
        return ", ".join(fmt(row[f]) for f in fields)
    workers = int(row["workers"])
    return f"{row['scheme']}, {workers} worker{'s' if workers != 1 else ''}"


def fmt(v):
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def value_scale(field):
    """(factor, unit) to display a summary field: fractions in %, per-iteration times in ms."""
    if "efficiency" in field or "accuracy" in field:
        return 100.0, "%"
    if field.endswith("samples_per_s"):
        return 1.0, "samples/s"
    if field.startswith("iteration_time_s") or field.endswith("_s_per_iter"):
        return 1e3, "ms"
    if field.endswith("_s"):
        return 1.0, "s"
    return 1.0, ""


def new_figure(ncols=1, figsize=None, layout=None):
    """A figure of ncols panels side by side, FIGSIZE each (a bit narrower when several), with a grid."""
    fig, axes = plt.subplots(1, ncols, figsize=figsize or (FIGSIZE[0] * (1 + 0.75 * (ncols - 1)), FIGSIZE[1]),
                             squeeze=False, layout=layout)
    for ax in axes[0]:
        ax.grid(alpha=0.3)
        ax.set_axisbelow(True)
    return fig, list(axes[0])


def save_figure(fig, out, dpi=DPI, tight=True):
    """Writes the PNG under a temporary name and renames it, so a failed plot leaves no half
    file. tight=False for figures laid out otherwise (constrained layout, colour bars)."""
    directory = os.path.dirname(out)
    if directory and not os.path.isdir(directory):
        fail(out, f"output directory {directory} does not exist")
    if tight:
        fig.tight_layout()
    tmp = out + ".tmp.png"
    fig.savefig(tmp, dpi=dpi)
    plt.close(fig)
    os.replace(tmp, out)
    print(out)
    return out
