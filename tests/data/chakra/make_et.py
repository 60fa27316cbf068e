#!/usr/bin/python3
"""Writes the small Chakra ET files the tests use (run from anywhere; deterministic).

tests/data/chakra/pipe.{0,1}.et   a two-stage pipeline: rank 0 computes a 5 ms forward and sends
                                  1 MB to rank 1, which computes 5 ms forward and 10 ms backward
                                  and sends 1 MB back; rank 0's 10 ms backward follows; then
                                  both allreduce 4 MB.
tests/data/chakra/ops.{0..3}.et   four ranks: a 1 ms forward, an ALL_GATHER of 1 MiB per rank
                                  (ASTRA-sim's comm_size: what each rank contributes), a 2 ms
                                  backward and a REDUCE_SCATTER of 4 MiB (each rank's input).
tests/bad_inputs/chakra/*.et      malformed or unsupported traces for the bad-input corpus, and
                                  traces past the input limits (gzip.0.et: a valid trace, gzipped).

The encoding comes from experiments/astra_sim/make_dp_et.py (written from the protobuf wire
format and mlcommons/chakra et_def.proto, independently of sgdsim's C++ encoder).
"""
import gzip
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "experiments", "astra_sim"))
import make_dp_et as et  # noqa: E402

COMP, SEND, RECV, COLL = 4, 5, 6, 7


def comm(size, kind=0):
    return et.attr("comm_type", 9, kind) + et.attr("comm_size", 9, size)


def p2p(size, peer_field, peer, tag):
    return et.attr("comm_size", 9, size) + et.attr(peer_field, 7, peer) + et.attr("comm_tag", 7, tag)


def stream(nodes):
    metadata = et.f_bytes(1, b"0.0.4")
    return b"".join(et.varint(len(m)) + m for m in [metadata] + nodes)


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def pipeline():
    mb = 1000000
    r0 = [et.node(0, "fwd_stage0", COMP, duration_us=5000),
          et.node(1, "send_act", SEND, [0], attrs=p2p(mb, "comm_dst", 1, 0)),
          et.node(2, "recv_grad", RECV, [1], attrs=p2p(mb, "comm_src", 1, 1)),
          et.node(3, "bwd_stage0", COMP, [2], 10000),
          et.node(4, "allreduce", COLL, [3], attrs=comm(4 * mb))]
    r1 = [et.node(0, "recv_act", RECV, attrs=p2p(mb, "comm_src", 0, 0)),
          et.node(1, "fwd_stage1", COMP, [0], 5000),
          et.node(2, "bwd_stage1", COMP, [1], 10000),
          et.node(3, "send_grad", SEND, [2], attrs=p2p(mb, "comm_dst", 0, 1)),
          et.node(4, "allreduce", COLL, [2], attrs=comm(4 * mb))]
    write(os.path.join(HERE, "pipe.0.et"), stream(r0))
    write(os.path.join(HERE, "pipe.1.et"), stream(r1))


def ops():
    mib = 1 << 20
    nodes = [et.node(0, "fwd", COMP, duration_us=1000),
             et.node(1, "allgather_params", COLL, [0], attrs=comm(mib, kind=2)),
             et.node(2, "bwd", COMP, [1], 2000),
             et.node(3, "reduce_scatter_grads", COLL, [2], attrs=comm(4 * mib, kind=7))]
    for r in range(4):
        write(os.path.join(HERE, f"ops.{r}.et"), stream(nodes))


def bad():
    out = os.path.join(ROOT, "tests", "bad_inputs", "chakra")
    os.makedirs(out, exist_ok=True)
    good = stream([et.node(0, "fwd", COMP, duration_us=1000),
                   et.node(1, "allreduce", COLL, [0], attrs=comm(4096))])
    write(os.path.join(out, "truncated.0.et"), good[:-5])
    write(os.path.join(out, "alltoall.0.et"),
          stream([et.node(0, "fwd", COMP, duration_us=1000),
                  et.node(1, "alltoall", COLL, [0], attrs=comm(4096, kind=6))]))
    write(os.path.join(out, "missing-dep.0.et"),
          stream([et.node(0, "fwd", COMP, [7], 1000)]))
    write(os.path.join(out, "cycle.0.et"),
          stream([et.node(0, "a", COMP, [1], 1000), et.node(1, "b", COMP, [0], 1000)]))
    write(os.path.join(out, "no-size.0.et"),
          stream([et.node(0, "allreduce", COLL, attrs=et.attr("comm_type", 9, 0))]))
    # A group (wire type 3, deprecated) where the node's name should be.
    write(os.path.join(out, "group.0.et"),
          stream([et.f_varint(1, 1) + et.varint(2 << 3 | 3)]))
    # Rank 0 sends to rank 1, which never receives.
    write(os.path.join(out, "unmatched.0.et"),
          stream([et.node(0, "send", SEND, attrs=p2p(64, "comm_dst", 1, 0))]))
    write(os.path.join(out, "unmatched.1.et"), stream([et.node(0, "fwd", COMP, duration_us=10)]))
    # Past the input limits (sim/core/limits.hpp): a comm_size given as a string, a comm_size of
    # int64's maximum, a compute of 2^60 us, and a gzip-compressed stream.
    string_size = et.attr("comm_type", 9, 0) + et.f_bytes(
        10, et.f_bytes(1, b"comm_size") + et.f_bytes(29, b"1048576"))
    write(os.path.join(out, "comm-size-string.0.et"),
          stream([et.node(0, "fwd", COMP, duration_us=1000),
                  et.node(1, "allreduce", COLL, [0], attrs=string_size)]))
    write(os.path.join(out, "comm-size-int64-max.0.et"),
          stream([et.node(0, "fwd", COMP, duration_us=1000),
                  et.node(1, "allreduce", COLL, [0], attrs=comm((1 << 63) - 1))]))
    write(os.path.join(out, "compute-2-to-60-us.0.et"),
          stream([et.node(0, "fwd", COMP, duration_us=1 << 60),
                  et.node(1, "allreduce", COLL, [0], attrs=comm(4096))]))
    write(os.path.join(out, "gzip.0.et"), gzip.compress(good, mtime=0))


if __name__ == "__main__":
    pipeline()
    ops()
    bad()
