#!/usr/bin/env python3
"""Outside sim/schemes and sim/collectives no code compares against a scheme's or a
collective's name, outside the importer files (sim/trace/*_importer*.cpp) none against an
importer's format name, and outside models/learn (the predictor registrations in
models/learn/predictors/*.cpp, with their aliases) none against a predictor's name; outside
sim/scenario/network_model.cpp none against a network model's, a fidelity's, a generated
topology's or a flow symmetry's name (other layers hold the NetworkModel / Fidelity / Topology /
FlowSymmetry enum read once at input), and outside sim/scenario/transport.cpp none against a
link technology's name, and outside the files that register subcommands (sim/app/*_cmd.cpp,
commands.cpp) and the registry (sim/app/subcommand.cpp) none against a subcommand's name or
alias: other layers ask the registries (update rules, traits, collective
properties and declared options, Importer methods, learn::predictor_*, applies_lv08_factors,
is_simgrid_cluster, uses_sockets, ...). Names are read from the registrations and tables
themselves, so a new scheme, collective, importer, predictor, network model, fidelity,
topology, flow symmetry, technology or subcommand is covered without editing this file.

Usage: no_name_compare.py ROOT        (exit 1 and one line per comparison found)
       no_name_compare.py --selftest  (shows the check fails on a planted comparison)
"""
import pathlib
import re
import sys
import tempfile

OWNERS = ("sim/schemes/", "sim/collectives/")
# A comparison is about a scheme or collective when the other operand says so.
SUBJECT = re.compile(r"scheme|collective|algorithm|name\(\)|\btype\b")


def registered_names(root):
    names = set()
    for p in (root / "sim/schemes").glob("*.cpp"):
        names.update(re.findall(r'SchemeRegistration\s+\w+\s*\{\s*\{\s*"(\w+)"', p.read_text()))
    for p in (root / "sim/collectives").glob("*.cpp"):
        text = p.read_text()
        names.update(re.findall(r'name\(\) const override \{ return "(\w+)"; \}', text))
        for group in re.findall(r"aliases\(\) const override \{ return \{([^}]*)\}", text):
            names.update(re.findall(r'"(\w+)"', group))
    return names


def importer_names(root):
    names = set()
    for p in (root / "sim/trace").glob("*.cpp"):
        text = p.read_text()
        if "ImporterRegistration" in text:
            names.update(re.findall(r'name\(\) const override \{ return "([\w-]+)"; \}', text))
    return names


def predictor_names(root):
    names = set()
    for p in (root / "models/learn").rglob("*.cpp"):
        text = p.read_text()
        if "PredictorRegistration" not in text:
            continue
        names.update(re.findall(r'\.id\s*=\s*"(\w+)"', text))
        for group in re.findall(r"\.aliases\s*=\s*\{([^}]*)\}", text):
            names.update(re.findall(r'"(\w+)"', group))
    return names


def network_model_names(root):
    """The network models' and fidelities' names, from their tables."""
    text = (root / "sim/scenario/network_model.cpp").read_text()
    return set(re.findall(r'\{"([\w-]+)",\s*(?:NetworkModel|Fidelity)::\w+\}', text))


def topology_names(root):
    """The generated topologies' and flow symmetries' names, from their tables."""
    text = (root / "sim/scenario/network_model.cpp").read_text()
    return set(re.findall(r'\{"([\w-]+)",\s*(?:Topology|FlowSymmetry)::\w+\}', text))


def technology_names(root):
    """The link technologies, from technology_names()'s list."""
    text = (root / "sim/scenario/transport.cpp").read_text()
    body = re.search(r"technology_names\(\)\s*\{\s*return\s*\{([^}]*)\}", text)
    return set(re.findall(r'"([\w-]+)"', body.group(1))) if body else set()


def subcommand_names(root):
    """The subcommands' names and aliases, from their RegisterSubcommand lines."""
    names = set()
    registration = re.compile(
        r'RegisterSubcommand\s+\w+\(\s*\{\s*"([\w-]+)"[^{}]*\}\s*(?:,\s*\{([^}]*)\})?\s*\)')
    for p in (root / "sim/app").glob("*.cpp"):
        for name, aliases in registration.findall(p.read_text()):
            names.add(name)
            names.update(re.findall(r'"([\w-]+)"', aliases))
    return names


