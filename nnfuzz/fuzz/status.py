"""Campaign status: counters per phase and verdict, and a rich live panel or plain log lines. (The
JSON-lines campaign log is fuzz/runlog.py.)"""
from __future__ import annotations

import collections
import sys
import time
from dataclasses import dataclass, field
from typing import Optional

from nnfuzz.ui import use_rich

WAITING = "waiting for a model"  # a lane's state (fuzz/pool.py) while it waits for its next model

PANEL_HZ = 4  # rich panel rebuilds per second at most
VERDICTS = ("pass", "unsupported", "crash", "inconsistency", "timeout")
STARVED = 0.5     # workers waiting for a model more than this share of the time: generation is the bottleneck
SETTLE_S = 10.0   # no bottleneck is named in the first seconds (producers warm up)
WINDOW_S = 60.0   # the share waiting is a moving average over about this many seconds
SAMPLE_S = 1.0    # how often the lanes' waiting time is read


@dataclass
class Counters:
    started: float = field(default_factory=time.monotonic)
    tests: int = 0
    verdicts: collections.Counter = field(default_factory=collections.Counter)
    formats: collections.Counter = field(default_factory=collections.Counter)  # tests per model format sent
    bugs_saved: int = 0
    unique_bugs: int = 0       # distinct signatures in the bug store (triage/dedup.py), earlier campaigns included
    new_unique: int = 0        # bugs of this campaign whose signature was new
    # known bugs (triage/known.py) apart from the rest: distinct signatures met, bugs found, folders saved
    new_root_causes: int = 0   # signatures met that are not known (new, or saved by an earlier campaign here)
    new_hits: int = 0
    new_folders: int = 0
    known_root_causes: int = 0  # signatures met that are known (a kept folder's, a known-bugs file entry's)
    known_hits: int = 0
    known_folders: int = 0
    counted: int = 0           # bugs counted, not saved: their signature had fuzz.keep_per_signature examples
    replaced: int = 0          # bugs saved over a larger example of their signature
    flaky: int = 0
    slow: int = 0              # timeouts that ran to the end given SLOW_PATIENCE x the time: not hangs, not bugs
    noise: int = 0             # disagreements in which every node is within its accuracy budget: not bugs
    checked: int = 0           # passes checked node by node: further from the reference than rounding explains
    reduced: int = 0           # bugs the background reducer shrank (fuzz.reduce)
    gen_failed: int = 0        # no graph within bounds (ConstraintError): not a bug
    undefined_values: int = 0  # models whose values break an op's domain (an integer division by zero): not run
    nnfuzz_errors: int = 0     # export/materialization errors: bugs in nnfuzz or torch, shown
    quantized: int = 0         # tests of QDQ graphs (mgen.quantized, generate/qdq.py)
    no_rewrite: int = 0        # oracle=metamorphic: models no drawn rewrite applied to (too small): not run
    no_gradient: int = 0       # oracle=grad: models with no differentiable path (or a non-finite eager gradient): not run
    invalid: collections.Counter = field(default_factory=collections.Counter)  # mgen.invalid: "rule: outcome" -> tests
    seconds: collections.Counter = field(default_factory=collections.Counter)  # per phase
    new_bugs: list = field(default_factory=list)  # this campaign's new root causes saved: folder + triage/brief.py's brief
    last_bug: str = ""
    last_error: str = ""
    stopped: Optional[str] = None   # the signal that stopped the campaign (SIGINT, SIGTERM, SIGHUP), if one did
    guide: str = ""            # coverage guidance's one-line summary (fuzz/guidestate.py), if on
    first_test: Optional[float] = None  # seconds from the start to the first test's end (producers' warm-up, probe)
    workers: int = 0           # sandboxes that tested at once (fuzz.workers, resolved)
    lost: int = 0              # tests lost with the process that ran them (a Ray actor or its node died)
    dynamic: int = 0           # fuzz.dynamic: tests of a dynamic model (compiled once, run at each shape)
    dynamic_runs: int = 0      # the shapes they ran
    dynamic_compiles: int = 0  # the compiles they took (torch.compile's recompilations included)
    not_dynamic: int = 0       # oracle=static: models that could not be made dynamic: not run
    producer_restarts: int = 0  # producer processes that died (a native crash) and were started again (fuzz/producer_watch.py)
    producer_recycles: int = 0  # times fresh producers replaced the running ones (fuzz.producer_models; not deaths)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def rate(self) -> float:
        return self.tests / max(self.elapsed, 1e-9)

    def runs_per_compile(self) -> float:
        """Shapes tested per compile, over every test (a static test: one run, one compile)."""
        static = self.tests - self.dynamic
        return (static + self.dynamic_runs) / max(static + self.dynamic_compiles, 1)


