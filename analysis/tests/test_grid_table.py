"""experiments/convergence/grid_table.py and accuracy_table.py --targets: grouping by cell and
setting, seed-paired gaps, the divergence and worse-than-none verdicts, first evaluation
reaching a target."""
import importlib.util
import json
import os

from conftest import ANALYSIS

HERE = os.path.join(os.path.dirname(ANALYSIS), "experiments", "convergence")


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


grid = load("grid_table")
table = load("accuracy_table")


def write_sweep(d, runs):
    os.makedirs(d)
    with open(os.path.join(d, "results.jsonl"), "w") as f:
        for params, acc, loss in runs:
            f.write(json.dumps({"status": "ok", "params": params,
                                "training": {"final_accuracy": acc, "final_loss": loss}}) + "\n")


def cell(lr, m, seed, **kv):
    return {"training.learning_rate": lr, "training.momentum": m, "seed": seed, **kv}


def test_grid_verdicts(tmp_path, capsys):
    sync = {"scheme.type": "sync"}
    none = {"scheme.type": "pseudo_sync", "scheme.predictor": "none"}
    arr = {"scheme.type": "pseudo_sync", "scheme.predictor": "arrses"}
    base, pred = [], []
    for seed in (1, 2, 3):
        base += [(cell(0.1, 0.9, seed, **sync), 0.85, 0.4), (cell(0.1, 0.9, seed, **none),
                  0.80 + 0.01 * seed, 0.5)]
        base += [(cell(0.2, 0.9, seed, **sync), 0.86, 0.4), (cell(0.2, 0.9, seed, **none),
                  0.70, 0.9)]
        base += [(cell(0.05, 0.9, seed, **sync), 0.85, 0.4), (cell(0.05, 0.9, seed, **none),
                  0.80 + 0.01 * seed, 0.5)]
        pred += [(cell(0.1, 0.9, seed, **arr), 0.84, 0.4)]
        # Diverges at seed 2 where sync converged (a wide interval against none) ...
        pred += [(cell(0.2, 0.9, seed, **arr), 0.10 if seed == 2 else 0.60, 1.0)]
        # ... and 5 points below none at every seed here.
        pred += [(cell(0.05, 0.9, seed, **arr), 0.75 + 0.01 * seed, 0.5)]
    write_sweep(str(tmp_path / "b"), base)
    write_sweep(str(tmp_path / "p"), pred)
    out_json = str(tmp_path / "grid.json")
    grid.main([str(tmp_path / "b"), str(tmp_path / "p"), "--json", out_json])
    out = capsys.readouterr().out
    assert "| 0.1 | 0.9 | 85.00 ± 0.00 | 82.00 ± 2.48 | 84.00 ± 0.00 | -1.00 ± 0.00 |" in out
    verdict = json.load(open(out_json))["verdict"]["scheme.predictor=arrses,scheme.type=pseudo_sync"]
    assert verdict["diverged_where_reference_converged"] == [[0.2, 0.9, [2]]]
    assert [v[:3] for v in verdict["worse_than_against"]] == [[0.05, 0.9, -5.0]]


def test_targets_read_the_first_evaluation_reaching_each(tmp_path, capsys):
    for name, rows in (("sync", [(10, 1.0, 0.79), (20, 2.0, 0.81), (30, 3.0, 0.86)]),
                       ("fast", [(10, 0.5, 0.82), (20, 1.0, 0.84)])):
        d = tmp_path / name / "seed-1"
        os.makedirs(d)
        json.dump({"iteration_time_s": {"mean": 0.1}, "iterations": 30,
                   "training": {"time_to_target_s": None}}, open(d / "summary.json", "w"))
        with open(d / "convergence.csv", "w") as f:
            f.write("time_s,iteration,loss,accuracy\n")
            for it, t, acc in rows:
                f.write(f"{t},{it},0.5,{acc}\n")
    table.main(["--targets", "0.80,0.85", str(tmp_path / "sync"), str(tmp_path / "fast")])
    out = capsys.readouterr().out
    eighty, eighty_five = out.split("target 85 %")
    assert "| sync | 0.100 | 1 of 1 | 20.00 | 2.00 | +0.00 % |" in eighty
    assert "| fast | 0.100 | 1 of 1 | 10.00 | 0.50 | -75.00 % |" in eighty
    assert "| fast | 0.100 | 0 of 1 | - | - | - |" in eighty_five
