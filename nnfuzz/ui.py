"""Progress display: a rich progress bar on a terminal, plain lines otherwise (or with ui=plain)."""
from __future__ import annotations

import sys
import time

from nnfuzz.errors import ConfigError

UI_CHOICES = ("auto", "rich", "plain")


def use_rich(ui: str) -> bool:
    if ui not in UI_CHOICES:
        raise ConfigError(f"ui={ui!r}; valid choices: {list(UI_CHOICES)}")
    return ui == "rich" or (ui == "auto" and sys.stderr.isatty())


class Progress:
    """``with Progress(total, "generating", ui) as p: p.advance(note)``"""

    def __init__(self, total: int, label: str, ui: str = "auto"):
        self.total, self.label, self.rich = total, label, use_rich(ui)
        self.done, self.t0, self._last = 0, time.monotonic(), 0.0

    def __enter__(self):
        if self.rich:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as RP, TextColumn, TimeElapsedColumn

            self._p = RP(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                         TimeElapsedColumn(), TextColumn("{task.fields[note]}"), transient=False,
                         console=Console(stderr=True))  # stdout is for the result
            self._p.__enter__()
            self._task = self._p.add_task(self.label, total=self.total, note="")
        return self

    def advance(self, note: str = "") -> None:
        self.done += 1
        if self.rich:
            self._p.update(self._task, advance=1, note=note)
        elif time.monotonic() - self._last > 2.0 or self.done == self.total:
            self._last = time.monotonic()
            print(f"[{self.label}] {self.done}/{self.total} {note}", file=sys.stderr, flush=True)

    def log(self, msg: str) -> None:
        if self.rich:
            self._p.console.print(msg)
        else:
            print(msg, file=sys.stderr, flush=True)

    def __exit__(self, *exc):
        if self.rich:
            self._p.__exit__(*exc)
        return False
