"""What a test needs of its campaign, and no more: the clock (the time bound, each run's timeout, the
patience of a lane confirming a timeout) and the run context (the systems' BackendInfos, the expected
side, the tolerances, where seconds and notes go). The oracles (nnfuzz/oracles/) and saving take these,
never the campaign."""
from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from typing import TYPE_CHECKING, Callable, Dict, Optional

if TYPE_CHECKING:
    from nnfuzz.fuzz.campaign import CampaignConfig

SLOW_PATIENCE = 3.0  # a timeout is confirmed with this many times fuzz.test_timeout
JUDGING_RUNS = 2     # a bug in hand may be judged this many full timeouts past the time bound (``judging``)


class Clock:
    """The campaign's hard time bound and the timeout of one sandbox run within it."""

    def __init__(self, time_s: float, test_timeout: float):
        self.deadline = time.monotonic() + time_s
        self.test_timeout = test_timeout
        # per thread: a lane confirming a timeout waits longer (``patience``: its scale), and one judging a bug
        # may run past the bound (``judging``: its grace)
        self._patience = threading.local()

    def left(self) -> float:
        """Seconds to the time bound (to its grace, in a thread ``judging`` a bug)."""
        return self.deadline + getattr(self._patience, "grace", 0.0) - time.monotonic()

    def run_timeout(self) -> float:
        """The timeout of one sandbox run: ``full_timeout``, cut to the campaign's time left."""
        return max(0.05, min(self.full_timeout(), self.left()))

    def full_timeout(self) -> float:
        """fuzz.test_timeout, times SLOW_PATIENCE while this thread confirms a timeout (``patience``)."""
        return self.test_timeout * getattr(self._patience, "scale", 1.0)

    @contextlib.contextmanager
    def patience(self, scale: float = SLOW_PATIENCE):
        """This thread's runs inside get ``scale`` times the timeout (times any patience around it: a
        dynamic test's k shapes, confirmed as a timeout)."""
        outer = getattr(self._patience, "scale", 1.0)
        self._patience.scale = outer * scale
        try:
            yield
        finally:
            self._patience.scale = outer

    @contextlib.contextmanager
    def judging(self):
        """This thread judges a bug in hand (is an inconsistency noise, which node is at fault, where a
        crash starts): its runs may go JUDGING_RUNS full timeouts past the time bound, so that a bug found
        in the last second is judged as one found in the first, never saved unjudged. A stop signal
        still ends them at once (fuzz/stopping.py)."""
        outer = getattr(self._patience, "grace", 0.0)
        self._patience.grace = max(outer, JUDGING_RUNS * self.full_timeout())
        try:
            yield
        finally:
            self._patience.grace = outer


@dataclasses.dataclass(frozen=True)
class RunContext:
    """The systems a campaign tests and compares with, and where a test's seconds and notes go."""

    cfg: "CampaignConfig"                  # the user's config (read only)
    clock: Clock
    info: object                           # the system under test's BackendInfo
    tolerances: Dict[str, tuple]           # (rtol, atol) per dtype
    add_seconds: Callable[[str, float], None]
    note: Callable[[str], None]            # a line for the status display
    expected_system: Optional[str] = None  # the expected side's backend, when another system runs it
    expected_options: Dict = dataclasses.field(default_factory=dict)
    expected_info: object = None           # its BackendInfo

    def left(self) -> float:
        return self.clock.left()

    def run_timeout(self) -> float:
        return self.clock.run_timeout()

    def full_timeout(self) -> float:
        return self.clock.full_timeout()

    def under_test(self) -> Dict:
        """meta.json's ``oracle.under_test``: the system under test, its version and options."""
        return {"system": self.cfg.backend, "version": self.info.version, "version_id": self.info.version_id,
                "options": self.cfg.backend_options}


def tolerances_of(cfg: "CampaignConfig") -> Dict[str, tuple]:
    """(rtol, atol) per dtype: the configured ones, else the verdict's defaults."""
    from nnfuzz.verdict import DEFAULT_TOLERANCES

    return {k: tuple(v) for k, v in cfg.tolerances.items()} or dict(DEFAULT_TOLERANCES)


def run_bytes(ctx: RunContext, sandbox, model_bytes: bytes, inputs):
    """Run a model's bytes on ``sandbox`` within the campaign's timeout; None when the campaign's own
    time bound cut it short (not tested, not a timeout). Its seconds go to the campaign's phases."""
    timeout = ctx.run_timeout()
    res = sandbox.run(model_bytes, inputs, timeout=timeout)
    if res.status == "timeout" and timeout < ctx.full_timeout():
        return None
    for k, v in res.seconds.items():
        ctx.add_seconds(k, v)
    return res


def run_on(ctx: RunContext, sandbox, p):
    """Run produced model ``p`` on ``sandbox``; None when the campaign's own time bound cut it short."""
    return run_bytes(ctx, sandbox, p.payload(sandbox.format_for(p)), p.reference.input)


def timed_twins(ctx: RunContext, p):
    """``p.twins()`` (the float64 twins), its seconds counted as export time."""
    t0 = time.perf_counter()
    try:
        return p.twins()
    finally:
        ctx.add_seconds("export", time.perf_counter() - t0)
