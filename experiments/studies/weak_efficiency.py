"""Prints the weak-scaling efficiency (%) of every scheme x model x node link of a scaling
sweep, one line per combination, node counts in order (the numbers experiments/studies/README.md
quotes for scaling.json).

usage: /usr/bin/python3 experiments/studies/weak_efficiency.py results/scaling/results.jsonl
"""
import collections
import json
import sys


def main(path):
    table = collections.defaultdict(dict)
    for line in open(path, encoding="utf-8"):
        r = json.loads(line)
        if r.get("status") != "ok":
            continue
        p = r["params"]
        model = "bert_base" if "bert" in p["model"] else p["model"]
        key = (p["scheme.type"], model, p["platform.generate.node_link.bandwidth"])
        table[key][p["workers.count"]] = r["scaling"]["weak_efficiency"]
    for (scheme, model, bw), eff in sorted(table.items()):
        cells = " ".join(f"{n}:{100 * e:.0f}" for n, e in sorted(eff.items()))
        print(f"{scheme} {model} {bw}: {cells}")


if __name__ == "__main__":
    main(sys.argv[1])
