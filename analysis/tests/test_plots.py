"""Every script writes a PNG, and what it draws equals the result files' values."""
import glob
import math
import os
import subprocess
import sys

import pytest

import plot_breakdown
import plot_convergence
import plot_heatmap
import plot_scaling
import plot_speedup
import plot_staleness
import plot_timeline
from conftest import ANALYSIS, assert_png, fixture, read_summary, read_sweep

SCALING_RUNS = sorted(glob.glob(fixture("scaling", "*")))
SWEEP = fixture("sweep", "results.jsonl")


@pytest.mark.parametrize("script", [plot_breakdown, plot_convergence, plot_heatmap, plot_scaling,
                                    plot_speedup, plot_staleness, plot_timeline])
def test_help(script, capsys):
    with pytest.raises(SystemExit) as e:
        script.main(["--help"])
    assert e.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_scaling_plots_the_summaries_efficiency_and_throughput(out):
    data = plot_scaling.main(SCALING_RUNS + ["--out", out, "--reference", "Goyal et al.: 8=100, 64=93.4"])
    assert_png(out)
    assert list(data["efficiency"]) == ["pseudo_sync", "sync"]
    for scheme in ("sync", "pseudo_sync"):
        expected = [(w, read_summary("scaling", f"{scheme}-w{w}")) for w in (1, 4, 16, 64)]
        assert data["efficiency"][scheme] == [(w, pytest.approx(100 * s["scaling"]["weak_efficiency"], abs=1e-12))
                                              for w, s in expected]
        assert data["throughput"][scheme] == [(w, s["throughput_samples_per_s"]) for w, s in expected]
    assert data["references"] == {"Goyal et al.": [(8, 100), (64, 93.4)]}


def test_scaling_strong_by_nodes_uses_full_nodes(out):
    data = plot_scaling.main(SCALING_RUNS + ["--out", out, "--x", "nodes", "--strong", "--no-throughput"])
    assert_png(out)
    # 4 workers per node: 1 worker and 4 workers both use one node; the full node is drawn.
    sync = data["efficiency"]["sync"]
    assert [x for x, _ in sync] == [1, 4, 16]
    assert sync[0][1] == pytest.approx(100 * read_summary("scaling", "sync-w4")["scaling"]["strong_efficiency"])


def test_scaling_of_a_sweep_grouped_and_filtered(out):
    data = plot_scaling.main([SWEEP, "--out", out, "--group-by", "scheme.fusion_bytes", "--where", "scheme=sync"])
    assert_png(out)
    assert list(data["efficiency"]) == ["0", "25MB", "100MB"]
    lines = [r for r in read_sweep() if r["params"]["scheme.type"] == "sync" and r["params"]["scheme.fusion_bytes"] == "25MB"]
    assert data["efficiency"]["25MB"] == [(r["workers"], pytest.approx(100 * r["scaling"]["weak_efficiency"]))
                                          for r in lines]


def test_scaling_averages_repeats(out, capsys):
    data = plot_scaling.main([SWEEP, "--out", out, "--group-by", "scheme.type"])
    lines = [r for r in read_sweep() if r["params"]["scheme.type"] == "sync" and r["workers"] == 8]
    mean = sum(100 * r["scaling"]["weak_efficiency"] for r in lines) / len(lines)
    assert dict(data["efficiency"]["sync"])[8] == pytest.approx(mean)
    assert "differ in params.scheme.fusion_bytes" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--reference", "93.4"], "expected 'LABEL:X=Y,X=Y'"),
    (["--reference", ":64=93.4"], "missing 'LABEL:'"),
    (["--x", "nodes"], "nodes unknown: it needs workers.per_node"),
    (["--group-by", "colour"], "no --group-by field 'colour'"),
])
def test_scaling_bad_arguments(out, args, message):
    with pytest.raises(SystemExit, match=message):
        plot_scaling.main([SWEEP, "--out", out] + args)
    assert not os.path.exists(out)


