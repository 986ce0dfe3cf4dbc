"""The same settings migrate the same values: OpInfo samples are seeded per sample, and the order of a
corpus is a function of its folders and the seed."""
import json

import numpy as np
import pytest

from nnfuzz.migrate import torch_opinfo
from nnfuzz.verdict import DEFAULT_TOLERANCES


def _migrated(info):
    return [torch_opinfo.migrate_sample(info, dt, k, s, 17, DEFAULT_TOLERANCES)
            for dt, k, s in torch_opinfo.samples(info, ["float32"], 2)]


def test_opinfo_samples_are_the_same_on_every_run():
    info, = torch_opinfo.entries(["nn.functional.conv2d"])
    a, b = _migrated(info), _migrated(info)
    assert [t.test for t in a] == [t.test for t in b] == ["nn.functional.conv2d[float32]#0",
                                                          "nn.functional.conv2d[float32]#1"]
    for x, y in zip(a, b):
        assert x.model_bytes == y.model_bytes
        assert all(np.array_equal(x.inputs[n], y.inputs[n]) for n in x.inputs)
        assert all(np.array_equal(x.outputs[n], y.outputs[n]) for n in x.outputs)


@pytest.mark.slow
def test_reordering_a_corpus_with_its_seed_gives_the_written_order(corpus):
    from nnfuzz.commands.migrate import _prioritize

    before = json.loads((corpus / "priority.json").read_text())
    assert _prioritize(corpus, before["seed"]) == len(before["tests"])
    assert json.loads((corpus / "priority.json").read_text()) == before
