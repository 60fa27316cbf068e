"""The Python module: run, sweep, predict, collective, errors and determinism (each call
simulates in a forked child of this interpreter; see python/sgdsim/__init__.py)."""
import json
import math
import os
import subprocess

import pandas as pd
import pytest

import sgdsim

SMALL = {"workers.count": 4, "iterations": 4, "warmup_iterations": 1}


def test_run_returns_summary_and_frames(example):
    r = sgdsim.run(example("02-minimal.json"), set=SMALL)
    assert r.summary["workers"] == 4 and r.summary["iterations"] == 4
    assert isinstance(r.iterations, pd.DataFrame)
    # one row per worker and iteration, the CLI's iterations.csv columns
    assert len(r.iterations) == 16
    assert {"worker", "iteration", "iteration_time_s"} <= set(r.iterations.columns)
    assert isinstance(r.timeline, pd.DataFrame) and len(r.timeline) > 0
    assert {"name", "ts_us", "dur_us"} <= set(r.timeline.columns)
    assert r.convergence is None  # no training in this scenario
    assert r.out is None
    mean = r.summary["iteration_time_s"]["mean"]
    assert mean > 0 and math.isclose(
        r.summary["throughput_samples_per_s"], 4 * r.scenario["batch_size"] / mean, rel_tol=1e-6)


def test_run_matches_the_cli_and_is_deterministic(example, tmp_path):
    """Same numbers as `sgdsim run` (the build tree's binary) and as a second call."""
    a = sgdsim.run(example("02-minimal.json"), set=SMALL, out=tmp_path / "py")
    b = sgdsim.run(example("02-minimal.json"), set=SMALL)
    assert a.out == str(tmp_path / "py") and (tmp_path / "py" / "summary.json").exists()
    for key in ("simulated_time_s", "iteration_time_s", "comm_s_per_iter", "activities"):
        assert a.summary[key] == b.summary[key]
    pd.testing.assert_frame_equal(a.iterations, b.iterations)
    binary = os.environ.get("SGDSIM_BIN")
    if binary:
        sets = sum((["--set", f"{k}={v}"] for k, v in SMALL.items()), [])
        subprocess.run([binary, "run", example("02-minimal.json"), "--out", str(tmp_path / "cli"),
                        "--quiet"] + sets, check=True)
        with open(tmp_path / "cli" / "summary.json") as f:
            cli = json.load(f)
        assert cli["simulated_time_s"] == a.summary["simulated_time_s"]
        assert cli["iteration_time_s"] == a.summary["iteration_time_s"]


def test_run_accepts_a_dict_and_many_runs_in_one_interpreter():
    times = []
    for bw in ("10Gbps", "100Gbps"):
        r = sgdsim.run({"model": "resnet50", "workers": {"count": 4}, "iterations": 3,
                        "platform": {"generate": {"node_link": {"bandwidth": bw}}}})
        times.append(r.summary["iteration_time_s"]["mean"])
    assert times[0] > times[1]  # a slower network, a longer iteration


def test_input_error_carries_file_pointer_and_message(example):
    with pytest.raises(sgdsim.InputError) as e:
        sgdsim.run(example("02-minimal.json"), set={"workers.count": 0})
    assert e.value.file.endswith("02-minimal.json")
    assert e.value.pointer == "/workers/count"
    assert e.value.message and e.value.message in str(e.value)
    assert "/workers/count" in str(e.value)


def test_unknown_key_and_missing_file_are_input_errors(example, tmp_path):
    with pytest.raises(sgdsim.InputError) as e:
        sgdsim.run({"model": "resnet50", "workers": {"count": 2}, "no_such_key": 1})
    assert e.value.pointer == "/no_such_key"
    with pytest.raises(sgdsim.InputError):
        sgdsim.run(str(tmp_path / "missing.json"))
    with pytest.raises(sgdsim.InputError) as e:
        sgdsim.run(example("02-minimal.json"), set={"model": "no-such-profile"})
    assert e.value.pointer == "/model"


def test_predict_and_collective():
    p = sgdsim.predict(os.path.join(os.path.dirname(__file__), "..", "..", "experiments",
                                    "examples", "02-minimal.json"), set={"workers.count": 4})
    assert p["iteration_time_s"] > 0 and p["compute_s"] > 0
    c = sgdsim.collective("ring", ranks=4, bytes="1MiB", bandwidth="10Gbps", latency="1us",
                          network_model="ideal")
    # ring on the ideal network: 2 (p - 1) (alpha + n / (p beta)), the closed form
    n, p4, alpha, beta = 1048576, 4, 1e-6, 10e9 / 8
    assert math.isclose(c["time_s"], 2 * (p4 - 1) * (alpha + n / p4 / beta), rel_tol=1e-6)
    assert math.isclose(c["time_s"], c["formula_s"], rel_tol=1e-6)
    with pytest.raises(sgdsim.InputError) as e:
        sgdsim.collective("no_such_algorithm", ranks=4)
    assert "--algorithm" in e.value.message
    # A board description as a dict: 4 Gen4 GPUs on one AMD socket's root ports take NCCL's SHM
    # at the Gen4 rate (24 GB/s, under the DRAM share 204.8 / 8 = 25.6 GB/s).
    board = {"gpus": 4, "pcie_gen": 4, "cpu": "amd", "host_memory_bandwidth": "204.8GBps",
             "nic_bandwidth": "10Gbps"}
    b = sgdsim.collective("ring", ranks=4, bytes="1GiB", devices_per_node=4, node=board,
                          network_model="ideal", latency="1us", intra_latency="0us")
    assert math.isclose(b["time_s"], 2 * 3 / 4 * 2**30 / 24e9, rel_tol=1e-6)


