"""A sample the library itself dies on (a native abort) is dropped as library-crash and the migration goes
on with the next sample in a fresh worker; the worker is spawned, so torch thread pools that already ran
in the parent cannot hang it."""
import pytest
import torch

from nnfuzz.migrate.isolate import EntryRunner
from nnfuzz.verdict import DEFAULT_TOLERANCES


@pytest.mark.slow
def test_a_sample_the_library_dies_on_is_dropped_and_the_rest_migrate():
    torch.nn.functional.conv2d(torch.ones(1, 4, 64, 64), torch.ones(8, 4, 3, 3))  # thread pools busy here first
    knobs = {"dtypes": ["float32"], "max_per_op": 5, "opset": 17}
    with EntryRunner(knobs, DEFAULT_TOLERANCES, resolver="crashy_entry:resolve") as runner:
        events = list(runner.events("dies"))
        again = list(runner.events("dies"))   # a fresh worker after the death serves the next entry
    assert [(e[0], e[1]) for e in events] == [("test", "dies[float32]#0"), ("drop", "dies[float32]#1"),
                                              ("test", "dies[float32]#2")]
    assert events[1][2] == "library-crash"
    assert [list(t.inputs.values())[0].shape for _, _, t in (events[0], events[2])] == [(3,), (4,)]
    assert [(e[0], e[1]) for e in again] == [(e[0], e[1]) for e in events]
