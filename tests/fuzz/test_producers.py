"""The producer processes (fuzz/producers.py): one spawned and warmed up, the others forked from it
once the campaign says go; together they make each seed's model once, and close ends all of them."""
import os
import time
from pathlib import Path

import pytest

from nnfuzz.fuzz.campaign import CampaignConfig
from nnfuzz.fuzz.plan import CampaignPlan
from nnfuzz.fuzz.producers import Producers
from nnfuzz.generate.opset import select_ops
from nnfuzz.generate.policy import GenPolicy
from tests.fuzz.procs import alive, descendants


def _config(tmp_path: Path, seed: int) -> CampaignConfig:
    return CampaignConfig(backend="ort-cpu", backend_options={}, policy=GenPolicy(max_nodes=4, seed=seed),
                          time_s=120.0, out=tmp_path, ui="plain", log=None, producers=3, search=None)


@pytest.mark.slow
def test_forked_producers_make_each_seed_once_and_close_ends_them(tmp_path):
    cc = _config(tmp_path, 100)
    plan = CampaignPlan(tuple(select_ops(cc.policy, dialects=("tf",))), {}, cc.export, cc.search, True, ())
    producers = Producers(cc, 3)
    try:
        producers.go(cc, plan, 120.0)
        got = []
        # until each residue has shown up: on a loaded machine one forked producer can start a few seconds
        # after the others, and the first dozen models all came from two of them on CI once
        while len(got) < 12 or {s % 3 for s in got} != {0, 1, 2}:
            p = producers.get(timeout=60.0)
            assert p is not None, f"no model within 60s (got seeds {got})"
            assert p.error is None or p.error[0] == "no-graph", p.error
            got.append(p.seed)
            assert len(got) < 300, f"a producer made nothing in 300 models: {sorted(got)}"
        first = producers.proc.pid
        procs = {first: descendants(os.getpid())[first], **descendants(first)}
        assert len(procs) == 3  # the first producer and the two it forked, each with its residue of seeds
    finally:
        producers.close()
    assert len(set(got)) == len(got), got
    assert min(got) >= 100
    end = time.monotonic() + 10
    while alive(procs) and time.monotonic() < end:
        time.sleep(0.1)
    assert not alive(procs), f"producer processes left running: {alive(procs)}"


@pytest.mark.slow
def test_producers_closed_before_go_exit(tmp_path):
    producers = Producers(_config(tmp_path, 7), 2)
    assert producers.proc.pid in descendants(os.getpid())
    producers.close()
    assert not producers.proc.is_alive()
