"""sgdsim from Python: run, sweep, predict and time collectives without leaving the interpreter.

Every call runs sgdsim's own library code (the code behind the `sgdsim` command line) in a
forked child of this interpreter, never the `sgdsim` binary: SimGrid 3.32 can create its engine
only once per process, so each simulation gets a fresh process, as `sgdsim sweep` gives each of
its runs. Results are read back into dicts and pandas DataFrames; outputs are deterministic
exactly like the command line's (same scenario, same numbers).

    import sgdsim
    r = sgdsim.run("experiments/examples/02-minimal.json", set={"workers.count": 4})
    r.summary["iteration_time_s"]["mean"], r.iterations.head()
"""
import json
import os
import shutil
import tempfile
import warnings

from . import _sgdsim
from ._paths import DATA_DIR
from ._results import Result, add_numeric_columns, read_sweep_results

__all__ = ["run", "sweep", "predict", "collective", "Result", "Error", "InputError",
           "InternalError", "SgdsimWarning", "__version__"]
__version__ = _sgdsim.version


class Error(Exception):
    """A failed sgdsim call."""


class InputError(Error, ValueError):
    """Bad input (the CLI's exit code 2): `.file`, `.pointer` (JSON pointer) and `.message`
    say what is wrong, as in the CLI's "file: pointer: message"."""

    def __init__(self, what, file="", pointer="", message=""):
        super().__init__(what)
        self.file = file
        self.pointer = pointer
        self.message = message or what


class InternalError(Error, RuntimeError):
    """An sgdsim bug or a crashed simulation (the CLI's exit code 1, or a signal)."""


class SgdsimWarning(UserWarning):
    """A line the CLI prints as "sgdsim: warning: ..." (e.g. a measured profile asked to run
    at another device speed)."""


def _raise_for(rc, work):
    """Turns a failed child (exit code rc, outputs in folder work) into an exception."""
    err_file = os.path.join(work, "error.json")
    if os.path.exists(err_file):
        with open(err_file) as f:
            e = json.load(f)
        if e["kind"] == "input":
            raise InputError(e["what"], e["file"], e["pointer"], e["message"])
        raise InternalError(e["what"])
    stderr = ""
    if os.path.exists(os.path.join(work, "stderr")):
        with open(os.path.join(work, "stderr")) as f:
            stderr = f.read().strip()
    raise InternalError(f"sgdsim child exited with code {rc}" + (f": {stderr}" if stderr else ""))


def _call(args):
    """Runs `sgdsim ARGS...` in a forked child; returns its stdout (raises on failure)."""
    work = tempfile.mkdtemp(prefix="sgdsim-call-")
    try:
        rc = _sgdsim.call([str(a) for a in args], work, DATA_DIR)
        if rc != 0:
            _raise_for(rc, work)
        with open(os.path.join(work, "stderr")) as f:
            for line in f:
                if line.startswith("sgdsim: warning: "):
                    warnings.warn(line[len("sgdsim: warning: "):].strip(), SgdsimWarning,
                                  stacklevel=3)
        with open(os.path.join(work, "stdout")) as f:
            return f.read()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _cfg_list(cfg):
    """The SimGrid options of `cfg` (a list of "NAME:VALUE" strings, like repeated --cfg)."""
    if cfg is None:
        return []
    if isinstance(cfg, (str, bytes)) or not isinstance(cfg, (list, tuple)) or not all(
            isinstance(c, str) for c in cfg):
        raise TypeError("cfg: expected a list of SimGrid options such as [\"network/TCP-gamma:0\"], "
                        f"got {type(cfg).__name__} {cfg!r}")
    return list(cfg)


def _set_args(overrides):
    """{"workers.count": 8, "platform.generate.node_link.bandwidth": "10Gbps"} as --set options
    (values JSON-encoded, as `--set PATH=VALUE` parses VALUE as JSON)."""
    if overrides is not None and not isinstance(overrides, dict):
        raise TypeError("set: expected a dict {path: value} such as {\"workers.count\": 8}, got "
                        f"{type(overrides).__name__} {overrides!r}")
    args = []
    for path, value in (overrides or {}).items():
        args += ["--set", f"{path}={json.dumps(value)}"]
    return args