def subcommand_owners(root):
    """The files that register a subcommand, and the registry's own file."""
    owners = {"sim/app/subcommand.cpp"}
    for p in (root / "sim/app").glob("*.cpp"):
        if re.search(r"RegisterSubcommand\s+\w+\(", p.read_text()):
            owners.add(p.relative_to(root).as_posix())
    return tuple(sorted(owners))


SUBCOMMAND_SUBJECT = re.compile(r"command|\bcmd\b|\bverb\b|\bargs?\[0\]|\bargv\[0\]")

NETWORK_OWNERS = ("sim/scenario/network_model.cpp",)
NETWORK_SUBJECT = re.compile(r"network_model|fidelity|\bmodel\b")
TOPOLOGY_SUBJECT = re.compile(r"topolog|\btopo\b|symmetry")
TECHNOLOGY_OWNERS = ("sim/scenario/transport.cpp",)
TECHNOLOGY_SUBJECT = re.compile(r"technology")

PREDICTOR_OWNERS = ("models/learn/",)
PREDICTOR_SUBJECT = re.compile(r"predictor")

IMPORTER_OWNERS = re.compile(r"sim/trace/(\w*_importers?\.cpp|import\.cpp)$")
FORMAT_SUBJECT = re.compile(r"format")


def comparisons(root, names, owners=OWNERS, subject=SUBJECT, owner_file=None):
    alternatives = "|".join(sorted(map(re.escape, names)))
    literal = rf'"(?:{alternatives})"'
    pattern = re.compile(rf"(\S[^;(){{}}]*?)\s*(?:==|!=)\s*{literal}|{literal}\s*(?:==|!=)\s*([^;(){{}}]*)")
    for base in ("sim", "models", "python"):
        for p in sorted((root / base).rglob("*")):
            rel = p.relative_to(root).as_posix()
            if p.suffix not in (".cpp", ".hpp") or rel.startswith(owners):
                continue
            if owner_file and owner_file.search(rel):
                continue
            for n, line in enumerate(p.read_text().splitlines(), 1):
                for m in pattern.finditer(line):
                    if subject.search(m.group(1) or m.group(2) or ""):
                        yield f"{rel}:{n}: {line.strip()}"


def check(root):
    names = registered_names(root)
    if not {"sync", "ring"} <= names:
        print(f"no_name_compare: found no registrations under {root}")
        return 1
    found = list(comparisons(root, names))
    for f in found:
        print("compares a scheme or collective name outside its registry:", f)
    formats = importer_names(root)
    if not {"osu"} <= formats:
        print(f"no_name_compare: found no importer registrations under {root}")
        return 1
    found_formats = list(comparisons(root, formats, (), FORMAT_SUBJECT, IMPORTER_OWNERS))
    for f in found_formats:
        print("compares an importer's format name outside its importer:", f)
    predictors = predictor_names(root)
    if not {"arrses", "none"} <= predictors:
        print(f"no_name_compare: found no predictor registrations under {root}")
        return 1
    found_predictors = list(comparisons(root, predictors, PREDICTOR_OWNERS, PREDICTOR_SUBJECT))
    for f in found_predictors:
        print("compares a predictor's name outside models/learn:", f)
    models = network_model_names(root)
    if not {"links", "ideal", "flow", "analytic"} <= models:
        print(f"no_name_compare: found no network model and fidelity table under {root}")
        return 1
    found_models = list(comparisons(root, models, NETWORK_OWNERS, NETWORK_SUBJECT))
    for f in found_models:
        print("compares a network model's or fidelity's name outside its table:", f)
    topologies = topology_names(root)
    if not {"star", "fat_tree", "rotation"} <= topologies:
        print(f"no_name_compare: found no topology and flow symmetry table under {root}")
        return 1
    found_topologies = list(comparisons(root, topologies, NETWORK_OWNERS, TOPOLOGY_SUBJECT))
    for f in found_topologies:
        print("compares a topology's or flow symmetry's name outside its table:", f)
    technologies = technology_names(root)
    if not {"tcp", "nvlink"} <= technologies:
        print(f"no_name_compare: found no technology table under {root}")
        return 1
    found_technologies = list(comparisons(root, technologies, TECHNOLOGY_OWNERS,
                                          TECHNOLOGY_SUBJECT))
    for f in found_technologies:
        print("compares a link technology's name outside sim/scenario/transport.cpp:", f)
    commands = subcommand_names(root)
    if not {"run", "version", "--version"} <= commands:
        print(f"no_name_compare: found no subcommand registrations under {root}")
        return 1
    found_commands = list(comparisons(root, commands, subcommand_owners(root),
                                      SUBCOMMAND_SUBJECT))
    for f in found_commands:
        print("compares a subcommand's name outside its file and the registry:", f)
    return 1 if (found or found_formats or found_predictors or found_models or
                 found_topologies or found_technologies or found_commands) else 0