class Status:
    """Shows counters while a campaign runs: ``with Status(c, deadline, ui, title) as s: s.refresh()``."""

    def __init__(self, counters: Counters, deadline: float, ui: str, title: str, lanes=(),
                 producers: Optional[int] = None):
        """``lanes``: the campaign's fuzz/pool.py Lanes, shown one row each when there are several;
        ``producers``: fuzz.producers (0: each worker makes its own models), named in the bottleneck hint."""
        self.c, self.deadline, self.title, self.lanes = counters, deadline, title, list(lanes)
        self.producers = producers
        self.rich = use_rich(ui)
        self._last_plain = 0.0
        self._last_panel = 0.0
        self._waiting = (0.0, 0.0)  # (moving average of the lanes' share of time waiting for a model, seconds seen)
        self._last_sample = None    # (time, the lanes' seconds waited) at the last reading

    def __enter__(self):
        if self.rich:
            from rich.console import Console
            from rich.live import Live

            # on stderr, where use_rich looked for a terminal: stdout is for the result
            self._live = Live(self._panel(), refresh_per_second=PANEL_HZ, transient=False,
                              console=Console(stderr=True))
            self._live.__enter__()
        return self

    def __exit__(self, *exc):
        if self.rich:
            self._live.update(self._panel())
            self._live.__exit__(*exc)
        else:
            self._plain(force=True)
        return False

    def refresh(self) -> None:
        """Called after every test: the panel is rebuilt at most ``PANEL_HZ`` times a second (the live
        display redraws at that rate anyway), plain lines every 5 s."""
        now = time.monotonic()
        if self.lanes and self.c.elapsed > SETTLE_S:
            self.sample(now)
        if self.rich:
            if now - self._last_panel >= 1.0 / PANEL_HZ:
                self._last_panel = now
                self._live.update(self._panel())
        else:
            self._plain()

    def sample(self, now: float) -> None:
        """Read how long the lanes waited for models since the last reading (``Lane.waited``, seconds)."""
        waited = sum(lane.waited for lane in self.lanes)
        if self._last_sample is None:
            self._last_sample = (now, waited)
            return
        t, w = self._last_sample
        if now - t < SAMPLE_S:
            return
        share = min(1.0, (waited - w) / ((now - t) * len(self.lanes)))
        avg, seen = self._waiting
        self._waiting = (share if not seen else avg + (share - avg) * min(1.0, (now - t) / WINDOW_S), seen + now - t)
        self._last_sample = (now, waited)

    def bottleneck(self) -> str:
        """A hint when one stage starves another: the workers wait for models most of the time."""
        avg, seen = self._waiting
        if seen < 4 * SAMPLE_S or avg <= STARVED:
            return ""
        share = f"workers wait for models {100 * avg:.0f}% of the time"
        if self.producers:
            return f"{share}: raise fuzz.producers (now {self.producers}) if cores are free"
        return f"{share}: each makes its own (fuzz.producers=0); fuzz.producers=N makes them in N other processes"

    def note(self, msg: str) -> None:
        if self.rich:
            self._live.console.print(msg)
        else:
            print(msg, file=sys.stderr, flush=True)

    def line(self) -> str:
        c = self.c
        v = " ".join(f"{k}={c.verdicts.get(k, 0)}" for k in VERDICTS)
        hint = self.bottleneck()
        return (f"[{self.title}] {c.elapsed:6.0f}s elapsed, {max(0, self.deadline - time.monotonic()):6.0f}s left | "
                f"tests {c.tests} ({c.rate():.1f}/s) | {v} | {bugs_line(c)}"
                + (f" | nnfuzz errors {c.nnfuzz_errors}" if c.nnfuzz_errors else "")
                + (f" | {len(self.lanes)} workers" if len(self.lanes) > 1 else "")
                + (f" | lost {c.lost}" if c.lost else "")
                + (f" | producer restarts {c.producer_restarts}" if c.producer_restarts else "")
                + (f" | {hint}" if hint else ""))

    def _plain(self, force: bool = False) -> None:
        if force or time.monotonic() - self._last_plain > 5.0:
            self._last_plain = time.monotonic()
            print(self.line(), file=sys.stderr, flush=True)

    def _panel(self):
        from rich.panel import Panel
        from rich.table import Table

        c = self.c
        t = Table.grid(padding=(0, 2))
        t.add_column(style="bold")
        t.add_column()
        left = max(0.0, self.deadline - time.monotonic())
        t.add_row("time", f"{_hms(c.elapsed)} elapsed, {_hms(left)} left")
        t.add_row("tests", f"{c.tests}  ({c.rate():.2f}/s)")
        t.add_row("verdicts", "  ".join(f"{k} {c.verdicts.get(k, 0)}" for k in VERDICTS))
        if c.verdicts.get("unsupported"):
            t.add_row("", "unsupported: an op or dtype the system says it lacks (skipped; not bugs)")
        t.add_row("bugs", bugs_line(c).removeprefix("bugs: ") + (f" ({c.flaky} flaky)" if c.flaky else "")
                  + f"; {c.unique_bugs} distinct in the store")
        if c.gen_failed or c.nnfuzz_errors or c.undefined_values:
            t.add_row("skipped", f"no graph {c.gen_failed}, undefined values {c.undefined_values}, "
                                 f"nnfuzz errors {c.nnfuzz_errors}")
        if c.lost:
            t.add_row("lost", f"{c.lost} tests in flight when their worker's process or node died")
        if c.producer_restarts:
            t.add_row("producers", f"{c.producer_restarts} restarted after dying (seeds held: campaign.jsonl producer_died)")
        if c.producer_recycles:
            t.add_row("producers replaced", f"{c.producer_recycles} times by fresh ones (fuzz.producer_growth, producer_models)")
        if len(self.lanes) > 1:
            for lane in self.lanes:
                t.add_row(f"worker {lane.name}", lane.describe())
        total = sum(c.seconds.values()) or 1.0
        t.add_row("time per stage", "  ".join(f"{k} {100 * v / total:.0f}%" for k, v in c.seconds.most_common())
                  + "  (shares of the seconds all processes spent)")
        hint = self.bottleneck()
        if hint:
            t.add_row("bottleneck", hint)
        if c.guide:
            t.add_row("coverage", c.guide)
        if c.last_bug:
            t.add_row("last bug", c.last_bug)
        if c.last_error:
            t.add_row("last error", c.last_error[:120])
        return Panel(t, title=self.title)


def bugs_line(c: Counters) -> str:
    """New and known root causes apart: "bugs: 2 new root causes (3 folders), 5 known (1234 hits, 6 folders)"."""
    line = (f"bugs: {c.new_root_causes} new root cause{'' if c.new_root_causes == 1 else 's'} ({c.new_folders} "
            f"folder{'' if c.new_folders == 1 else 's'}"
            + (f", {c.new_hits} hits" if c.new_hits != c.new_folders else "") + f"), {c.known_root_causes} known "
            f"({c.known_hits} hit{'' if c.known_hits == 1 else 's'}, {c.known_folders} folder{'' if c.known_folders == 1 else 's'})")
    return line + (f", {c.replaced} smaller examples saved over larger ones" if c.replaced else "")


def _hms(s: float) -> str:
    s = int(s)
    return f"{s // 3600:d}:{s % 3600 // 60:02d}:{s % 60:02d}"
