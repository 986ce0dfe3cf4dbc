"""An OpInfo-like entry whose op kills the process on one sample (as a kernel's SIGFPE would), found by
name by the migration worker (nnfuzz/migrate/isolate.py: resolver "crashy_entry:resolve")."""
import os
import types

import torch


def _dies_on_two_elements(x):
    if x.numel() == 2:
        os.abort()
    return torch.abs(x)


def _samples(info, device, dtype, requires_grad):
    from torch.testing._internal.opinfo.core import SampleInput

    for n in (3, 2, 4):
        yield SampleInput(torch.arange(n, dtype=dtype) - 1)


def resolve(name):
    assert name == "dies", name
    return types.SimpleNamespace(name="dies", variant_test_name="", op=_dies_on_two_elements,
                                 supported_dtypes=lambda device: {torch.float32}, sample_inputs_func=_samples)
