"""Small migrated corpora, generated once per session from the installed onnx and torch (no downloads):
a few operators per source, written by the real `nnfuzz migrate` command."""
import json
from pathlib import Path

import pytest

from nnfuzz.cli import main

# operators chosen so that every drop reason of each source that the installed packages produce appears:
# Add has uint16/32/64 cases (uint32/64 outside nnfuzz's dtypes; uint16 is one of them, for quantized tensors),
# Identity sequence and optional cases, Bernoulli
# random ones the reference evaluator cannot reproduce; ReduceMax an empty-set case whose output is -inf
ONNX_OPS = ["Abs", "Add", "Relu", "Softmax", "Identity", "Bernoulli", "ReduceMax"]
# item returns a Python number; abs, cat, sum and conv2d export; normal is random
TORCH_OPS = ["abs", "cat", "sum", "nn.functional.conv2d", "item", "normal"]


def _migrate(out, *args):
    assert main(["migrate", f"out={out}", "ui=plain", *args]) == 0
    return out


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    """One output folder holding both sources (the priority order covers both)."""
    out = tmp_path_factory.mktemp("migrated")
    _migrate(out, "source=onnx-node", f"migrate.ops=[{','.join(ONNX_OPS)}]")
    _migrate(out, "source=torch-opinfo", f"migrate.ops=[{','.join(TORCH_OPS)}]", "migrate.max_per_op=2")
    return out


@pytest.fixture(scope="session")
def summary(corpus):
    return json.loads((corpus / "summary.json").read_text())


def pytest_collection_modifyitems(items):
    """A test that uses the migrated corpus is slow: making it runs `nnfuzz migrate`, whose OpInfo samples
    run in a spawned worker process (nnfuzz/migrate/isolate.py)."""
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents and "corpus" in getattr(item, "fixturenames", ()) \
                and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)
