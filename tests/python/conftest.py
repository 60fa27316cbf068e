"""The sgdsim module under test: the build tree's (ctest passes SGDSIM_PYTHONPATH=<build>/python)
unless an installed one is already importable; tests run from the source tree's root."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if os.environ.get("SGDSIM_PYTHONPATH"):
    sys.path.insert(0, os.environ["SGDSIM_PYTHONPATH"])


@pytest.fixture
def example():
    """The path of an example scenario of experiments/examples."""
    return lambda name: os.path.join(ROOT, "experiments", "examples", name)
