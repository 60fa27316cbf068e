#!/usr/bin/env python3
"""Generate the model profile JSON files in models/profiles/.

Measured profiles (kind "measured") are converted from PipeDream profiler
output (per-layer forward/backward times on one GPU); analytic profiles
(kind "flops") are computed from published architectures, or (resnet50-flops,
vgg16-flops) spread a published FLOP total over a measured profile's layers.

Standard library only; the output is deterministic.

Usage (from the repository root):
    /usr/bin/python3 models/profiles/tools/make_profiles.py
        [--validation-dir DIR]   default: <repo>/data/validation
        [--out DIR]              default: <repo>/models/profiles
        [--check]                write nothing; exit 1 if a file in --out differs
        [--transformer NAME --seq-len N]
                                 only transformer NAME, at N tokens per sample, as
                                 NAME_sN.json in --out
"""

import argparse
import collections
import heapq
import json
import os
import re
import sys
import tempfile

REPO_ROOT = os.path.abspath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))

BYTES_PER_PARAMETER = 4  # fp32

PIPEDREAM_REPO = "msr-fiddle/pipedream"
PIPEDREAM_COMMIT = "7db6a1c3e64996d5b319faec6ca38cb31bfea1c4"
PIPEDREAM_SUBDIR = "profiler/image_classification/profiles"

# model name -> (input shape per sample (C, H, W), model-specific note)
MEASURED_MODELS = collections.OrderedDict([
    ("resnet50", ((3, 224, 224), "")),
    ("resnet18", ((3, 224, 224), "")),
    ("resnet101", ((3, 224, 224), "")),
    ("vgg16", ((3, 224, 224), "")),
    ("alexnet", ((3, 224, 224),
                 "Caution: this profile was taken at batch size 256, not 128 "
                 "as for the other image models (the input and every layer's "
                 "activation_size imply 256).")),
    ("inception_v3", ((3, 299, 299), "")),
])

NODE_RE = re.compile(
    r"^(node(\d+)) -- (.*) -- forward_compute_time=([-+0-9.eE]+), "
    r"backward_compute_time=([-+0-9.eE]+), activation_size=([-+0-9.eE]+), "
    r"parameter_size=([-+0-9.eE]+)\s*$")
EDGE_RE = re.compile(r"^\s*(node\d+) -- (node\d+)\s*$")
LINEAR_RE = re.compile(r"^Linear\(in_features=(\d+), out_features=(\d+)")


# --------------------------------------------------------------------------
# JSON output
# --------------------------------------------------------------------------

def write_profile(path, header, layers):
    """Write header keys in the given order, then "layers", one layer per line."""
    lines = ["{"]
    for key, value in header:
        lines.append("  %s: %s," % (json.dumps(key), json.dumps(value)))
    lines.append('  "layers": [')
    for i, layer in enumerate(layers):
        sep = "," if i + 1 < len(layers) else ""
        lines.append("    " + json.dumps(layer, separators=(", ", ": ")) + sep)
    lines.append("  ]")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    json.loads(text)  # self-check: must be valid JSON
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


# --------------------------------------------------------------------------
# PipeDream graph.txt -> measured profile
# --------------------------------------------------------------------------

def parse_graph(path):
    nodes = {}
    edges = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            m = NODE_RE.match(line)
            if m:
                name = m.group(1)
                if name in nodes:
                    raise ValueError("%s:%d: duplicate node %s" % (path, lineno, name))
                nodes[name] = {
                    "id": int(m.group(2)),
                    "module": m.group(3).strip(),
                    "fwd": float(m.group(4)),
                    "bwd": float(m.group(5)),
                    "fwd_text": m.group(4),
                    "bwd_text": m.group(5),
                    "activation": float(m.group(6)),
                    "param_bytes": float(m.group(7)),
                }
                continue
            m = EDGE_RE.match(line)
            if m:
                edges.append((m.group(1), m.group(2)))
                continue
            raise ValueError("%s:%d: unrecognised line: %r" % (path, lineno, line))
    for a, b in edges:
        for n in (a, b):
            if n not in nodes:
                raise ValueError("%s: edge refers to undefined node %s" % (path, n))
    return nodes, edges


def topo_order(nodes, edges):
    """Kahn's algorithm, ties broken by numeric node id (smallest first)."""
    succ = {n: [] for n in nodes}
    indeg = {n: 0 for n in nodes}
    for a, b in sorted(set(edges)):
        succ[a].append(b)
        indeg[b] += 1
    heap = [(nodes[n]["id"], n) for n in nodes if indeg[n] == 0]
    heapq.heapify(heap)
    order = []
    while heap:
        _, n = heapq.heappop(heap)
        order.append(n)
        for s in succ[n]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(heap, (nodes[s]["id"], s))
    if len(order) != len(nodes):
        raise ValueError("graph has a cycle")
    return order, succ


def fmt_ms(text):
    """Source value (3 decimals) as a float; json prints the shortest repr."""
    return float(text)


def derive_batch_size(model, nodes, input_shape):
    """Batch size from activation sizes (fp32): Input and every Linear must agree."""
    c, h, w = input_shape
    estimates = []
    for n in sorted(nodes, key=lambda k: nodes[k]["id"]):
        node = nodes[n]
        if node["module"] == "Input":
            estimates.append((n, node["activation"] / (4.0 * c * h * w)))
        m = LINEAR_RE.match(node["module"])
        if m:
            estimates.append((n, node["activation"] / (4.0 * int(m.group(2)))))
    if not estimates:
        raise ValueError("%s: cannot derive batch size" % model)
    values = {round(v, 6) for _, v in estimates}
    if len(values) != 1 or abs(estimates[0][1] - round(estimates[0][1])) > 1e-9:
        raise ValueError("%s: inconsistent batch size estimates %r" % (model, estimates))
    return int(round(estimates[0][1])), [n for n, _ in estimates]


