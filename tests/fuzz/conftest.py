"""Fixtures shared by the campaign-level tests."""
import pytest
from exported_ops import ExportedLogSigmoid

from nnfuzz.abstract import OP_REGISTRY


@pytest.fixture
def registered():
    OP_REGISTRY["ExportedLogSigmoid"] = ExportedLogSigmoid  # gir.json names it: reduce reloads the graph
    yield
    OP_REGISTRY.pop("ExportedLogSigmoid", None)
