#!/usr/bin/python3
"""One cell of a measurement table: the COLUMN of the row whose columns equal the KEY=VALUE pairs.

usage: csv_cell.py FILE COLUMN KEY=VALUE...   (prints the cell; exit 1 unless exactly one row
matches)

The validation scripts' lookups in data/validation/*/throughput.csv (fsdp_mpt.sh,
fsdp_kempnerforge.sh, fsdp_torchtitan.sh).
"""
import csv
import sys


def main():
    if len(sys.argv) < 4 or any("=" not in a for a in sys.argv[3:]):
        sys.exit(__doc__)
    path, column = sys.argv[1], sys.argv[2]
    keys = dict(a.split("=", 1) for a in sys.argv[3:])
    rows = [r for r in csv.DictReader(open(path)) if all(r[k] == v for k, v in keys.items())]
    if len(rows) != 1:
        sys.exit(f"csv_cell.py: {path}: {len(rows)} rows with {keys}, expected one")
    print(rows[0][column])


if __name__ == "__main__":
    main()