def test_scaling_names_a_run_without_scaling(tmp_path, out):
    run = tmp_path / "old"
    run.mkdir()
    (run / "summary.json").write_text('{"scenario": "old", "scheme": "sync", "workers": 2, '
                                      '"throughput_samples_per_s": 10}')
    with pytest.raises(SystemExit, match=f"{run}/summary.json: no scaling.weak_efficiency"):
        plot_scaling.main([str(run), "--out", out])


def test_breakdown_bars_are_the_summary_parts(out):
    runs = [fixture("scaling", "sync-w64"), fixture("runs", "async"), fixture("runs", "ssp")]
    bars = plot_breakdown.main(runs + ["--out", out])["bars"]
    assert_png(out)
    assert [b["label"] for b in bars] == ["sync, 64 workers", "async, 8 workers", "ssp, 8 workers"]
    for bar, run in zip(bars, runs):
        s = read_summary(run)
        assert bar["compute"] == pytest.approx(1e3 * s["compute_s_per_iter"])
        assert bar["exposed communication"] == pytest.approx(1e3 * s["exposed_comm_s_per_iter"])
        assert bar["update"] == pytest.approx(1e3 * s["update_s_per_iter"])
        assert bar["total"] == pytest.approx(1e3 * s["iteration_time_s"]["mean"])
        parts = bar["compute"] + bar["exposed communication"] + bar["update"]
        if bar["other"]:
            assert parts + bar["other"] == pytest.approx(bar["total"])
        else:
            assert parts == pytest.approx(bar["total"], rel=1e-6)


def test_breakdown_label_by(out):
    bars = plot_breakdown.main([SWEEP, "--out", out, "--where", "workers.count=8",
                                "--label-by", "scheme", "--label-by", "scheme.fusion_bytes"])["bars"]
    assert_png(out)
    assert [b["label"] for b in bars] == ["sync, 0", "pseudo_sync, 0", "sync, 25MB", "pseudo_sync, 25MB",
                                          "sync, 100MB", "pseudo_sync, 100MB"]


def test_staleness_shares_are_the_histogram(out, capsys):
    runs = plot_staleness.main([fixture("runs", "async"), fixture("runs", "ssp"), fixture("runs", "train"),
                                "--out", out])["runs"]
    assert_png(out)
    assert "train/summary.json: no staleness histogram (sync), skipped" in capsys.readouterr().err
    async_run, ssp = runs
    histogram = read_summary("runs", "async")["staleness"]["histogram"]
    total = sum(histogram.values())
    assert async_run["values"] == {int(k): pytest.approx(100 * n / total) for k, n in histogram.items()}
    assert list(async_run["values"]) == sorted(async_run["values"])
    assert sum(async_run["values"].values()) == pytest.approx(100)
    assert async_run["mean"] == read_summary("runs", "async")["staleness"]["mean"]
    assert ssp["values"] == {2: 100.0}


def test_staleness_counts(out):
    runs = plot_staleness.main([fixture("runs", "async"), "--counts", "--out", out])["runs"]
    histogram = read_summary("runs", "async")["staleness"]["histogram"]
    assert runs[0]["values"] == {int(k): n for k, n in histogram.items()}


def test_staleness_errors(tmp_path, out):
    with pytest.raises(SystemExit, match="no run has a staleness histogram"):
        plot_staleness.main([fixture("scaling", "sync-w4"), "--out", out])
    run = tmp_path / "bad"
    run.mkdir()
    (run / "summary.json").write_text('{"scenario": "b", "scheme": "async", "workers": 2, '
                                      '"staleness": {"histogram": {"one": 3}}}')
    with pytest.raises(SystemExit, match=f"{run}/summary.json: staleness.histogram: bad entry 'one'"):
        plot_staleness.main([str(run), "--out", out])
    assert not os.path.exists(out)


