"""Table of experiments/validation/mpi_tcp_ring.sh: measured Open MPI ring times against the two
models' predictions (network only; network and copy), errors and bus bandwidths.

usage: mpi_tcp_ring_table.py CSV COLUMN LINK_BPS COPY_BPS "NODES T_NETWORK_ONLY T_COPY"...
"""
import csv
import statistics
import sys


def main(argv):
    path, column, link_Bps, copy_Bps = argv[1], argv[2], float(argv[3]), float(argv[4])
    rows = {int(r["nodes"]): r for r in csv.DictReader(open(path))
            if r["concurrent_jobs"] == "1"}
    pred = {}
    for run in argv[5:]:
        n, a, b = run.split()
        pred[int(n)] = (float(a), float(b))
    factor = lambda n: 2 * (n - 1) / n
    size = {n: int(r["message_bytes"]) for n, r in rows.items()}
    meas = {n: float(r[column]) * 1e-6 for n, r in rows.items()}
    busbw = lambda n, t: size[n] * factor(n) / t
    err = lambda n, m: 100 * (pred[n][m] / meas[n] - 1)
    nodes = sorted(pred)
    later = [n for n in nodes if n > 2]
    if column == "latency_mean_us":
        print("| nodes | measured time | network only | error | network and copy | error | "
              "measured busbw | network only busbw | network and copy busbw |")
        print("|---|---|---|---|---|---|---|---|---|")
        for n in nodes:
            print(f"| {n} | {1e3 * meas[n]:.1f} ms | {1e3 * pred[n][0]:.1f} ms | {err(n, 0):+.1f} % "
                  f"| {1e3 * pred[n][1]:.1f} ms | {err(n, 1):+.1f} % "
                  f"| {busbw(n, meas[n]) / 1e9:.3f} GB/s | {busbw(n, pred[n][0]) / 1e9:.3f} GB/s "
                  f"| {busbw(n, pred[n][1]) / 1e9:.3f} GB/s |")
        print()
        print(f"Calibrated on 2 nodes: network only, ring links of {link_Bps / 1e9:.3f} GB/s "
              f"({8 * link_Bps / 1e9:.2f} Gbit/s); network and copy, the copy at "
              f"{copy_Bps / 1e9:.2f} GB/s ({1e3 * size[2] / copy_Bps:.1f} ms for "
              f"{size[2]} bytes).")
        label = "Mean time"
    else:
        label = "Mean of the 10 slowest iterations"
    pct = lambda x: f"{round(x) + 0:+d} %"  # + 0: no "-0"
    change = lambda f, n: 100 * (f(n) / f(2) - 1)
    measured = lambda n: busbw(n, meas[n])
    print()
    parts = []
    for m, name in ((0, "network only"), (1, "network and copy")):
        model = lambda n, m=m: busbw(n, pred[n][m])
        med = statistics.median(abs(err(n, m)) for n in later)
        parts.append(f"{name}: median |error| over 3-8 nodes {med:.1f} %, busbw from 2 nodes to "
                     f"3-8 nodes (median) {pct(statistics.median(change(model, n) for n in later))}"
                     f", 2 -> 8 nodes {pct(change(model, 8))}")
    print(f"{label}: busbw from 2 nodes to 3-8 nodes (median) measured "
          f"{pct(statistics.median(change(measured, n) for n in later))}, 2 -> 8 nodes "
          f"{pct(change(measured, 8))}; " + "; ".join(parts) + ".")


if __name__ == "__main__":
    main(sys.argv)
