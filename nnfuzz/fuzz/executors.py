"""Where a campaign's sandboxes and producers run (``fuzz.executor``): ``local`` (processes on this
machine: fuzz/sandbox.py, fuzz/producers.py), ``ray`` (actors on a Ray cluster: fuzz/ray_executor.py)
or ``inprocess`` (the test tier's: backends run in the campaign's own process, fuzz/inprocess.py).
An executor says how many lanes to run and makes their sandboxes; the campaign drives them alike."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nnfuzz.fuzz.campaign import CampaignConfig

EXECUTORS = ("local", "ray", "inprocess")  # fuzz.executor's choices


def make_executor(cc: CampaignConfig, stack):
    """Where the lanes' sandboxes run: here (fuzz/sizing.py decides how many), on Ray, or in this
    process (tests)."""
    if cc.executor == "ray":
        from nnfuzz.fuzz.ray_executor import RayExecutor

        return stack.enter_context(RayExecutor(cc.ray_address))
    if cc.executor == "inprocess":
        from nnfuzz.fuzz.inprocess import InProcessExecutor

        return InProcessExecutor()
    return LocalExecutor()


class LocalExecutor:
    """Sandbox processes on this machine."""

    @staticmethod
    def workers(cc: CampaignConfig) -> int:
        from nnfuzz.backends.registry import backend_class
        from nnfuzz.fuzz.sizing import auto_workers

        if cc.workers != "auto":
            return int(cc.workers)
        cls = backend_class(cc.backend_path or cc.backend)
        return auto_workers(cls.threads, cls.device, cc.memory_limit_mb)

    @staticmethod
    def sandbox(cc: CampaignConfig, name, options, path, stop, env, expected: bool = False):
        from nnfuzz.fuzz.sandbox import Sandbox

        return Sandbox(name, options, test_timeout=cc.test_timeout, memory_limit_mb=cc.memory_limit_mb,
                       backend_path=path, stop=stop, env=env)


def make_producers(cc, executor=None):
    """Producer processes here, or producer actors on the Ray cluster of ``executor``."""
    from nnfuzz.fuzz.ray_executor import RayExecutor

    if isinstance(executor, RayExecutor):
        from nnfuzz.fuzz.ray_executor import RayProducers

        return RayProducers(cc, cc.producers, executor)
    from nnfuzz.fuzz.producers import Producers

    return Producers(cc, cc.producers)
