#!/usr/bin/python3
"""Writes the ASTRA-sim cross-check's data-parallel workload as per-rank Chakra ET files.

Per iteration and rank: a 20 ms forward, then four 10 ms backward steps, each followed by a
256 MiB ALL_REDUCE (issue 20's workload). The protobuf encoding is written here by hand from the
wire-format description (protobuf.dev/programming-guides/encoding) and the field numbers of
mlcommons/chakra schema/protobuf/et_def.proto (Apache-2.0), independently of sgdsim's C++
encoder, so reading these files also checks sgdsim's decoder.

With --iterations I > 1 each file holds I iterations of synchronous SGD, for ASTRA-sim, which
runs a trace once (sgdsim repeats a one-iteration trace itself): iteration i + 1's forward waits
for iteration i's last backward and all four of its allreduces.

usage: make_dp_et.py PREFIX [--ranks 8] [--iterations 1]   (writes PREFIX.0.et .. PREFIX.<P-1>.et)
"""
import argparse
import os

COMP_NODE, COMM_COLL_NODE = 4, 7
ALL_REDUCE = 0


def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def f_varint(number, v):
    return varint(number << 3) + varint(v)


def f_bytes(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def attr(name, number, value):
    """AttributeProto {name = 1, <typed value> = number} with a varint value."""
    return f_bytes(10, f_bytes(1, name.encode()) + f_varint(number, value))


def node(node_id, name, node_type, deps=(), duration_us=0, attrs=b""):
    msg = f_varint(1, node_id) if node_id else b""
    msg += f_bytes(2, name.encode()) + f_varint(3, node_type)
    if deps:
        msg += f_bytes(5, b"".join(varint(d) for d in deps))  # data_deps, packed
    if duration_us:
        msg += f_varint(7, duration_us)
    msg += attr("is_cpu_op", 27, 0) + attrs
    return msg


def rank_stream(forward_us=20000, backward_us=10000, steps=4, allreduce_bytes=256 << 20,
                iterations=1):
    metadata = f_bytes(1, b"0.0.4")  # GlobalMetadata.version
    nodes, after = [], []
    for it in range(iterations):
        suffix = f"_it{it}" if iterations > 1 else ""
        prev = len(nodes)
        nodes.append(node(prev, "fwd" + suffix, COMP_NODE, after, forward_us))
        after = []
        for k in range(steps):
            bwd = len(nodes)
            nodes.append(node(bwd, f"bwd_{k}" + suffix, COMP_NODE, [prev], backward_us))
            nodes.append(node(bwd + 1, f"allreduce_{k}" + suffix, COMM_COLL_NODE, [bwd],
                              attrs=attr("comm_type", 9, ALL_REDUCE) +
                              attr("comm_size", 9, allreduce_bytes)))
            after.append(bwd + 1)
            prev = bwd
        after = [prev] + after
    return b"".join(varint(len(m)) + m for m in [metadata] + nodes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("prefix")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--iterations", type=int, default=1)
    a = ap.parse_args()
    data = rank_stream(iterations=a.iterations)
    os.makedirs(os.path.dirname(a.prefix) or ".", exist_ok=True)
    for r in range(a.ranks):
        with open(f"{a.prefix}.{r}.et", "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
