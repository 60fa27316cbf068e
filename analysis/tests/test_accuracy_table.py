"""experiments/convergence/accuracy_table.py: the 95 % t-interval and seed-paired gaps."""
import importlib.util
import json
import math
import os

from conftest import ANALYSIS

spec = importlib.util.spec_from_file_location(
    "accuracy_table",
    os.path.join(os.path.dirname(ANALYSIS), "experiments", "convergence", "accuracy_table.py"))
table = importlib.util.module_from_spec(spec)
spec.loader.exec_module(table)


def test_interval_is_student_t():
    mean, half = table.interval([1.0, 2.0, 3.0])
    assert mean == 2.0
    assert math.isclose(half, 4.303 * 1.0 / math.sqrt(3))
    assert table.interval([5.0]) == (5.0, None)


def write_run(d, accuracy, time_to_target=None):
    os.makedirs(d)
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump({"training": {"final_accuracy": accuracy, "time_to_target_s": time_to_target},
                   "update_s_per_iter": 1e-5, "iteration_time_s": {"mean": 0.5},
                   "iterations": 10}, f)
    with open(os.path.join(d, "convergence.csv"), "w") as f:
        f.write(f"time_s,iteration,loss,accuracy\n1,10,0.5,{accuracy}\n")


def test_seed_runs_aggregate_and_pair(tmp_path, capsys):
    for seed, (ref, other) in enumerate([(0.80, 0.70), (0.90, 0.82), (0.85, 0.76)], start=1):
        write_run(str(tmp_path / "sync" / f"seed-{seed}"), ref)
        write_run(str(tmp_path / "other" / f"seed-{seed}"), other)
    table.main([str(tmp_path / "sync"), str(tmp_path / "other")])
    out = capsys.readouterr().out
    assert "seeds 1, 2, 3" in out
    # Paired gaps -10, -8, -9: mean -9, sd 1, half-width 4.303 / sqrt(3) = 2.48.
    # Accuracies 70, 82, 76: sd 6, half-width 4.303 x 6 / sqrt(3) = 14.91.
    assert "| other | 76.00 ± 14.91 % | -9.00 ± 2.48 |" in out


def test_time_to_target_counts_the_seeds_that_reach_it(tmp_path, capsys):
    write_run(str(tmp_path / "sync" / "seed-1"), 0.9, 10.0)
    write_run(str(tmp_path / "sync" / "seed-2"), 0.9, 20.0)
    write_run(str(tmp_path / "fast" / "seed-1"), 0.9, 8.0)
    write_run(str(tmp_path / "fast" / "seed-2"), 0.8, None)
    table.main(["--time-to-target", str(tmp_path / "sync"), str(tmp_path / "fast")])
    out = capsys.readouterr().out
    assert "| fast | 0.500 | 1 of 2 | 10.00 | 8.00 | -20.00 % |" in out