def selftest():
    here = pathlib.Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        for sub in ("sim/schemes", "sim/collectives", "sim/app", "sim/trace", "sim/scenario",
                    "sim/engine", "models/learn", "python"):
            (root / sub).mkdir(parents=True)
        for f in ("network_model.cpp", "transport.cpp"):
            (root / "sim/scenario" / f).write_text((here / "sim/scenario" / f).read_text())
        (root / "sim/trace/osu_importer.cpp").write_text(
            (here / "sim/trace/osu_importer.cpp").read_text())
        for f in ("sync.cpp", "ssp.cpp"):
            (root / "sim/schemes" / f).write_text((here / "sim/schemes" / f).read_text())
        (root / "sim/collectives/ring.cpp").write_text((here / "sim/collectives/ring.cpp").read_text())
        for f in ("commands.cpp", "run_cmd.cpp"):
            (root / "sim/app" / f).write_text((here / "sim/app" / f).read_text())
        (root / "models/learn/predictors").mkdir()
        for f in ("arrses.cpp", "none.cpp", "dc.cpp"):
            (root / "models/learn/predictors" / f).write_text(
                (here / "models/learn/predictors" / f).read_text())
        ok = root / "sim/app/ok.cpp"
        ok.write_text('if (mode == "auto") return;\n')
        if check(root) != 0:
            print("selftest: a clean tree was refused")
            return 1
        (root / "sim/app/bad.cpp").write_text('if (s.scheme.type == "ssp") lag = 2;\n')
        if check(root) == 0:
            print("selftest: the planted comparison was not found")
            return 1
        (root / "sim/app/bad.cpp").unlink()
        (root / "sim/app/bad_format.cpp").write_text('if (t.format == "osu") ranks = 2;\n')
        if check(root) == 0:
            print("selftest: the planted format comparison was not found")
            return 1
        (root / "sim/app/bad_format.cpp").unlink()
        (root / "sim/schemes/bad_predictor.cpp").write_text(
            'if (s.scheme.predictor == "arrses") flops = 8;\n')
        if check(root) == 0:
            print("selftest: the planted predictor comparison was not found")
            return 1
        (root / "sim/schemes/bad_predictor.cpp").write_text(
            'if (s.scheme.predictor == "dc_asgd") flops = 8;\n')
        if check(root) == 0:
            print("selftest: the planted comparison of a predictor alias was not found")
            return 1
        (root / "sim/schemes/bad_predictor.cpp").unlink()
        for name, line in (("fidelity", 'if (config.fidelity == "analytic") start_timer();\n'),
                           ("network model", 'if (c.network_model != "ideal") lat *= 13.01;\n'),
                           ("topology", 'if (gp.topology == "fat_tree") spines = 2;\n'),
                           ("flow symmetry", 'if (s.flow_symmetry != "rotation") return;\n'),
                           ("technology", 'if (l.transport.technology == "tcp") sockets();\n'),
                           ("subcommand", 'if (args[0] == "run") fork_first();\n'),
                           ("subcommand alias", 'if (command != "--version") banner();\n')):
            bad = root / "sim/engine/bad_name.cpp"
            bad.write_text(line)
            if check(root) == 0:
                print(f"selftest: the planted {name} comparison was not found")
                return 1
            bad.unlink()
        if check(root) != 0:
            print("selftest: the clean tree was refused after the plants were removed")
            return 1
    print("selftest: no_name_compare.py finds planted scheme-name, format-name, "
          "predictor-name, fidelity, network-model, topology, flow-symmetry, technology and "
          "subcommand comparisons")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--selftest"]:
        sys.exit(selftest())
    sys.exit(check(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
