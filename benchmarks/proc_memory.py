"""Memory of a process tree, sampled from /proc while a benchmark runs: the peak over time of the
summed resident memory (RSS) of this process and every process below it (producers, sandbox workers
in their own sessions), and of the summed proportional set size (PSS: pages shared between processes,
such as a forked producer's, split among them), which is what the tree really takes."""
from __future__ import annotations

import os
import threading
from typing import Dict, List


def _children() -> Dict[int, List[int]]:
    kids: Dict[int, List[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):  # exited meanwhile
                continue
            kids.setdefault(ppid, []).append(int(name))
    return kids


def tree(pid: int) -> List[int]:
    kids, found, todo = _children(), [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(kids.get(p, []))
    return found


def _field_kb(path: str, key: str) -> int:
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class PeakMemory:
    """``with PeakMemory(root=pid) as m: ...`` (root: this process by default); then ``m.rss_mb``, ``m.pss_mb`` (peaks of the sums, MiB) and
    ``m.processes`` (the most processes seen at once)."""

    def __init__(self, root: int | None = None, every_s: float = 0.1, pss_every: int = 5):
        self.root = os.getpid() if root is None else root
        self.every_s, self.pss_every = every_s, pss_every
        self.rss_mb = self.pss_mb = 0.0
        self.processes = 0
        self._stop = threading.Event()

    def _sample(self, k: int) -> None:
        pids = tree(self.root)
        self.processes = max(self.processes, len(pids))
        self.rss_mb = max(self.rss_mb, sum(_field_kb(f"/proc/{p}/status", "VmRSS:") for p in pids) / 1024)
        if k % self.pss_every == 0:
            self.pss_mb = max(self.pss_mb, sum(_field_kb(f"/proc/{p}/smaps_rollup", "Pss:") for p in pids) / 1024)

    def _run(self) -> None:
        k = 0
        while not self._stop.wait(self.every_s):
            self._sample(k)
            k += 1

    def __enter__(self) -> "PeakMemory":
        self._thread = threading.Thread(target=self._run, name="peak-memory", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
