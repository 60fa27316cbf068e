"""Shared fixtures of the analysis tests: the scripts' folder on sys.path and the fixture
result files (real sgdsim outputs, trimmed; regenerate with fixtures/make_fixtures.sh)."""
import json
import os
import sys

import pytest

ANALYSIS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ANALYSIS, "tests", "fixtures")
sys.path.insert(0, ANALYSIS)


def fixture(*parts):
    return os.path.join(FIXTURES, *parts)


def read_summary(*parts):
    with open(fixture(*parts, "summary.json")) as f:
        return json.load(f)


def read_sweep():
    with open(fixture("sweep", "results.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def assert_png(path):
    """A real, non-trivial PNG (an empty axes alone is already ~10 KB at 150 dpi)."""
    assert os.path.exists(path), path
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert os.path.getsize(path) > 5000
    assert not os.path.exists(path + ".tmp.png")


@pytest.fixture
def out(tmp_path):
    return str(tmp_path / "figure.png")
