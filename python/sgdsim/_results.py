"""Reading sgdsim's output files into Python objects (pandas DataFrames and dicts)."""
import json
import os

from . import _sgdsim

# Unit kinds tried for a column of unit strings, with the suffix of the numeric column
# (the project's unit-in-name convention: bandwidth_Bps, latency_s, size_bytes, speed_flops).
_KINDS = [("bandwidth", "_Bps"), ("time", "_s"), ("size", "_bytes"), ("speed", "_flops")]


def read_csv_or_none(path):
    """A CSV file as a DataFrame, or None when it does not exist."""
    import pandas as pd
    return pd.read_csv(path) if os.path.exists(path) else None


def read_timeline(path):
    """timeline.json (Chrome trace events) as a DataFrame of its complete ("X") events with
    name, cat, pid (worker), tid, ts_us and dur_us; None when the run wrote no timeline."""
    import pandas as pd
    if not os.path.exists(path):
        return None
    with open(path) as f:
        events = json.load(f).get("traceEvents", [])
    rows = [e for e in events if e.get("ph") == "X"]
    frame = pd.DataFrame(rows)
    return frame.rename(columns={"ts": "ts_us", "dur": "dur_us"})


def read_sweep_results(folder):
    """A sweep's results as a DataFrame: results.csv's columns in its order (run, status,
    error, key, params.<path>..., the summary's scalars flattened with '.') with the exact
    values of results.jsonl."""
    import csv
    import pandas as pd
    with open(os.path.join(folder, "results.csv"), newline="") as f:
        columns = next(csv.reader(f))
    with open(os.path.join(folder, "results.jsonl")) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    rows = []
    for line in lines:
        flat = {}
        params = line.get("params", {})
        for key, value in line.items():
            if key != "params":
                _flatten(key, value, flat)
        for path, value in params.items():
            flat["params." + path] = value
        rows.append(flat)
    return pd.DataFrame([{c: r.get(c) for c in columns} for r in rows], columns=columns)


def _flatten(prefix, value, out):
    """Scalars of nested dicts as "a.b.c" keys (lists are left out, as in results.csv)."""
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(prefix + "." + k, v, out)
    elif not isinstance(value, list):
        out[prefix] = value


def _numeric(values):
    """(suffix, numbers) when every value is a unit string of one kind, else None."""
    texts = [v for v in values if isinstance(v, str)]
    if not texts or len(texts) != len([v for v in values if v == v]):  # NaN != NaN
        return None
    for kind, suffix in _KINDS:
        parsed = [_sgdsim.parse_quantity(kind, t) for t in texts]
        if all(p is not None for p in parsed):
            lookup = dict(zip(texts, parsed))
            return suffix, [lookup.get(v, float("nan")) if isinstance(v, str) else float("nan")
                            for v in values]
    return None


def add_numeric_columns(frame):
    """Adds, right after each column of unit strings ("10Gbps", "1us", "100MB", "15Tf"), its
    value in base units (B/s, s, bytes, flop/s) named with the unit's suffix."""
    for col in list(frame.columns):
        if frame[col].dtype != object:
            continue
        found = _numeric(list(frame[col]))
        if found is None:
            continue
        suffix, numbers = found
        name = col + suffix
        if name not in frame.columns:
            frame.insert(frame.columns.get_loc(col) + 1, name, numbers)
    return frame


class Result:
    """One simulation's outputs: `summary` (dict, summary.json), `iterations` (DataFrame,
    iterations.csv), `convergence` (DataFrame or None, convergence.csv), `timeline`
    (DataFrame or None, timeline.json's events), `scenario` (scenario.resolved.json) and
    `out` (the output folder, or None when it was removed)."""

    def __init__(self, summary, iterations, convergence, timeline, scenario, out):
        self.summary = summary
        self.iterations = iterations
        self.convergence = convergence
        self.timeline = timeline
        self.scenario = scenario
        self.out = out

    @classmethod
    def load(cls, folder, out):
        """Reads the files `sgdsim run` wrote into `folder`."""
        import pandas as pd
        with open(os.path.join(folder, "summary.json")) as f:
            summary = json.load(f)
        with open(os.path.join(folder, "scenario.resolved.json")) as f:
            scenario = json.load(f)
        return cls(summary, pd.read_csv(os.path.join(folder, "iterations.csv")),
                   read_csv_or_none(os.path.join(folder, "convergence.csv")),
                   read_timeline(os.path.join(folder, "timeline.json")), scenario, out)

    def __repr__(self):
        it = self.summary.get("iteration_time_s", {}).get("mean")
        return f"<sgdsim.Result {self.summary.get('scenario')}: iteration {it} s>"
