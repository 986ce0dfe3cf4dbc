"""Reduction in the background of a campaign (``fuzz.reduce=true``): a thread with a sandbox of its own
shrinks each new unique bug (triage/bug_reduction.py, as ``nnfuzz reduce`` does) while the campaign goes on testing.

The thread takes bugs in the order they were saved, gives each ``min(reduce_s, time left)`` seconds, and
stops at the campaign's time bound or when the campaign is stopped (its sandboxes share the campaign's
StopRequest, so a run in progress ends at once); bugs it did not reach stay as saved (``nnfuzz reduce``
later). The reducer rewrites a folder by swapping it with its reduced copy; the swap holds the store's
lock, so a bug saved meanwhile never takes the folder's number, and it runs no model, so a stop never
cuts it in half.
"""
from __future__ import annotations

import queue
import threading
import time
from pathlib import Path
from typing import Callable, Optional


class BackgroundReducer:
    def __init__(self, make_sandbox: Callable, tolerances: dict, budget_s: float,
                 deadline: float, lock: threading.Lock, note: Callable[[str], None], add_seconds: Callable):
        self.make_sandbox, self.tol, self.budget_s = make_sandbox, tolerances, budget_s
        self.deadline, self.lock, self.note, self.add_seconds = deadline, lock, note, add_seconds
        self.results = []                     # one summary dict per bug it finished
        self.error: Optional[BaseException] = None
        self._q: "queue.Queue[Optional[Path]]" = queue.Queue()
        self._thread = threading.Thread(target=self._main, name="nnfuzz-reducer", daemon=True)
        self._thread.start()

    def submit(self, path: Path) -> None:
        self._q.put(Path(path))

    def close(self) -> None:
        """Stop after the current bug (bounded by its budget and the campaign's time bound)."""
        self._q.put(None)
        self._thread.join(max(0.0, self.deadline - time.monotonic()) + 10.0)
        if self.error is not None:  # a bug in nnfuzz: shown by the campaign, not lost in a thread
            raise self.error

    def _main(self) -> None:
        from nnfuzz.errors import InternalError, NNFuzzError
        from nnfuzz.fuzz.stopping import Stopped
        from nnfuzz.triage.bugstore import load_bug
        from nnfuzz.triage.bug_reduction import expected_side, reduce_bug

        sandboxes = {}  # (system, options) -> Sandbox: a bug of the oracle's expected side runs on that system
        try:
            while True:
                path = self._q.get()
                left = self.deadline - time.monotonic()
                if path is None or left <= 0:
                    return
                t0 = time.perf_counter()
                try:
                    bug = load_bug(path)
                    other = expected_side(bug) if bug.meta.grad is not None else None  # TF eager for xla-cpu's
                    runs = [sandbox_for(sandboxes, self.make_sandbox, *where)
                            for where in [(bug.meta.system, bug.meta.backend_options)] + ([other] if other else [])]
                    out = reduce_bug(bug, runs[0], self.tol, min(self.budget_s, left), lock=self.lock,
                                     expected=runs[1] if other else None)
                except InternalError:  # a bug in nnfuzz: to the campaign, via self.error
                    raise
                except NNFuzzError as e:  # this bug cannot be reduced here (its folder, its system): recorded
                    if time.monotonic() >= self.deadline:  # the campaign ended and took its workers: the bug
                        return                             # stays as saved, as after a stop
                    out = {"bug": str(path), "status": "not-reduced", "note": f"{type(e).__name__}: {e}"}
                self.add_seconds(time.perf_counter() - t0)
                self.results.append(out)
                self.note(f"reduce {path.name}: {out.get('status')} "
                          + (f"{out['nodes_before']} -> {out['nodes_after']} nodes" if "nodes_after" in out
                             else out.get("note", "")))
        except Stopped:  # the campaign is stopping: the bug in hand stays as saved (never half-swapped)
            pass
        except BaseException as e:  # noqa: BLE001 - handed to the campaign thread by close()
            self.error = e
        finally:
            for sandbox in sandboxes.values():
                sandbox.close()


def sandbox_for(sandboxes: dict, make_sandbox: Callable, system: str, options: dict):
    """The started sandbox of ``system`` with ``options`` in ``sandboxes`` ((system, options) -> Sandbox), made
    on first use."""
    key = (system, repr(sorted(options.items())))
    if key not in sandboxes:
        sandboxes[key] = make_sandbox(system, options)
        sandboxes[key].start()
    return sandboxes[key]
