"""A sample the library itself dies on (a native abort) is dropped as library-crash and the migration goes
on with the next sample in a fresh child process."""
import os
import types

import torch
from torch.testing._internal.opinfo.core import SampleInput

from nnfuzz.migrate.isolate import entry_events
from nnfuzz.verdict import DEFAULT_TOLERANCES


def _dies_on_two_elements(x):
    if x.numel() == 2:
        os.abort()  # what a kernel's SIGFPE or assertion does to the process
    return torch.abs(x)


def _fake_entry():
    def sample_inputs_func(info, device, dtype, requires_grad):
        for n in (3, 2, 4):
            yield SampleInput(torch.arange(n, dtype=dtype) - 1)

    return types.SimpleNamespace(name="dies", variant_test_name="", op=_dies_on_two_elements,
                                 supported_dtypes=lambda device: {torch.float32},
                                 sample_inputs_func=sample_inputs_func)


def test_a_sample_the_library_dies_on_is_dropped_and_the_rest_migrate():
    knobs = {"dtypes": ["float32"], "max_per_op": 5, "opset": 17}
    events = list(entry_events(_fake_entry(), knobs, DEFAULT_TOLERANCES))
    assert [(e[0], e[1]) for e in events] == [("test", "dies[float32]#0"), ("drop", "dies[float32]#1"),
                                              ("test", "dies[float32]#2")]
    assert events[1][2] == "library-crash"
    assert [list(t.inputs.values())[0].shape for _, _, t in (events[0], events[2])] == [(3,), (4,)]