class _ScenarioFile:
    """A scenario given as a path, or as a dict written to a scratch file (whose relative paths
    then resolve against the working directory and the data folder, not the scratch folder)."""

    def __init__(self, scenario):
        self.scenario = scenario
        self.tmp = None

    def __enter__(self):
        if isinstance(self.scenario, dict):
            self.tmp = tempfile.mkdtemp(prefix="sgdsim-scenario-")
            path = os.path.join(self.tmp, "scenario.json")
            with open(path, "w") as f:
                json.dump(self.scenario, f)
            return path
        return os.fspath(self.scenario)

    def __exit__(self, *exc):
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)


def run(scenario, set=None, out=None, cfg=None):
    """Simulates a scenario (a path or a dict) like `sgdsim run`; `set` is {path: value} like
    --set, `cfg` a list of SimGrid options like --cfg. With `out` the output files stay in that
    folder; without, they are read and removed. Returns a Result (summary, iterations,
    convergence, timeline). Bad input raises InputError."""
    keep = out is not None
    out_dir = os.fspath(out) if keep else tempfile.mkdtemp(prefix="sgdsim-run-")
    try:
        with _ScenarioFile(scenario) as path:
            args = ["run", path, "--out", out_dir, "--quiet", "--progress", "never"]
            args += _set_args(set)
            for c in _cfg_list(cfg):
                args += ["--cfg", c]
            _call(args)
        return Result.load(out_dir, out_dir if keep else None)
    finally:
        if not keep:
            shutil.rmtree(out_dir, ignore_errors=True)


def predict(scenario, set=None):
    """The contention-free analytic model (`sgdsim predict --json`) as a dict:
    iteration_time_s, throughput_samples_per_s, compute_s, comm_s, iteration_end_s."""
    with _ScenarioFile(scenario) as path:
        return json.loads(_call(["predict", path, "--json"] + _set_args(set)))


def collective(algorithm="ring", ranks=2, bytes="1MiB", **options):
    """One allreduce on SimGrid (`sgdsim collective --json`) as a dict with time_s and
    formula_s. Other options are the CLI's with '_' for '-': bandwidth="10Gbps",
    latency="1us", devices_per_node=8, network_model="ideal", fidelity="analytic", ...;
    node= a preset's name or a board description as a dict (docs/host-path.md)."""
    args = ["collective", "--algorithm", algorithm, "--ranks", ranks, "--bytes", bytes, "--json"]
    for name, value in options.items():
        if value is None:
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            args += ["--" + name.replace("_", "-"), json.dumps(v) if isinstance(v, dict) else v]
    return json.loads(_call(args))


def sweep(sweep, out=None, jobs=1, cfg=None):
    """Runs a sweep file (a path, or a dict whose "base" path is taken relative to the working
    directory) like `sgdsim sweep`, `jobs` runs at once, each in a forked child. Returns the
    results as a DataFrame: results.csv's columns, plus a numeric column beside every swept unit
    string (params.platform.generate.node_link.bandwidth_Bps beside "10Gbps"; _s, _bytes,
    _flops likewise). Values come from results.jsonl, so numbers are exact (results.csv
    prints 16 significant digits). With `out` the folder keeps results.jsonl, results.csv and runs/ (and a
    rerun resumes, as the CLI's); without, it is removed."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs: expected an integer >= 1 (runs at once), got {jobs!r}")
    cfg = _cfg_list(cfg)
    keep = out is not None
    out_dir = os.fspath(out) if keep else tempfile.mkdtemp(prefix="sgdsim-sweep-")
    tmp = None
    try:
        path = sweep
        if isinstance(sweep, dict):
            spec = dict(sweep)
            if isinstance(spec.get("base"), str):
                spec["base"] = os.path.abspath(spec["base"])
            tmp = tempfile.mkdtemp(prefix="sgdsim-sweepfile-")
            path = os.path.join(tmp, "sweep.json")
            with open(path, "w") as f:
                json.dump(spec, f)
        r = _sgdsim.sweep(os.fspath(path), out_dir, jobs, cfg, DATA_DIR)
        if "error" in r:
            e = json.loads(r["error"])
            raise InputError(e["what"], e["file"], e["pointer"], e["message"])
        return add_numeric_columns(read_sweep_results(out_dir))
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
        if not keep:
            shutil.rmtree(out_dir, ignore_errors=True)
