"""sgdsim_results: flattening of summaries and sweeps, and one-line errors naming the file."""
import json
import math

import pytest

import sgdsim_results as sr
from conftest import fixture, read_summary, read_sweep


def test_load_summary_is_the_file():
    assert sr.load_summary(fixture("runs", "async")) == read_summary("runs", "async")
    # The summary.json path itself works as well as its directory.
    assert sr.load_summary(fixture("runs", "async", "summary.json"))["scheme"] == "async"


def test_load_runs_flattens_summary_and_resolved_scenario():
    df = sr.load_runs([fixture("runs", "async"), fixture("scaling", "sync-w16")])
    assert list(df["run"]) == ["async", "sync-w16"]
    row = df.iloc[0]
    summary = read_summary("runs", "async")
    assert row["source"] == fixture("runs", "async", "summary.json")
    assert row["iteration_time_s.mean"] == summary["iteration_time_s"]["mean"]
    assert row["iteration_time_s.p99"] == summary["iteration_time_s"]["p99"]
    assert row["scaling.weak_efficiency"] == summary["scaling"]["weak_efficiency"]
    assert row["staleness.mean"] == summary["staleness"]["mean"]
    # The histogram is data, kept whole.
    assert row["staleness.histogram"] == summary["staleness"]["histogram"]
    with open(fixture("runs", "async", "scenario.resolved.json")) as f:
        assert row["config.scheme.servers"] == json.load(f)["scheme"]["servers"]
    # 16 workers, 4 per node (resolved scenario) -> 4 nodes; the async run has 1 per node.
    assert df.iloc[1]["nodes"] == 4
    assert row["nodes"] == row["workers"]
    # Fields a scheme does not report are missing, not an error.
    assert math.isnan(df.iloc[1]["staleness.mean"])


def test_load_jsonl_flattens_params():
    lines = read_sweep()
    df = sr.load_jsonl(fixture("sweep", "results.jsonl"))
    assert len(df) == len(lines) == 18
    for (_, row), line in zip(df.iterrows(), lines):
        for path, value in line["params"].items():
            assert row[f"params.{path}"] == value
        assert row["scaling.weak_efficiency"] == line["scaling"]["weak_efficiency"]
        assert row["scheme"] == line["params"]["scheme.type"]
        assert math.isnan(row["nodes"])  # per_node was not swept
    assert df.iloc[1]["source"].endswith("results.jsonl:2")
    assert df.iloc[0]["run"] == "workers.count=2, scheme.fusion_bytes=0, scheme.type=sync"
    # A sweep directory and a list mixing it with run directories load the same rows.
    assert sr.load_runs(fixture("sweep")).equals(df)
    mixed = sr.load_runs([fixture("sweep"), fixture("runs", "ssp")])
    assert len(mixed) == 19 and mixed.iloc[-1]["scheme"] == "ssp"


def test_column_finds_swept_and_resolved_fields():
    sweep = sr.load_runs(fixture("sweep"))
    runs = sr.load_runs(fixture("runs", "ssp"))
    assert sr.column(sweep, "workers.count") == "params.workers.count"
    assert sr.column(runs, "workers.count") == "config.workers.count"
    assert sr.column(runs, "scheme") == "scheme"
    with pytest.raises(SystemExit, match="no field 'nonsense'"):
        sr.column(runs, "nonsense")


def test_select_and_ordered():
    sweep = sr.load_runs(fixture("sweep"))
    picked = sr.select(sweep, ["scheme=sync", "workers.count=4"])
    assert list(picked["params.scheme.fusion_bytes"]) == [0, "25MB", "100MB"]
    with pytest.raises(SystemExit, match="no result matches"):
        sr.select(sweep, ["scheme=nope"])
    with pytest.raises(SystemExit, match="FIELD=VALUE"):
        sr.select(sweep, ["scheme"])
    assert sr.ordered([8, 2, 4, 2, float("nan")]) == [2, 4, 8]
    assert sr.ordered([0, "25MB", "100MB", 0]) == [0, "25MB", "100MB"]


