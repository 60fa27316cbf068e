#!/usr/bin/python3
"""Tables of the families study (families_study.md) from the runs families.py made.

usage: families_table.py [--out results/families] [--target 0.80] [--check] [--cost]
                         [--ranking FIGURE.png]

Per cell (model-workers) that has runs: final test accuracy (mean ± half-width of the 95 %
Student-t interval over the seeds, gap to sync paired by seed), and per platform the iteration
time, the seeds reaching the target, the simulated time to it (first evaluation at or above
it) and the time against sync (paired by seed, %). A setting whose math does not depend on the
timing has trained on the first platform only: its time on another platform is the clock
run's time_s at the iteration where the seed reached the target (families.py). Then the
consensus distances of the decentralized settings and the three qualitative claims.
--check compares, at the check cell, the math columns of the other platform's seed-1 runs
with the first platform's and their time column with the clock run's, byte for byte.
--cost prints the CPU time of the runs; --ranking writes the ranking figure (RANKING cell).
"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from accuracy_table import fmt, interval  # noqa: E402
import families  # noqa: E402


def read_run(d):
    """(summary, convergence rows as dicts) of one run folder, or None."""
    if not os.path.isfile(os.path.join(d, "summary.json")):
        return None
    with open(os.path.join(d, "convergence.csv")) as f:
        rows = list(csv.DictReader(f))
    return json.load(open(os.path.join(d, "summary.json"))), rows


def seeds_of(d):
    """{seed: (summary, rows)} of a setting folder."""
    out = {}
    if os.path.isdir(d):
        for s in os.listdir(d):
            if s.startswith("seed-") and not s.endswith(".tmp"):
                run = read_run(os.path.join(d, s))
                if run:
                    out[int(s[5:])] = run
    return dict(sorted(out.items()))


def first_reaching(rows, target):
    """(iteration, time_s) of the first evaluation at or above target, or None."""
    for r in rows:
        if float(r["accuracy"]) >= target:
            return int(r["iteration"]), float(r["time_s"])
    return None


class Cell:
    """The runs of one cell: math per setting and time to target per platform and seed."""

    def __init__(self, out, cell, platforms, target):
        self.platforms = platforms
        self.math = {}  # setting -> platform -> {seed: (summary, rows)}
        self.hits = {}  # setting -> platform -> {seed: time_s or None}
        self.iter_s = {}  # setting -> platform -> iteration time
        first = platforms[0]
        names = [n for n in families.load_sweep()[3]
                 if seeds_of(os.path.join(out, cell, first, n))]
        for name in names:
            self.math[name], self.hits[name], self.iter_s[name] = {}, {}, {}
            for p in platforms:
                runs = seeds_of(os.path.join(out, cell, p, name))
                trained = p == first or name in families.TIMING_DEPENDENT
                if trained and runs:
                    self.math[name][p] = runs
                    self.hits[name][p] = {s: (first_reaching(r[1], target) or (0, None))[1]
                                          for s, r in runs.items()}
                    self.iter_s[name][p] = runs[min(runs)][0]["iteration_time_s"]["mean"]
                    continue
                clock = seeds_of(os.path.join(out, cell, p + "-clock", name))
                if trained or not clock or first not in self.math[name]:
                    continue
                times = {int(r["iteration"]): float(r["time_s"]) for r in clock[1][1]}
                self.hits[name][p] = {}
                for s, run in self.math[name][first].items():
                    hit = first_reaching(run[1], target)
                    self.hits[name][p][s] = times[hit[0]] if hit else None
                self.iter_s[name][p] = clock[1][0]["iteration_time_s"]["mean"]

    def final(self, name, platform):
        runs = self.math[name].get(platform) or self.math[name][self.platforms[0]]
        return {s: 100 * r[0]["training"]["final_accuracy"] for s, r in runs.items()}


def time_cells(cell, name, p):
    hits = cell.hits[name].get(p)
    if hits is None:
        return ["not run"] * 4
    reached = {s: t for s, t in hits.items() if t is not None}
    ref = cell.hits["sync"].get(p, {})
    paired = [100 * (t / ref[s] - 1) for s, t in reached.items() if ref.get(s)]
    return [f"{cell.iter_s[name][p]:.3f}", f"{len(reached)} of {len(hits)}",
            fmt(list(reached.values()), unit="") if reached else "not reached",
            fmt(paired, sign=True) if paired and name != "sync" else ("0" if name == "sync"
                                                                      else "-")]


def accuracy_cell(cell, name):
    ref = cell.final("sync", cell.platforms[0])
    parts, gaps = [], []
    platforms = cell.platforms if name in families.TIMING_DEPENDENT else cell.platforms[:1]
    for p in platforms:
        if p not in cell.math[name]:
            continue
        acc = cell.final(name, p)
        parts.append(fmt(list(acc.values()), unit=""))
        gaps.append(fmt([acc[s] - ref[s] for s in acc if s in ref], sign=True, unit=""))
    return " / ".join(parts), " / ".join(gaps), len(cell.math[name][cell.platforms[0]])


def print_cell(cell, label, target):
    head = ["setting", "seeds", "final accuracy (%)", "gap to sync (points)"]
    for p in cell.platforms:
        head += [f"{p}: iteration (s)", f"{p}: seeds reaching {100 * target:g} %",
                 f"{p}: time to {100 * target:g} % (s)", f"{p}: against sync"]
    print(f"### {label}\n")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name in cell.math:
        acc, gap, n = accuracy_cell(cell, name)
        row = [name, str(n), acc, gap if name != "sync" else "0"]
        for p in cell.platforms:
            row += time_cells(cell, name, p)
        print("| " + " | ".join(row) + " |")
    print()


def consensus(rows, iteration=None):
    pick = rows[-1] if iteration is None else next(
        r for r in rows if int(r["iteration"]) == iteration)
    return float(pick["consensus_distance"])


def print_claims(cell):
    first = cell.platforms[0]
    m = cell.math
    out = []
    for rank in ("powersgd-2", "powersgd-4"):
        if rank in m:
            ref, acc = cell.final("sync", first), cell.final(rank, first)
            gap = [acc[s] - ref[s] for s in acc if s in ref]
            mean, half = interval(gap)
            out.append(f"{rank} near sync (gap interval reaches -1): "
                       f"{fmt(gap, sign=True, unit='')} -> "
                       f"{'holds' if mean + (half or 0) >= -1 else 'does not hold'}")
    if "topk-ef" in m and "topk-noef" in m:
        a, b = cell.final("topk-ef", first), cell.final("topk-noef", first)
        diff = [b[s] - a[s] for s in b if s in a]
        mean, half = interval(diff)
        out.append(f"top-k without minus with error feedback: {fmt(diff, sign=True, unit='')}"
                   f" -> {'holds' if mean + (half or 0) < 0 else 'does not hold'}")
    if "dpsgd-ring" in m and "dpsgd-exponential" in m:
        ring, exp = m["dpsgd-ring"][first], m["dpsgd-exponential"][first]
        seeds = [s for s in ring if s in exp]
        r50 = [consensus(ring[s][1], 50) for s in seeds]
        e50 = [consensus(exp[s][1], 50) for s in seeds]
        rend = [consensus(ring[s][1]) for s in seeds]
        eend = [consensus(exp[s][1]) for s in seeds]
        ok = all(r > e for r, e in zip(r50, e50))
        out.append(f"consensus distance at iteration 50, ring {sum(r50) / len(r50):.3e} vs "
                   f"exponential {sum(e50) / len(e50):.3e} (ratio paired "
                   f"{fmt([r / e for r, e in zip(r50, e50)], unit='')}); at the end "
                   f"{sum(rend) / len(rend):.3e} vs {sum(eend) / len(eend):.3e}; ring above at "
                   f"every seed at 50: {'holds' if ok else 'does not hold'}")
    if "adpsgd-ring" in m:
        for p, runs in m["adpsgd-ring"].items():
            vals = [consensus(r[1]) for r in runs.values()]
            out.append(f"adpsgd-ring consensus distance at the end ({p}): "
                       f"{sum(vals) / len(vals):.3e}")
    for line in out:
        print(f"- {line}")
    print()


def check(out):
    """Byte comparison of the check runs; returns the number of mismatches."""
    _, _, platforms, _, _ = families.load_sweep()
    first, *others = platforms
    bad = 0
    for p in others:
        for name in sorted(families.CHECK):
            base = os.path.join(out, families.CHECK_CELL)
            paths = [os.path.join(base, q, name, "seed-1", "convergence.csv")
                     for q in (first, p, p + "-clock")]
            if not all(os.path.isfile(x) for x in paths):
                print(f"{name} ({p}): not run")
                continue
            cols = [list(csv.reader(open(x))) for x in paths]
            math_same = [r[1:] for r in cols[0]] == [r[1:] for r in cols[1]]
            time_same = [r[0] for r in cols[1]] == [r[0] for r in cols[2]]
            bad += (not math_same) + (not time_same)
            print(f"{name} ({p}): math columns {'identical' if math_same else 'DIFFER'} to "
                  f"{first}; time column {'identical' if time_same else 'DIFFERS'} to the clock")
    return bad


def cost(out):
    totals = {}
    for root, _, files in os.walk(out):
        if "cpu_s" in files and not root.endswith(".tmp"):
            cell, platform, name = os.path.relpath(root, out).split(os.sep)[:3]
            cpu = float(open(os.path.join(root, "cpu_s")).read())
            totals.setdefault((cell, platform, name), []).append(cpu)
    print("| cell | platform | setting | runs | CPU s per run (mean) |\n|---|---|---|---|---|")
    for (cell, platform, name), v in sorted(totals.items()):
        print(f"| {cell} | {platform} | {name} | {len(v)} | {sum(v) / len(v):.1f} |")
    print(f"\ntotal {sum(sum(v) for v in totals.values()) / 60:.1f} CPU min")


def ranking_cell(out, target):
    """The first RANKING (cell, platform) where every setting has every seed, else None."""
    _, _, platforms, settings, seeds = families.load_sweep()
    for cell_name, platform in families.RANKING:
        cell = Cell(out, cell_name, list(platforms), target)
        full = all(len(cell.hits.get(n, {}).get(platform, {})) == len(seeds) for n in settings)
        print(f"{cell_name}, {platform}: {'every' if full else 'not every'} setting at every seed")
        if full:
            return cell, cell_name, platform
    return None


def ranking(out, target, figure):
    """Ranks the settings of the first complete RANKING cell by the mean time to target;
    draws the figure."""
    found = ranking_cell(out, target)
    if found is None:
        sys.exit("families_table.py: no ranking cell has run in full")
    cell, cell_name, platform = found
    rows = []
    for name in cell.math:
        hits = cell.hits[name].get(platform, {})
        reached = [t for t in hits.values() if t is not None]
        acc = list(cell.final(name, platform).values())
        key = (len(reached) < len(hits), -len(reached),
               interval(reached)[0] if len(reached) == len(hits) else -interval(acc)[0])
        rows.append((key, name, reached, len(hits), acc))
    rows.sort()
    print(f"ranking: {cell_name}, {platform}, time to {100 * target:g} %\n")
    print("| rank | setting | seeds reaching | time (s) | final accuracy (%) |\n|---|---|---|---|---|")
    for i, (_, name, reached, n, acc) in enumerate(rows, 1):
        print(f"| {i} | {name} | {len(reached)} of {n} | "
              f"{fmt(reached, unit='') if reached else 'not reached'} | {fmt(acc, unit='')} |")
    draw_ranking(rows, cell_name, platform, target, figure)


def draw_ranking(rows, cell_name, platform, target, figure):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 0.4 * len(rows) + 1.2))
    for i, (_, name, reached, n, _) in enumerate(rows):
        if not reached:
            ax.text(0, i, "  not reached in 200 iterations", va="center", fontsize=8)
            continue
        mean, half = interval(reached)
        # An interval over the few seeds that reached it says little (two seeds: t = 12.7).
        full = len(reached) == n
        ax.barh(i, mean, xerr=(half or 0) if full else 0, color="C0" if full else "C7")
        if not full:
            ax.text(mean, i, f"  {len(reached)} of {n} seeds (mean)", va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), [r[1] for r in rows])
    ax.invert_yaxis()
    # Room on the right for the "k of n seeds" labels.
    longest = max((interval(r[2])[0] for r in rows if r[2]), default=1)
    ax.set_xlim(0, 1.4 * longest)
    ax.set_xlabel(f"simulated time to {100 * target:g} % test accuracy (s), mean and 95 % interval")
    model, workers = cell_name.split("-")
    ax.set_title(f"{model.upper()} on Fashion-MNIST, {workers} workers, global batch 1024;\n"
                 f"ResNet-50 timing, {platform} star", fontsize=9)
    fig.tight_layout()
    fig.savefig(figure, dpi=120)
    print(f"\nwrote {figure}")


def main(argv):
    out = argv[argv.index("--out") + 1] if "--out" in argv else "results/families"
    target = float(argv[argv.index("--target") + 1]) if "--target" in argv else 0.80
    if "--check" in argv:
        sys.exit(1 if check(out) else 0)
    if "--cost" in argv:
        return cost(out)
    if "--ranking" in argv:
        return ranking(out, target, argv[argv.index("--ranking") + 1])
    _, cells, platforms, _, _ = families.load_sweep()
    for name, over in cells.items():
        if not os.path.isdir(os.path.join(out, name, list(platforms)[0])):
            continue
        cell = Cell(out, name, list(platforms), target)
        print_cell(cell, f"{name.split('-')[0].upper()}, {over['workers.count']} workers x "
                   f"{over['batch_size']}", target)
        print_claims(cell)


if __name__ == "__main__":
    main(sys.argv[1:])