def test_sweep_adds_numeric_columns_beside_unit_strings(example, tmp_path):
    spec = {"base": example("02-minimal.json"),
            "grid": {"platform.generate.node_link.bandwidth": ["10Gbps", "100Gbps"],
                     "workers.count": [2, 4]},
            "list": [{"iterations": 3}]}
    df = sgdsim.sweep(spec, jobs=2)
    assert list(df["status"]) == ["ok"] * 4
    col = "params.platform.generate.node_link.bandwidth"
    cols = list(df.columns)
    assert cols[cols.index(col) + 1] == col + "_Bps"
    assert list(df[col + "_Bps"]) == [1.25e9, 1.25e9, 1.25e10, 1.25e10]
    assert df["params.workers.count"].tolist() == [2, 4, 2, 4]
    # the same numbers as single runs
    one = sgdsim.run(example("02-minimal.json"), set={
        "platform.generate.node_link.bandwidth": "10Gbps", "workers.count": 4, "iterations": 3})
    assert df["iteration_time_s.mean"][1] == one.summary["iteration_time_s"]["mean"]
    # with out: the CLI's files stay, and a second call resumes (nothing to run again)
    out = tmp_path / "sw"
    first = sgdsim.sweep(spec, out=out)
    assert (out / "results.jsonl").exists() and (out / "results.csv").exists()
    again = sgdsim.sweep(spec, out=out)
    pd.testing.assert_frame_equal(again, first)  # resumed: the same runs, wall times included
    simulated = [c for c in df.columns if c != "wall_time_s"]
    pd.testing.assert_frame_equal(first[simulated], df[simulated])  # deterministic


def test_sweep_bad_file_and_failed_run(tmp_path):
    with pytest.raises(sgdsim.InputError) as e:
        sgdsim.sweep({"base": {"model": "resnet50"}, "grid": {"workers.count": 4}})
    assert e.value.pointer == "/grid/workers.count"
    df = sgdsim.sweep({"base": {"model": "resnet50", "iterations": 2},
                       "list": [{"workers.count": 2}, {"workers.count": -1}]})
    assert list(df["status"]) == ["ok", "failed"]
    assert "/workers/count" in df["error"][1]


def test_bad_jobs_set_and_cfg_are_clear_errors(example):
    # jobs=0 would never start a run (the sweep hung): refused at once, as the CLI's -j 0 is.
    for jobs in (0, -1, 1.5, "2", True):
        with pytest.raises(ValueError, match=r"jobs: expected an integer >= 1"):
            sgdsim.sweep({"base": {"model": "resnet50"}, "grid": {"workers.count": [2]}},
                         jobs=jobs)
    with pytest.raises(TypeError, match=r"set: expected a dict \{path: value\}"):
        sgdsim.run(example("02-minimal.json"), set="workers.count=4")
    for cfg in ("network/TCP-gamma:0", [1]):
        with pytest.raises(TypeError, match=r"cfg: expected a list of SimGrid options"):
            sgdsim.run(example("02-minimal.json"), cfg=cfg)
        with pytest.raises(TypeError, match=r"cfg: expected a list of SimGrid options"):
            sgdsim.sweep({"base": {"model": "resnet50"}, "grid": {"workers.count": [2]}},
                         cfg=cfg)


def test_numeric_columns_of_each_unit_kind():
    from sgdsim._results import add_numeric_columns
    df = add_numeric_columns(pd.DataFrame({"a": ["1us", "2ms"], "b": ["1KiB", "1MB"],
                                           "c": ["15Tf", "1Gf"], "d": ["x", "1us"],
                                           "e": [1, 2]}))
    assert list(df.columns) == ["a", "a_s", "b", "b_bytes", "c", "c_flops", "d", "e"]
    assert df["a_s"].tolist() == [1e-6, 2e-3]
    assert df["b_bytes"].tolist() == [1024.0, 1e6]
    assert df["c_flops"].tolist() == [15e12, 1e9]


def test_measured_profile_at_another_speed_warns(example):
    with pytest.warns(sgdsim.SgdsimWarning, match="measured layer times"):
        sgdsim.run(example("02-minimal.json"), set={"device.speed": "156Tf", "iterations": 2})


def test_shipped_transformer_profiles_by_name(example):
    fast = sgdsim.predict(example("02-minimal.json"), set={"model": "bert_large",
                                                           "device.speed": "156Tf"})
    slow = sgdsim.predict(example("02-minimal.json"), set={"model": "bert_large",
                                                           "device.speed": "15Tf"})
    # FLOP profiles follow the device speed: 10.4x the speed, 10.4x less compute
    assert math.isclose(slow["compute_s"] / fast["compute_s"], 156 / 15, rel_tol=1e-9)