def test_heatmap_cells_are_the_sweep_values(out):
    data = plot_heatmap.main([SWEEP, "--x", "workers.count", "--y", "scheme.fusion_bytes",
                              "--panel", "scheme", "--out", out])
    assert_png(out)
    grids = data["grids"]
    assert list(grids) == ["sync", "pseudo_sync"] and data["unit"] == "%"
    assert list(grids["sync"].columns) == ["2", "4", "8"]
    assert list(grids["sync"].index) == ["0", "25MB", "100MB"]
    for line in read_sweep():
        p = line["params"]
        cell = grids[p["scheme.type"]].loc[str(p["scheme.fusion_bytes"]), str(p["workers.count"])]
        assert cell == pytest.approx(100 * line["scaling"]["weak_efficiency"])


def test_heatmap_missing_cell_and_other_value(tmp_path, out):
    lines = open(SWEEP).read().splitlines()
    sweep = tmp_path / "results.jsonl"
    sweep.write_text("\n".join(lines[1:]) + "\n")  # drop workers 2, fusion 0, sync
    data = plot_heatmap.main([str(sweep), "--x", "workers.count", "--y", "scheme.fusion_bytes",
                              "--where", "scheme=sync", "--value", "iteration_time_s.mean", "--out", out])
    assert_png(out)
    grid = data["grids"][""]
    assert data["unit"] == "ms"
    assert math.isnan(grid.loc["0", "2"])
    line = read_sweep()[2]  # workers 2, fusion 25MB, sync
    assert grid.loc["25MB", "2"] == pytest.approx(1e3 * line["iteration_time_s"]["mean"])


def test_heatmap_unknown_field(out):
    with pytest.raises(SystemExit, match="no --x field 'workers.cnt'"):
        plot_heatmap.main([SWEEP, "--x", "workers.cnt", "--y", "scheme", "--out", out])


def test_timeline_shows_the_last_two_iterations(out):
    data = plot_timeline.main([fixture("runs", "train"), "--workers", "1", "--out", out])
    assert_png(out)
    assert data["iterations"] == (18, 19)
    assert set(data["events"]["pid"]) == {0}
    with pytest.raises(SystemExit, match="no events for workers < 4 in iterations 0-1"):
        plot_timeline.main([fixture("runs", "train"), "--iterations", "0", "1", "--out", out])


def test_convergence_curves_are_the_csv(out):
    curves = plot_convergence.main([fixture("runs", "train"), "--out", out])["curves"]
    assert_png(out)
    assert list(curves) == ["sync"]
    assert list(curves["sync"]["accuracy"]) == [0.5612, 0.6221, 0.6163, 0.6615]


def test_command_line_as_the_makefile_runs_it(tmp_path):
    # The Makefile and experiments/ call the scripts by path, from the source root.
    out = tmp_path / "timeline.png"
    result = subprocess.run([sys.executable, os.path.join(ANALYSIS, "plot_timeline.py"), fixture("runs", "train"),
                             "--out", str(out)], capture_output=True, text=True, cwd=os.path.dirname(ANALYSIS))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(out)
    assert_png(str(out))
    result = subprocess.run([sys.executable, os.path.join(ANALYSIS, "plot_scaling.py"), str(tmp_path / "missing"),
                             "--out", str(out)], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.strip() == f"{tmp_path}/missing: no such run directory, summary.json or results.jsonl"


def test_speedup_is_workers_times_weak_efficiency(out):
    runs = [r for r in SCALING_RUNS if not r.endswith("-w1")]
    data = plot_speedup.main(runs + ["--out", out])
    assert_png(out)
    assert set(data["speedup"]) == {"sync", "pseudo_sync"}  # run names up to their last '-'
    for scheme in ("sync", "pseudo_sync"):
        for w in (4, 16, 64):
            s = read_summary("scaling", f"{scheme}-w{w}")
            assert data["speedup"][scheme][w] == pytest.approx(w * s["scaling"]["weak_efficiency"], rel=1e-12)
    by_field = plot_speedup.main(runs + ["--out", out, "--label-by", "scheme"])
    assert by_field["speedup"] == data["speedup"]
