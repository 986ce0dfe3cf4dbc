"""nnfuzz bounds oneDNN's primitive cache in its own processes (nnfuzz/native_memory.py). A real torch in a fresh process, with oneDNN's verbose log
saying whether each Gelu primitive came from the cache."""
import os
import subprocess
import sys

import pytest

from nnfuzz.native_memory import ONEDNN_CACHE_CAPACITY, ONEDNN_CACHE_ENV

# Gelu of shape [5, 7], of ONEDNN_CACHE_CAPACITY + 8 other shapes, of [5, 7] again: each creation's
# cache_hit / cache_miss, one per line
GELUS = f"""
from nnfuzz.native_memory import bound_native_caches
bound_native_caches()
import torch
torch.set_num_threads(1)
shapes = [(5, 7), (5, 7)] + [(6 + k, 3) for k in range({ONEDNN_CACHE_CAPACITY} + 8)] + [(5, 7)]
for s in shapes:
    torch.nn.functional.gelu(torch.randn(*s))
"""


def _creations(env) -> list:
    r = subprocess.run([sys.executable, "-c", GELUS], env={**env, "ONEDNN_VERBOSE": "2"}, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return [ln.split("create:")[1].split(",")[0] for ln in r.stdout.splitlines() if "create:cache_" in ln
            and ",eltwise," in ln]


@pytest.mark.slow
def test_a_primitive_past_the_bound_is_evicted_and_a_user_setting_is_kept():
    env = {k: v for k, v in os.environ.items() if k != ONEDNN_CACHE_ENV}
    made = _creations(env)
    assert len(made) == ONEDNN_CACHE_CAPACITY + 11, made[:5]
    # the repeat is served from the cache; after more shapes than the bound, [5, 7] was evicted
    assert made[:2] == ["cache_miss", "cache_hit"] and made[-1] == "cache_miss", (made[:2], made[-1])
    kept = _creations({**env, ONEDNN_CACHE_ENV: "1024"})  # the user's own bound (oneDNN's default)
    assert kept[-1] == "cache_hit"