def make_measured(model, input_shape, extra_note, validation_dir, out_dir):
    src_rel = "%s/%s/graph.txt" % (PIPEDREAM_SUBDIR, model)
    path = os.path.join(validation_dir, "pipedream-profiles", model, "graph.txt")
    nodes, edges = parse_graph(path)
    order, succ = topo_order(nodes, edges)
    batch, batch_nodes = derive_batch_size(model, nodes, input_shape)

    # Auxiliary branches: nodes that cannot reach the main output (the last sink
    # in topological order).
    sinks = [n for n in order if not succ[n]]
    main_sink = sinks[-1]
    pred = {n: [] for n in nodes}
    for a, b in edges:
        pred[b].append(a)
    reaches_main = set()
    stack = [main_sink]
    while stack:
        n = stack.pop()
        if n in reaches_main:
            continue
        reaches_main.add(n)
        stack.extend(pred[n])
    aux = [n for n in order if n not in reaches_main]

    layers = []
    dropped = collections.Counter()
    input_nodes = []
    for n in order:
        node = nodes[n]
        if node["module"].startswith("Input"):
            input_nodes.append(n)
            continue
        if node["param_bytes"] % BYTES_PER_PARAMETER != 0:
            raise ValueError("%s: %s parameter_size %r not a multiple of 4"
                             % (model, n, node["param_bytes"]))
        params = int(node["param_bytes"]) // BYTES_PER_PARAMETER
        if params == 0 and node["fwd"] == 0.0 and node["bwd"] == 0.0:
            dropped[node["module"].split("(")[0]] += 1
            continue
        layers.append(collections.OrderedDict([
            ("name", "%s %s" % (n, node["module"])),
            ("parameters", params),
            ("forward_ms", fmt_ms(node["fwd_text"])),
            ("backward_ms", fmt_ms(node["bwd_text"])),
        ]))

    total_params = sum(l["parameters"] for l in layers)
    aux_params = sum(int(nodes[n]["param_bytes"]) // BYTES_PER_PARAMETER for n in aux)
    c, h, w = input_shape
    notes = [
        "Measured by PipeDream's profiler on a single GPU (GPU type not stated in "
        "the source); forward_ms and backward_ms are forward_compute_time and "
        "backward_compute_time per iteration at batch_size.",
        "batch_size %d is derived from the activation sizes (fp32): the Input "
        "node (%dx%dx%d per sample) and the output of every Linear layer agree "
        "(checked on %s)." % (batch, c, h, w, ", ".join(batch_nodes)),
        "Layers are in forward order (Kahn topological sort of the graph's edges, "
        "ties broken by node id); names keep the PipeDream node id and module.",
        "parameters = parameter_size / 4 (fp32 bytes)%s." % (
            "; BatchNorm layers count weight and bias only (running statistics "
            "are buffers)" if any(nodes[n]["module"].startswith("BatchNorm")
                                  for n in nodes) else ""),
        "Dropped %d node(s) with zero parameters and zero forward and backward "
        "time (%s)." % (sum(dropped.values()),
                        ", ".join("%d %s" % (dropped[k], k) for k in sorted(dropped))),
        "Dropped the Input node (%s, forward_compute_time=%s ms): its time is "
        "input loading, not layer compute." % (
            ", ".join(input_nodes),
            ", ".join(nodes[n]["fwd_text"] for n in input_nodes)),
    ]
    if aux:
        notes.append(
            "Kept the auxiliary classifier branch (%d nodes, %d parameters: %s), "
            "which is trained with the model; without it the model has %d "
            "parameters." % (len(aux), aux_params,
                             ", ".join(aux), total_params - aux_params))
    if extra_note:
        notes.append(extra_note)

    header = [
        ("name", model),
        ("source", "PipeDream profiler output, GitHub %s %s, commit %s (MIT); "
                   "converted by models/profiles/tools/make_profiles.py"
                   % (PIPEDREAM_REPO, src_rel, PIPEDREAM_COMMIT)),
        ("notes", " ".join(notes)),
        ("kind", "measured"),
        ("batch_size", batch),
        ("bytes_per_parameter", BYTES_PER_PARAMETER),
    ]
    write_profile(os.path.join(out_dir, model + ".json"), header, layers)
    fwd = sum(l["forward_ms"] for l in layers)
    bwd = sum(l["backward_ms"] for l in layers)
    print("%-13s measured  layers=%3d  params=%11d (%.2f M)  batch=%d  "
          "forward=%.3f ms  backward=%.3f ms  total=%.3f ms  dropped=%d (+%d Input)"
          % (model, len(layers), total_params, total_params / 1e6, batch,
             fwd, bwd, fwd + bwd, sum(dropped.values()), len(input_nodes)))
    return layers, batch


# --------------------------------------------------------------------------
# Analytic (flops) profiles
# --------------------------------------------------------------------------

def conv_out(size, k, s, p):
    """Convolution output size (floor), as in Caffe and PyTorch."""
    return (size + 2 * p - k) // s + 1


def pool_out(size, k, s, p):
    """Pooling output size with Caffe's ceil rounding (the GoogLeNet reference)."""
    return -(-(size + 2 * p - k) // s) + 1


def conv_layer(name, k, cin, cout, hout, wout):
    fwd = 2 * k * k * cin * cout * hout * wout
    return collections.OrderedDict([
        ("name", name),
        ("parameters", k * k * cin * cout + cout),
        ("forward_flops", fwd),
        ("backward_flops", 2 * fwd),
    ])


def fc_layer(name, fin, fout, backward_factor=2):
    fwd = 2 * fin * fout
    return collections.OrderedDict([
        ("name", name),
        ("parameters", fin * fout + fout),
        ("forward_flops", fwd),
        ("backward_flops", backward_factor * fwd),
    ])


# Szegedy et al. 2014, "Going deeper with convolutions", Table 1:
# name: (#1x1, #3x3 reduce, #3x3, #5x5 reduce, #5x5, pool proj)
GOOGLENET_INCEPTION = collections.OrderedDict([
    ("3a", (64, 96, 128, 16, 32, 32)),
    ("3b", (128, 128, 192, 32, 96, 64)),
    ("4a", (192, 96, 208, 16, 48, 64)),
    ("4b", (160, 112, 224, 24, 64, 64)),
    ("4c", (128, 128, 256, 24, 64, 64)),
    ("4d", (112, 144, 288, 32, 64, 64)),
    ("4e", (256, 160, 320, 32, 128, 128)),
    ("5a", (256, 160, 320, 32, 128, 128)),
    ("5b", (384, 192, 384, 48, 128, 128)),
])
# Output size and depth per Table 1, used as a check on the computed shapes.
GOOGLENET_TABLE_OUT = {
    "conv1": (112, 64), "pool1": (56, 64), "conv2": (56, 192), "pool2": (28, 192),
    "3a": (28, 256), "3b": (28, 480), "pool3": (14, 480),
    "4a": (14, 512), "4b": (14, 512), "4c": (14, 512), "4d": (14, 528),
    "4e": (14, 832), "pool4": (7, 832), "5a": (7, 832), "5b": (7, 1024),
    "avgpool": (1, 1024),
}


def make_googlenet(out_dir):
    layers = []
    shapes = {}
    aux_params = []
    size, ch = 224, 3

    def conv(name, k, s, p, cout):
        nonlocal size, ch
        size = conv_out(size, k, s, p)
        layers.append(conv_layer("%s conv %dx%d/%d %d->%d (out %dx%d)"
                                 % (name, k, k, s, ch, cout, size, size),
                                 k, ch, cout, size, size))
        ch = cout

    def maxpool(name, k, s):
        nonlocal size
        size = pool_out(size, k, s, 0)
        shapes[name] = (size, ch)

    conv("conv1/7x7_s2", 7, 2, 3, 64)
    shapes["conv1"] = (size, ch)
    maxpool("pool1", 3, 2)
    conv("conv2/3x3_reduce", 1, 1, 0, 64)
    conv("conv2/3x3", 3, 1, 1, 192)
    shapes["conv2"] = (size, ch)
    maxpool("pool2", 3, 2)
    for mod, (n1, n3r, n3, n5r, n5, npp) in GOOGLENET_INCEPTION.items():
        if mod == "4a":
            maxpool("pool3", 3, 2)
        if mod == "5a":
            maxpool("pool4", 3, 2)
        cin, hw = ch, size
        pre = "inception_%s/" % mod
        for bname, k, bcin, bcout in (
                ("1x1", 1, cin, n1),
                ("3x3_reduce", 1, cin, n3r),
                ("3x3", 3, n3r, n3),
                ("5x5_reduce", 1, cin, n5r),
                ("5x5", 5, n5r, n5),
                ("pool_proj", 1, cin, npp)):  # after 3x3/1 max pooling (same size)
            layers.append(conv_layer("%s%s conv %dx%d/1 %d->%d (out %dx%d)"
                                     % (pre, bname, k, k, bcin, bcout, hw, hw),
                                     k, bcin, bcout, hw, hw))
        ch = n1 + n3 + n5 + npp
        shapes[mod] = (size, ch)
        if mod in ("4a", "4d"):
            # Auxiliary classifier (not emitted): avgpool 5x5/3 -> 4x4,
            # conv 1x1 128, FC 2048->1024, FC 1024->1000 (paper section 5).
            aux_params.append((ch * 128 + 128) + (4 * 4 * 128 * 1024 + 1024)
                              + (1024 * 1000 + 1000))
    size = pool_out(size, 7, 1, 0)  # avgpool 7x7/1, valid
    shapes["avgpool"] = (size, ch)
    assert size == 1
    layers.append(fc_layer("loss3/classifier linear %d->1000" % ch, ch, 1000))

    for key, want in GOOGLENET_TABLE_OUT.items():
        if shapes[key] != want:
            raise AssertionError("GoogLeNet %s: computed %r, Table 1 says %r"
                                 % (key, shapes[key], want))

    total = sum(l["parameters"] for l in layers)
    # Each layer has one bias per output channel; names end "...->cout (...".
    biases = sum(int(re.search(r"->(\d+)", l["name"]).group(1)) for l in layers)
    notes = (
        "Analytic profile of GoogLeNet (Szegedy et al. 2014, 'Going deeper with "
        "convolutions', Table 1): 224x224x3 input; every convolution (including "
        "the 1x1 reductions and pool projections) and the final 1024->1000 linear "
        "layer is one layer with bias. parameters = k*k*cin*cout + cout; "
        "forward_flops per sample = 2*k*k*cin*cout*Hout*Wout (linear: 2*in*out); "
        "backward_flops = 2*forward_flops. Spatial sizes use floor rounding for "
        "convolutions and Caffe's ceil rounding for pooling and match Table 1. "
        "Pooling, ReLU, LRN, concatenation, dropout and softmax are not counted "
        "(no parameters, small FLOPs). The two auxiliary classifiers (used only "
        "in training) are skipped. Total %d parameters (%d weights + %d biases; "
        "the paper's figure, weights only, is about 6.8M). Cross-check: with "
        "the two auxiliary classifiers (%d parameters) the total is %d, equal "
        "blob by blob to the B-Caffe GoogLeNet logs in "
        "data/validation/bcaffe-googlenet (which pad biases to multiples of 64)."
        % (total, total - biases, biases, sum(aux_params),
           total + sum(aux_params)))
    header = [
        ("name", "googlenet"),
        ("source", "Computed from Szegedy et al. 2014, 'Going deeper with "
                   "convolutions' (arXiv:1409.4842), Table 1, by "
                   "models/profiles/tools/make_profiles.py"),
        ("notes", notes),
        ("kind", "flops"),
        ("bytes_per_parameter", BYTES_PER_PARAMETER),
    ]
    write_profile(os.path.join(out_dir, "googlenet.json"), header, layers)
    report_flops("googlenet", layers)


def make_mlp(out_dir):
    dims = [784, 256, 128, 10]
    layers = [fc_layer("fc%d linear %d->%d" % (i + 1, a, b), a, b)
              for i, (a, b) in enumerate(zip(dims, dims[1:]))]
    header = [
        ("name", "mlp"),
        ("source", "Analytic: MLP 784-256-128-10, computed by "
                   "models/profiles/tools/make_profiles.py"),
        ("notes", "Three fully connected layers with bias (ReLU between them, "
                  "not counted). parameters = in*out + out; forward_flops per "
                  "sample = 2*in*out; backward_flops = 4*in*out (gradients with "
                  "respect to weights and inputs)."),
        ("kind", "flops"),
        ("bytes_per_parameter", BYTES_PER_PARAMETER),
    ]
    write_profile(os.path.join(out_dir, "mlp.json"), header, layers)
    report_flops("mlp", layers)


# --------------------------------------------------------------------------
# FLOP profiles apportioned over measured per-layer forward times
# --------------------------------------------------------------------------

# output name -> the measured profile whose layers are reused, the published
# forward FLOPs per sample (2 FLOPs per multiply-add) and where that total is from.
FLOPS_FROM_MEASURED = collections.OrderedDict([
    ("resnet50-flops", {
        "measured": "resnet50",
        "forward_flops": 8200000000,
        "title": "ResNet-50",
        "total_source": (
            "4.1 GMAC = 8.2 GFLOP forward per 224x224 sample: torchvision's model "
            "documentation lists 4.09 GFLOPS (multiply-adds) for resnet50; He et al. "
            "2016, 'Deep Residual Learning for Image Recognition' (CVPR), Table 1, "
            "gives 3.8e9 multiply-adds for the original 50-layer model (the "
            "torchvision variant puts the stride-2 in the 3x3 convolutions)"),
    }),
    ("vgg16-flops", {
        "measured": "vgg16",
        "forward_flops": 31000000000,
        "title": "VGG-16",
        "total_source": (
            "15.5 GMAC = 31 GFLOP forward per 224x224 sample: torchvision's model "
            "documentation lists 15.47 GFLOPS (multiply-adds) for vgg16, the "
            "configuration D of Simonyan & Zisserman 2015, 'Very Deep "
            "Convolutional Networks for Large-Scale Image Recognition' (ICLR)"),
    }),
])


def apportion(total, weights):
    """Integers proportional to weights that sum exactly to total (largest remainder,
    ties to the earlier index); exact integer arithmetic, so deterministic."""
    wsum = sum(weights)
    if wsum <= 0:
        raise ValueError("apportion: weights sum to %r" % wsum)
    shares = [total * w // wsum for w in weights]
    rems = [total * w % wsum for w in weights]
    left = total - sum(shares)
    for i in sorted(range(len(weights)), key=lambda k: (-rems[k], k))[:left]:
        shares[i] += 1
    assert sum(shares) == total
    return shares


def make_flops_from_measured(name, spec, measured_layers, out_dir):
    # Forward times in integer microseconds (the source has 3 decimals of ms).
    weights = [int(round(l["forward_ms"] * 1000)) for l in measured_layers]
    fwd = apportion(spec["forward_flops"], weights)
    layers = [collections.OrderedDict([
        ("name", l["name"]),
        ("parameters", l["parameters"]),
        ("forward_flops", f),
        ("backward_flops", 2 * f),
    ]) for l, f in zip(measured_layers, fwd)]
    measured_fwd = sum(l["forward_ms"] for l in measured_layers)
    measured_bwd = sum(l["backward_ms"] for l in measured_layers)
    notes = (
        "FLOP-based profile of %s for CPU platforms (device speed x efficiency). "
        "Layers and parameters are those of the measured profile %s.json (same "
        "names, same order). Forward FLOPs per sample: the architecture's published "
        "total, %s, APPORTIONED OVER THE LAYERS IN PROPORTION TO THEIR MEASURED "
        "FORWARD TIMES in %s.json (PipeDream, one GPU, batch 128): an "
        "approximation that charges memory-bound layers (BatchNorm, ReLU, pooling) "
        "with FLOPs they do not perform, so per-layer numbers are time shares, "
        "not operation counts; only the total is a published FLOP count. Integer "
        "FLOPs by largest remainder, so the layers sum exactly to %d. "
        "backward_flops = 2 x forward_flops per layer (the usual estimate: "
        "gradients with respect to inputs and to weights); the measured GPU "
        "profile has backward/forward = %.2f overall."
        % (spec["title"], spec["measured"], spec["total_source"], spec["measured"],
           spec["forward_flops"], measured_bwd / measured_fwd))
    header = [
        ("name", name),
        ("source", "%s forward FLOPs (%s) apportioned over the layers of "
                   "models/profiles/%s.json by measured forward time, by "
                   "models/profiles/tools/make_profiles.py"
                   % (spec["title"], "%.1f GFLOP per sample" % (spec["forward_flops"] / 1e9),
                      spec["measured"])),
        ("notes", notes),
        ("kind", "flops"),
        ("bytes_per_parameter", BYTES_PER_PARAMETER),
    ]
    write_profile(os.path.join(out_dir, name + ".json"), header, layers)
    report_flops(name, layers)


# --------------------------------------------------------------------------
# Deeper variants of a measured profile: the same network family with more of
# its identical blocks (ResNet-152 from ResNet-101, VGG-19 from VGG-16)
# --------------------------------------------------------------------------

# output name -> the measured profile, its title, and per stage: the module text that
# starts the stage's repeated unit, the unit's length in layers, the stage (segment)
# it belongs to and how many units the deeper network has there; "source" cites the
# architecture. A stage's extra units get, layer by layer, the mean measured time of
# that stage's repeated units in the shallower network (same shapes, so same work).
DEEPER_FROM_MEASURED = collections.OrderedDict([
    ("resnet152", {
        "measured": "resnet101", "title": "ResNet-152",
        "stages": [("Conv2d(512, 128, kernel_size=(1, 1)", 9, None, 7),
                   ("Conv2d(1024, 256, kernel_size=(1, 1)", 9, None, 35)],
        "source": ("He et al. 2016, 'Deep Residual Learning for Image Recognition' "
                   "(CVPR), Table 1: bottleneck blocks [3, 8, 36, 3] against "
                   "ResNet-101's [3, 4, 23, 3]"),
    }),
    ("vgg19", {
        "measured": "vgg16", "title": "VGG-19",
        "stages": [("Conv2d(256, 256, kernel_size=(3, 3)", 2, 2, 3),
                   ("Conv2d(512, 512, kernel_size=(3, 3)", 2, 3, 3),
                   ("Conv2d(512, 512, kernel_size=(3, 3)", 2, 4, 4)],
        "source": ("Simonyan & Zisserman 2015, 'Very Deep Convolutional Networks for "
                   "Large-Scale Image Recognition' (ICLR), Table 1: configuration E has "
                   "4 convolutions in each of the last three stages where D (VGG-16) "
                   "has 3"),
    }),
])


def module_of(layer):
    """The module text of a measured layer's name ("node12 Conv2d(...)" -> "Conv2d(...)")."""
    return layer["name"].split(" ", 1)[1]


def segment_of(layers):
    """Per layer, how many max-pooling layers precede it (VGG's stages)."""
    seg, out = 0, []
    for l in layers:
        out.append(seg)
        if module_of(l).startswith("MaxPool2d"):
            seg += 1
    return out


def repeated_units(layers, start, length, segment):
    """Indices of the stage's repeated units: runs of `length` layers whose first module
    starts with `start` (inside `segment` if given), checked to be identical in shape."""
    segs = segment_of(layers)
    units = [i for i, l in enumerate(layers) if module_of(l).startswith(start)
             and (segment is None or segs[i] == segment)]
    if not units:
        raise ValueError("no unit starting with %r" % start)
    for i in units:
        got = [module_of(l) for l in layers[i:i + length]]
        want = [module_of(l) for l in layers[units[0]:units[0] + length]]
        if got != want:
            raise ValueError("unit at %d differs from the one at %d" % (i, units[0]))
    for a, b in zip(units, units[1:]):
        if b - a != length:
            raise ValueError("units at %d and %d are not contiguous" % (a, b))
    return units


def mean_ms(values):
    """Mean of times given with 3 decimals, in exact integer microseconds."""
    us = [int(round(v * 1000)) for v in values]
    return round(sum(us) / len(us)) / 1000


def deepen(measured_layers, stages):
    """The measured layers with each stage's unit repeated up to the stage's count."""
    plan = []
    for start, length, segment, count in stages:
        units = repeated_units(measured_layers, start, length, segment)
        if count < len(units):
            raise ValueError("%r: %d units measured, %d asked" % (start, len(units), count))
        mean = [collections.OrderedDict([
            ("name", module_of(measured_layers[units[0] + k])),
            ("parameters", measured_layers[units[0] + k]["parameters"]),
            ("forward_ms", mean_ms([measured_layers[u + k]["forward_ms"] for u in units])),
            ("backward_ms", mean_ms([measured_layers[u + k]["backward_ms"] for u in units])),
        ]) for k in range(length)]
        plan.append((units[-1] + length, len(units), count, mean))
    layers = list(measured_layers)
    for at, have, count, mean in sorted(plan, key=lambda p: -p[0]):
        extra = []
        for n in range(have + 1, count + 1):
            for l in mean:
                copy = collections.OrderedDict(l)
                copy["name"] = "repeat%d %s" % (n, l["name"])
                extra.append(copy)
        layers[at:at] = extra
    return layers


def make_deeper(name, spec, measured, out_dir):
    measured_layers, batch = measured
    layers = deepen(measured_layers, spec["stages"])
    total = sum(l["parameters"] for l in layers)
    notes = (
        "%s derived from the measured profile %s.json (PipeDream, one GPU, batch %d): "
        "%s. The shallower network's layers are kept as measured; each stage's extra "
        "units (named 'repeatN <module>', N counting the stage's units from 1) get, layer "
        "by layer, the mean measured forward and backward time of the units of that stage "
        "that are identical in shape in %s.json (same input and output sizes, so the same "
        "work on the same GPU). %d parameters. Use device.calibrate with a measured rate "
        "of this model on the GPU in question: the times are those of PipeDream's GPU."
        % (spec["title"], spec["measured"], batch, spec["source"], spec["measured"], total))
    header = [
        ("name", name),
        ("source", "%s: %s.json's measured layers with more of its identical blocks "
                   "(%s), by models/profiles/tools/make_profiles.py"
                   % (spec["title"], spec["measured"], spec["source"].split(",")[0])),
        ("notes", notes),
        ("kind", "measured"),
        ("batch_size", batch),
        ("bytes_per_parameter", BYTES_PER_PARAMETER),
    ]
    write_profile(os.path.join(out_dir, name + ".json"), header, layers)
    fwd = sum(l["forward_ms"] for l in layers)
    bwd = sum(l["backward_ms"] for l in layers)
    print("%-13s derived   layers=%3d  params=%11d (%.2f M)  forward=%.3f ms  "
          "backward=%.3f ms" % (name, len(layers), total, total / 1e6, fwd, bwd))


# --------------------------------------------------------------------------
# S2VT (Venugopalan et al., ICCV 2015): analytic
# --------------------------------------------------------------------------

S2VT = {
    "feature": 4096,      # VGG-16 fc7 per frame (precomputed; the CNN is not trained)
    "embed": 500,         # linear projection of the frame feature; word embedding size
    "hidden": 1000,       # both LSTM layers
    "vocabulary": 12594,  # MSVD vocabulary reported for S2VT
    "steps": 80,          # unrolled time steps (S2VT's cap)
    "decode_steps": 21,   # up to 20 words + <EOS> (reference code truncates to 20 words)
}


def lstm_layer(name, inputs, hidden, steps):
    params = 4 * hidden * (inputs + hidden + 1)
    fwd = steps * 2 * params
    return collections.OrderedDict([
        ("name", name),
        ("parameters", params),
        ("forward_flops", fwd),
        ("backward_flops", 2 * fwd),
    ])


def make_s2vt(out_dir):
    c = S2VT
    t, t_dec = c["steps"], c["decode_steps"]
    t_enc = t - t_dec
    f, e, h, v = c["feature"], c["embed"], c["hidden"], c["vocabulary"]
    frame = fc_layer("frame_embed linear %d->%d (fc7 projection, %d encoding steps)"
                     % (f, e, t_enc), f, e)
    frame["forward_flops"] *= t_enc
    frame["backward_flops"] *= t_enc
    words = collections.OrderedDict([
        ("name", "word_embed lookup %dx%d (no FLOPs counted)" % (v, e)),
        ("parameters", v * e),
        ("forward_flops", 0),
        ("backward_flops", 0),
    ])
    out = fc_layer("predict linear %d->%d + softmax (%d decoding steps)" % (h, v, t_dec), h, v)
    out["forward_flops"] *= t_dec
    out["backward_flops"] *= t_dec
    layers = [
        frame,
        lstm_layer("lstm1 LSTM %d->%d (%d steps)" % (e, h, t), e, h, t),
        words,
        lstm_layer("lstm2 LSTM %d+%d->%d (%d steps)" % (h, e, h, t), h + e, h, t),
        out,
    ]
    fwd = sum(l["forward_flops"] for l in layers)
    padded = fwd + (t - t_enc) * 2 * f * e + (t - t_dec) * 2 * h * v
    notes = (
        "Analytic profile of S2VT (Venugopalan et al. 2015, 'Sequence to Sequence - "
        "Video to Text', ICCV), the MSVD configuration: precomputed VGG-16 fc7 frame "
        "features (%d-d; the CNN is not trained), a linear projection %d->%d, two "
        "stacked LSTMs with %d hidden units (layer 1 input %d; layer 2 input %d = %d "
        "from layer 1 + %d-d word embedding), a word embedding and a softmax over a "
        "vocabulary of %d words, unrolled over %d time steps: %d encoding steps "
        "(frames) then %d decoding steps (up to 20 words + <EOS>; the authors' "
        "reference code, GitHub vsubhashini/caffe examples/s2vt/"
        "framefc7_stream_text_to_hdf5_data.py, pads or truncates every video-sentence "
        "pair to 80 steps and truncates captions to 20 words). parameters: linear "
        "in*out + out; LSTM 4*hidden*(input+hidden+1) (four gates, one bias each); "
        "embedding vocabulary*%d. forward_flops per sample (2 FLOPs per multiply-add): "
        "projection 2*in*out per encoding step, LSTM 2*4*hidden*(input+hidden+1) per "
        "step for all %d steps (both layers run at every step: layer 1 reads zero "
        "padding while decoding, layer 2 reads a padding word while encoding), "
        "predict 2*hidden*vocabulary per decoding step; the embedding lookup, gate "
        "nonlinearities, element-wise cell updates and the softmax normalisation are "
        "not counted. backward_flops = 2 x forward_flops. A framework that runs the "
        "projection and the predict layer on all %d padded steps (as the Caffe "
        "reference does) performs %.4g forward GFLOP per sample instead of %.4g (+%.0f %%). "
        "Layers are in forward order (the embedding feeds layer 2); backward is taken "
        "layer by layer (each LSTM's backpropagation through time completes before "
        "the layer below), as in Caffe, where each LSTM is one layer of the net."
        % (f, f, e, h, e, h + e, h, e, v, t, t_enc, t_dec, e, t, t, padded / 1e9, fwd / 1e9,
           100.0 * (padded - fwd) / fwd))
    header = [
        ("name", "s2vt"),
        ("source", "Computed from Venugopalan et al. 2015, 'Sequence to Sequence - "
                   "Video to Text' (ICCV; arXiv:1505.00487) by "
                   "models/profiles/tools/make_profiles.py"),
        ("notes", notes),
        ("kind", "flops"),
        ("bytes_per_parameter", BYTES_PER_PARAMETER),
    ]
    write_profile(os.path.join(out_dir, "s2vt.json"), header, layers)
    report_flops("s2vt", layers)


# --------------------------------------------------------------------------
# Transformers (analytic, from the papers' dimensions)
# --------------------------------------------------------------------------
# Per sample at sequence length S, hidden H, A heads, feed-forward F; a multiply-add is 2 FLOPs.
# Linear in->out over S tokens: 2*S*in*out; attention scores Q.K^T and attention.V: 2*S*S*H
# each (all heads); softmax ~5 FLOPs per score (A*S*S scores); GELU ~8 per element;
# residual add + LayerNorm ~8 per element. Backward = 2 x forward (weight and input gradients).

def linear_params(fin, fout):
    return fin * fout + fout


def attention_layer(name, s, h, heads, layer_norm_params):
    fwd = 4 * 2 * s * h * h + 2 * 2 * s * s * h + 5 * heads * s * s + 8 * s * h
    return {"name": name, "parameters": 4 * linear_params(h, h) + layer_norm_params,
            "forward_flops": fwd, "backward_flops": 2 * fwd}


def feed_forward_layer(name, s, h, f, layer_norm_params):
    fwd = 2 * 2 * s * h * f + 8 * s * f + 8 * s * h
    return {"name": name,
            "parameters": linear_params(h, f) + linear_params(f, h) + layer_norm_params,
            "forward_flops": fwd, "backward_flops": 2 * fwd}


TRANSFORMERS = collections.OrderedDict([
    ("bert_base", dict(kind="bert", layers=12, hidden=768, heads=12, ff=3072, vocab=30522,
                       positions=512, seq=128,
                       source="Devlin et al. 2019, BERT (arXiv:1810.04805), BERT-base: 12 layers, "
                              "hidden 768, 12 heads, feed-forward 3072; vocabulary 30522 "
                              "(WordPiece), 512 positions, 2 token types; sequence length 128 "
                              "(the paper's pre-training phase 1)")),
    ("bert_large", dict(kind="bert", layers=24, hidden=1024, heads=16, ff=4096, vocab=30522,
                        positions=512, seq=128,
                        source="Devlin et al. 2019, BERT (arXiv:1810.04805), BERT-large: 24 "
                               "layers, hidden 1024, 16 heads, feed-forward 4096; vocabulary "
                               "30522, 512 positions, 2 token types; sequence length 128")),
    ("gpt2", dict(kind="gpt2", layers=12, hidden=768, heads=12, ff=3072, vocab=50257,
                  positions=1024, seq=1024,
                  source="Radford et al. 2019, Language Models are Unsupervised Multitask "
                         "Learners (GPT-2), smallest model: 12 decoder layers, d_model 768, 12 "
                         "heads, feed-forward 4 x 768; vocabulary 50257 (byte-level BPE), "
                         "context 1024; sequence length 1024")),
    ("gpt2_medium", dict(kind="gpt2", layers=24, hidden=1024, heads=16, ff=4096, vocab=50257,
                         positions=1024, seq=1024,
                         source="Radford et al. 2019, Language Models are Unsupervised "
                                "Multitask Learners (GPT-2), the 345M model: 24 decoder "
                                "layers, d_model 1024, 16 heads, feed-forward 4 x 1024; "
                                "vocabulary 50257 (byte-level BPE), context 1024; sequence "
                                "length 1024")),
    ("gpt2_large", dict(kind="gpt2", layers=36, hidden=1280, heads=20, ff=5120, vocab=50257,
                        positions=1024, seq=1024,
                        source="Radford et al. 2019, Language Models are Unsupervised "
                               "Multitask Learners (GPT-2), the 762M model (Hugging Face "
                               "gpt2-large): 36 decoder layers, d_model 1280, 20 heads, "
                               "feed-forward 4 x 1280; vocabulary 50257 (byte-level BPE), "
                               "context 1024; sequence length 1024")),
    ("gpt2_xl", dict(kind="gpt2", layers=48, hidden=1600, heads=25, ff=6400, vocab=50257,
                     positions=1024, seq=1024,
                     source="Radford et al. 2019, Language Models are Unsupervised Multitask "
                            "Learners (GPT-2), the 1542M model (Hugging Face gpt2-xl): 48 "
                            "decoder layers, d_model 1600, 25 heads, feed-forward 4 x 1600; "
                            "vocabulary 50257 (byte-level BPE), context 1024; sequence length "
                            "1024")),
    ("llama2_7b", dict(kind="llama", layers=32, hidden=4096, heads=32, kv_heads=32, ff=11008,
                       vocab=32000, seq=4096,
                       source="Touvron et al. 2023, Llama 2 (arXiv:2307.09288), 7B: 32 layers, "
                              "d_model 4096, 32 heads, SwiGLU feed-forward 11008, vocabulary "
                              "32000, context 4096 (the Hugging Face Llama-2-7b-hf config); "
                              "sequence length 4096 (the paper's pre-training length)")),
    ("llama2_13b", dict(kind="llama", layers=40, hidden=5120, heads=40, kv_heads=40, ff=13824,
                        vocab=32000, seq=4096,
                        source="Touvron et al. 2023, Llama 2 (arXiv:2307.09288), 13B: 40 "
                               "layers, d_model 5120, 40 heads, SwiGLU feed-forward 13824, "
                               "vocabulary 32000, context 4096 (the Hugging Face "
                               "Llama-2-13b-hf config); sequence length 4096")),
    ("llama2_70b", dict(kind="llama", layers=80, hidden=8192, heads=64, kv_heads=8, ff=28672,
                        vocab=32000, seq=4096,
                        source="Touvron et al. 2023, Llama 2 (arXiv:2307.09288), 70B: 80 "
                               "layers, d_model 8192, 64 heads, grouped-query attention with 8 "
                               "key-value heads, SwiGLU feed-forward 28672, vocabulary 32000, "
                               "context 4096 (the Hugging Face Llama-2-70b-hf config); "
                               "sequence length 4096")),
    ("llama3_8b", dict(kind="llama", layers=32, hidden=4096, heads=32, kv_heads=8, ff=14336,
                       vocab=128256, seq=8192,
                       source="Meta Llama 3 8B (Grattafiori et al. 2024, The Llama 3 Herd of "
                              "Models, arXiv:2407.21783, Table 3): 32 layers, d_model 4096, 32 "
                              "heads, grouped-query attention with 8 key-value heads, SwiGLU "
                              "feed-forward 14336, vocabulary 128256, context 8192 (the Hugging "
                              "Face Meta-Llama-3-8B config); sequence length 8192")),
    ("transformer_base", dict(kind="seq2seq", layers=6, hidden=512, heads=8, ff=2048,
                              vocab=37000, seq=128,
                              source="Vaswani et al. 2017, Attention Is All You Need "
                                     "(arXiv:1706.03762), Table 3, base: 6 encoder and 6 "
                                     "decoder layers, d_model 512, 8 heads, d_ff 2048; shared "
                                     "source-target vocabulary of about 37000 BPE tokens "
                                     "(WMT 2014 English-German, section 5.1), embeddings tied "
                                     "to the pre-softmax projection (section 3.4); 128 + 128 "
                                     "tokens per sample")),
    ("transformer_big", dict(kind="seq2seq", layers=6, hidden=1024, heads=16, ff=4096,
                             vocab=37000, seq=128,
                             source="Vaswani et al. 2017, Attention Is All You Need "
                                    "(arXiv:1706.03762), Table 3, big: 6 encoder and 6 decoder "
                                    "layers, d_model 1024, 16 heads, d_ff 4096; vocabulary and "
                                    "tying as the base model; 128 + 128 tokens per sample")),
])


def seq2seq_layers(c):
    """Vaswani et al.'s encoder-decoder: post-LayerNorm sub-layers, sinusoidal positions (no
    parameters), one embedding matrix for source, target and the pre-softmax projection."""
    s, h, heads, f, v = c["seq"], c["hidden"], c["heads"], c["ff"], c["vocab"]
    ln = 2 * h
    layers = [{"name": "embeddings (source, target and pre-softmax, shared)",
               "parameters": v * h, "forward_flops": 0, "backward_flops": 0}]
    for i in range(c["layers"]):
        layers.append(attention_layer("encoder%d self-attention (Q,K,V,O) + LayerNorm" % i,
                                      s, h, heads, ln))
        layers.append(feed_forward_layer(
            "encoder%d feed-forward %d->%d->%d + LayerNorm" % (i, h, f, h), s, h, f, ln))
    for i in range(c["layers"]):
        # Source and target both of s tokens: the cross-attention costs what self-attention does.
        layers.append(attention_layer("decoder%d masked self-attention (Q,K,V,O) + LayerNorm" % i,
                                      s, h, heads, ln))
        layers.append(attention_layer("decoder%d encoder-decoder attention (Q,K,V,O) + LayerNorm"
                                      % i, s, h, heads, ln))
        layers.append(feed_forward_layer(
            "decoder%d feed-forward %d->%d->%d + LayerNorm" % (i, h, f, h), s, h, f, ln))
    layers.append({"name": "pre-softmax projection (tied to the embeddings)", "parameters": 0,
                   "forward_flops": 2 * s * h * v, "backward_flops": 4 * s * h * v})
    return layers


def bert_layers(c):
    s, h, heads, f = c["seq"], c["hidden"], c["heads"], c["ff"]
    ln = 2 * h
    layers = [{"name": "embeddings (word, position, token type) + LayerNorm",
               "parameters": (c["vocab"] + c["positions"] + 2) * h + ln,
               "forward_flops": 8 * s * h, "backward_flops": 16 * s * h}]
    for i in range(c["layers"]):
        layers.append(attention_layer("encoder%d self-attention (Q,K,V,O) + LayerNorm" % i,
                                      s, h, heads, ln))
        layers.append(feed_forward_layer(
            "encoder%d feed-forward %d->%d->%d + LayerNorm" % (i, h, f, h), s, h, f, ln))
    layers.append({"name": "pooler linear %d->%d (first token)" % (h, h),
                   "parameters": linear_params(h, h),
                   "forward_flops": 2 * h * h, "backward_flops": 4 * h * h})
    return layers


def gpt2_layers(c):
    s, h, heads, f, v = c["seq"], c["hidden"], c["heads"], c["ff"], c["vocab"]
    ln = 2 * h
    layers = [{"name": "embeddings (token, position)",
               "parameters": (v + c["positions"]) * h,
               "forward_flops": 0, "backward_flops": 0}]
    for i in range(c["layers"]):
        layers.append(attention_layer("block%d LayerNorm + causal self-attention (QKV,O)" % i,
                                      s, h, heads, ln))
        layers.append(feed_forward_layer(
            "block%d LayerNorm + MLP %d->%d->%d" % (i, h, f, h), s, h, f, ln))
    layers.append({"name": "final LayerNorm + LM head (tied to the token embedding)",
                   "parameters": ln,
                   "forward_flops": 8 * s * h + 2 * s * h * v,
                   "backward_flops": 2 * (8 * s * h + 2 * s * h * v)})
    return layers


def llama_layers(c):
    """Llama's decoder: RMSNorm before each sub-layer (a weight of H, no bias), attention
    without biases whose K and V projections have kv_heads x head_dim outputs (grouped-query
    attention), rotary positions (no parameters), a SwiGLU MLP of three bias-free matrices and
    an output head of its own (not tied to the token embedding)."""
    s, h, heads, kv_heads, f, v = (c["seq"], c["hidden"], c["heads"], c["kv_heads"], c["ff"],
                                   c["vocab"])
    kv = kv_heads * (h // heads)
    layers = [{"name": "token embedding", "parameters": v * h,
               "forward_flops": 0, "backward_flops": 0}]
    for i in range(c["layers"]):
        # Q and O: H x H each, K and V: H x kv each; rotary on Q and K ~6 per element;
        # Q.K^T and attention.V in full (2*S*S*H each), softmax ~5 per score; RMSNorm +
        # residual ~8 per element.
        fwd = (2 * 2 * s * h * h + 2 * 2 * s * h * kv + 6 * s * (h + kv)
               + 2 * 2 * s * s * h + 5 * heads * s * s + 8 * s * h)
        layers.append({"name": "block%d RMSNorm + self-attention (Q,K,V,O; %d key-value heads)"
                               % (i, kv_heads),
                       "parameters": 2 * h * h + 2 * h * kv + h,
                       "forward_flops": fwd, "backward_flops": 2 * fwd})
        # gate and up: H -> F each, down: F -> H; SiLU and the product ~8 per element of F.
        fwd = 3 * 2 * s * h * f + 8 * s * f + 8 * s * h
        layers.append({"name": "block%d RMSNorm + SwiGLU MLP %d->%d->%d" % (i, h, f, h),
                       "parameters": 3 * h * f + h,
                       "forward_flops": fwd, "backward_flops": 2 * fwd})
    head = 8 * s * h + 2 * s * h * v
    layers.append({"name": "final RMSNorm + output head (untied)", "parameters": h + v * h,
                   "forward_flops": head, "backward_flops": 2 * head})
    return layers


def make_transformer(name, c, out_dir):
    layers = {"bert": bert_layers, "gpt2": gpt2_layers, "seq2seq": seq2seq_layers,
              "llama": llama_layers}[c["kind"]](c)
    total = sum(l["parameters"] for l in layers)
    if c["kind"] == "seq2seq":
        notes = ("The Transformer of Vaswani et al. 2017 (encoder-decoder, post-LayerNorm): %d "
                 "parameters (the paper's Table 3 gives %s; the count depends on the BPE "
                 "vocabulary). Encoder layers are two profile layers (self-attention, "
                 "feed-forward), decoder layers three (masked self-attention, encoder-decoder "
                 "attention, feed-forward), each with its LayerNorm; FLOPs as for BERT (2 per "
                 "multiply-add of every linear layer, Q.K^T and attention.V in full, ~5 per "
                 "softmax score, ~8 per activation and residual + LayerNorm element). One sample "
                 "is a sentence pair of %d source and %d target tokens (a batch of T tokens per "
                 "side is batch_size T / %d); the shared embedding is one tensor, first in "
                 "forward order, whose gradient is all-reduced densely; the pre-softmax "
                 "projection reuses it (FLOPs, no parameters of its own). Backward = 2 x "
                 "forward. Calibrate the time with device.calibrate from a measured rate."
                 % (total, "65M" if c["hidden"] == 512 else "213M", c["seq"], c["seq"],
                    c["seq"]))
    elif c["kind"] == "bert":
        notes = ("BertModel (embeddings, %d encoder layers, pooler; no pre-training heads): "
                 "%d parameters (the Hugging Face count). Each encoder layer is two layers here: "
                 "self-attention (Q, K, V and output projections, 2*S*H*H FLOPs each, plus "
                 "Q.K^T and attention.V, 2*S*S*H each, softmax ~5 FLOPs per score, residual + "
                 "LayerNorm ~8 per element) and feed-forward (two linear layers, 2*S*H*F each, "
                 "GELU ~8 per element, residual + LayerNorm). Embedding lookups cost no FLOPs "
                 "but their gradient (word embeddings included) is all-reduced densely, as "
                 "PyTorch DDP does. Per sample at sequence length %d; backward = 2 x forward."
                 % (c["layers"], total, c["seq"]))
    elif c["kind"] == "llama":
        notes = ("LlamaForCausalLM: %d parameters (the Hugging Face count). Each decoder layer "
                 "is two layers here: RMSNorm + self-attention (Q and O projections 2*S*H*H "
                 "FLOPs each, K and V 2*S*H*KV each with KV = key-value heads x head size, "
                 "rotary positions ~6 per element of Q and K, Q.K^T and attention.V 2*S*S*H "
                 "each computed in full, softmax ~5 per score, residual ~8 per element) and "
                 "RMSNorm + SwiGLU MLP (three matrices, 2*S*H*F each, SiLU and product ~8 per "
                 "element). No biases. The output head is a matrix of its own (2*S*H*V FLOPs). "
                 "Per sample (one sequence of %d tokens); backward = 2 x forward (no activation "
                 "checkpointing). fp32 gradients (bytes_per_parameter 4): set "
                 "gradient_precision for bf16 or fp16 ones."
                 % (total, c["seq"]))
    else:
        notes = ("GPT2Model plus its tied LM head: %d parameters (the Hugging Face gpt2 count). "
                 "Pre-LayerNorm decoder blocks, each two layers here: LayerNorm + causal "
                 "self-attention (fused QKV 3*2*S*H*H and output 2*S*H*H FLOPs, Q.K^T and "
                 "attention.V 2*S*S*H each computed in full then masked, as the reference "
                 "implementation does; softmax ~5 per score, residual ~8 per element) and "
                 "LayerNorm + MLP (2*S*H*F each way, GELU ~8 per element). The LM head reuses "
                 "the token embedding (2*S*H*V FLOPs, no parameters of its own: its gradient is "
                 "part of the embeddings layer's). Per sample (one sequence of %d tokens); "
                 "backward = 2 x forward." % (total, c["seq"]))
    header = [("name", name),
              ("source", "Analytic: " + c["source"] + "; generated by "
               "models/profiles/tools/make_profiles.py"),
              ("notes", notes), ("kind", "flops"),
              ("bytes_per_parameter", BYTES_PER_PARAMETER)]
    write_profile(os.path.join(out_dir, name + ".json"), header, layers)
    report_flops(name, layers)


def report_flops(name, layers):
    total = sum(l["parameters"] for l in layers)
    fwd = sum(l["forward_flops"] for l in layers)
    bwd = sum(l["backward_flops"] for l in layers)
    print("%-13s flops     layers=%3d  params=%11d (%.2f M)  "
          "forward=%.6g GFLOP  backward=%.6g GFLOP  total=%.6g GFLOP per sample"
          % (name, len(layers), total, total / 1e6, fwd / 1e9, bwd / 1e9,
             (fwd + bwd) / 1e9))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--validation-dir",
                    default=os.path.join(REPO_ROOT, "data", "validation"),
                    help="directory holding pipedream-profiles/ "
                         "(default: data/validation relative to the repo root)")
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "models", "profiles"),
                    help="output directory (default: models/profiles in the repo)")
    ap.add_argument("--check", action="store_true",
                    help="generate into a temporary directory and exit 1 if any "
                         "file differs from the one in --out")
    ap.add_argument("--transformer", metavar="NAME", choices=list(TRANSFORMERS),
                    help="write only this transformer's profile, at --seq-len tokens per "
                         "sample, as NAME_sN.json in --out (a name for \"model\")")
    ap.add_argument("--seq-len", type=int, metavar="N",
                    help="with --transformer: tokens per sample (sequence length)")
    args = ap.parse_args(argv)
    if (args.transformer is None) != (args.seq_len is None) or (
            args.seq_len is not None and args.seq_len < 1):
        ap.error("--transformer NAME and --seq-len N (N >= 1) go together")
    if args.transformer:
        return write_at_sequence_length(args.transformer, args.seq_len, args.out)
    validation_dir = os.path.normpath(args.validation_dir)
    if args.check:
        return check(validation_dir, os.path.normpath(args.out))
    out_dir = os.path.normpath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    generate(validation_dir, out_dir)
    return 0


def write_at_sequence_length(name, seq_len, out_dir):
    """One transformer profile with another sequence length (positions of learned-position
    models grow to it: BERT and GPT-2 cannot run longer than their tables otherwise)."""
    config = dict(TRANSFORMERS[name], seq=seq_len)
    if "positions" in config:
        config["positions"] = max(config["positions"], seq_len)
    config["source"] += "; here at sequence length %d (--seq-len)" % seq_len
    os.makedirs(out_dir, exist_ok=True)
    make_transformer("%s_s%d" % (name, seq_len), config, out_dir)
    return 0


def check(validation_dir, out_dir):
    """Exit status 1 if a generated profile differs from (or is missing in) out_dir."""
    with tempfile.TemporaryDirectory() as tmp:
        generate(validation_dir, tmp)
        stale = 0
        for name in sorted(os.listdir(tmp)):
            shipped = os.path.join(out_dir, name)
            with open(os.path.join(tmp, name), encoding="utf-8") as f:
                text = f.read()
            if not os.path.exists(shipped) or open(shipped, encoding="utf-8").read() != text:
                print("%s: differs from what the generator gives; rerun %s"
                      % (shipped, sys.argv[0]))
                stale += 1
    return 1 if stale else 0


def generate(validation_dir, out_dir):
    measured = {}
    for model, (shape, note) in MEASURED_MODELS.items():
        measured[model] = make_measured(model, shape, note, validation_dir, out_dir)
    make_googlenet(out_dir)
    make_mlp(out_dir)
    for model, spec in FLOPS_FROM_MEASURED.items():
        make_flops_from_measured(model, spec, measured[spec["measured"]][0], out_dir)
    for model, spec in DEEPER_FROM_MEASURED.items():
        make_deeper(model, spec, measured[spec["measured"]], out_dir)
    make_s2vt(out_dir)
    for name, config in TRANSFORMERS.items():
        make_transformer(name, config, out_dir)


if __name__ == "__main__":
    sys.exit(main())
