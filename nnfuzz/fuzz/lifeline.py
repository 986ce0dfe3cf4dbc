"""Child processes of a campaign (sandbox workers, model producers) never outlive it: each watches
its parent and exits when the parent is gone, however the parent ended (SIGKILL included)."""
from __future__ import annotations

import os
import signal
import sys
import threading
import time

WATCH_S = 1.0   # how often the watcher thread looks at the parent pid


def die_with_parent(parent_pid: int, pdeathsig: bool) -> None:
    """Exit when the process ``parent_pid`` (this one's parent) goes away.

    PR_SET_PDEATHSIG (Linux) kills this process the moment its parent dies, even while it is stuck in C
    code; it fires when the *thread* that started this process exits, so ask for it (``pdeathsig``) only
    when the parent started it from its main thread. A daemon thread watching getppid() covers the rest.
    """
    if pdeathsig and sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # no libc prctl: the watcher below still ends this process
            pass
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)

    def watch():
        while True:
            time.sleep(WATCH_S)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="nnfuzz-parent-watch", daemon=True).start()


def serve_the_campaign() -> None:
    """Set up a producer process (a ``multiprocessing`` child of the campaign): the campaign alone
    decides when it stops (Ctrl-C reaches the whole foreground process group; ``kill -TERM -PGID``
    too), and it dies with the campaign."""
    import multiprocessing

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)
    die_with_parent(multiprocessing.parent_process().pid, pdeathsig=True)