def test_load_convergence_and_timeline():
    conv = sr.load_convergence(fixture("runs", "train"))
    assert list(conv.columns) == ["time_s", "iteration", "loss", "accuracy"]
    assert list(conv["iteration"]) == [5, 10, 15, 20]
    assert conv["accuracy"].iloc[-1] == read_summary("runs", "train")["training"]["final_accuracy"]
    events = sr.load_timeline(fixture("runs", "train"))
    assert set(events["pid"]) == {0, 1}
    assert set(events["iteration"]) == {17, 18, 19}
    assert {"fwd", "bwd", "comm", "update"} <= {name.split("[")[0] for name in events["name"]}
    assert (events["dur"] >= 0).all()
    iters = sr.load_iterations(fixture("runs", "train"))
    assert len(iters) == 6 and list(iters.columns)[:2] == ["worker", "iteration"]


def write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, message", [
    ('{"scenario": "x", "scheme": ', "malformed JSON at line 1"),
    ("[1, 2]", "expected an sgdsim summary object, found a JSON list"),
    ('{"scenario": "x"}', "not an sgdsim summary: missing scheme, workers"),
])
def test_bad_summary_names_the_file(tmp_path, text, message):
    path = write(tmp_path, "run/summary.json", text)
    with pytest.raises(SystemExit) as e:
        sr.load_runs([str(tmp_path / "run")])
    assert str(e.value).startswith(f"{path}: ")
    assert message in str(e.value)


def test_missing_results_name_the_path(tmp_path):
    with pytest.raises(SystemExit, match=f"{tmp_path}/nope: no such run directory"):
        sr.load_runs([str(tmp_path / "nope")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit, match=f"{tmp_path}/empty/summary.json: not found"):
        sr.load_runs([str(tmp_path / "empty")])
    with pytest.raises(SystemExit, match="convergence.csv: not found .the run needs a training section"):
        sr.load_convergence(fixture("runs", "async"))
    with pytest.raises(SystemExit, match="timeline.json: not found .run with output.timeline true"):
        sr.load_timeline(fixture("runs", "async"))


def test_bad_jsonl_names_file_and_line(tmp_path):
    good = json.dumps(read_sweep()[0])
    path = write(tmp_path, "results.jsonl", good + "\n{oops\n")
    with pytest.raises(SystemExit, match=f"{path}:2: malformed JSON"):
        sr.load_jsonl(str(path))
    path = write(tmp_path, "results.jsonl", good + '\n\n{"scenario": "a", "scheme": "sync", "workers": 2, "params": 3}\n')
    with pytest.raises(SystemExit, match=f"{path}:3: \"params\" must be an object"):
        sr.load_jsonl(str(path))
    path = write(tmp_path, "results.jsonl", good + '\n{"params": {"workers.count": 9}, "error": "exit 2"}\n')
    assert len(sr.load_jsonl(str(path))) == 1  # a failed run is skipped with a note
    path = write(tmp_path, "results.jsonl", "\n")
    with pytest.raises(SystemExit, match=f"{path}: no results"):
        sr.load_runs([str(path)])


def test_bad_csv_and_trace_name_the_file(tmp_path):
    write(tmp_path, "run/convergence.csv", "time_s,iteration,loss\n1,2,3\n")
    with pytest.raises(SystemExit, match=r"convergence.csv: missing column\(s\) accuracy"):
        sr.load_convergence(str(tmp_path / "run"))
    write(tmp_path, "run/convergence.csv", "time_s,iteration,loss,accuracy\n1,2,3,0.5\n1,2,3,high\n")
    with pytest.raises(SystemExit, match="convergence.csv: non-numeric value on line 3"):
        sr.load_convergence(str(tmp_path / "run"))
    # A diverged loss is data, not a malformed file.
    write(tmp_path, "run/convergence.csv", "time_s,iteration,loss,accuracy\n1,2,nan,0.1\n")
    assert math.isnan(sr.load_convergence(str(tmp_path / "run"))["loss"].iloc[0])
    write(tmp_path, "run/timeline.json", '{"events": []}')
    with pytest.raises(SystemExit, match='timeline.json: not a Chrome trace: no "traceEvents" list'):
        sr.load_timeline(str(tmp_path / "run"))
    write(tmp_path, "run/timeline.json", '{"traceEvents": [{"ph": "X", "name": "fwd", "pid": 0}]}')
    with pytest.raises(SystemExit, match=r"timeline.json: traceEvents\[0\]: complete event without a valid 'tid'"):
        sr.load_timeline(str(tmp_path / "run"))
