"""Each OpInfo entry is migrated in a forked child process: a sample on which the library itself dies (an
integer division by zero raising SIGFPE in a kernel, an abort) or hangs is invalid, as OPERA treats a
test its own library cannot run, and must not end the migration. The child reports one event per
sample through a pipe; after a death the next child starts at the following sample."""
from __future__ import annotations

import multiprocessing
import traceback
from typing import Iterator, Tuple

SAMPLE_TIMEOUT_S = 60.0


def entry_events(info, knobs: dict, tolerances) -> Iterator[Tuple]:
    """Events of migrating ``info``'s samples: ("test", name, MigratedTest) | ("drop", name, reason) |
    ("error", name, traceback text); a sample whose child died gives ("drop", name, "library-crash") and
    one that ran past SAMPLE_TIMEOUT_S ("drop", name, "library-timeout")."""
    ctx = multiprocessing.get_context("fork")
    start = 0
    while True:
        recv, send = ctx.Pipe(duplex=False)
        child = ctx.Process(target=_child, args=(info, knobs, tolerances, start, send), daemon=True)
        child.start()
        send.close()
        current, done = None, False
        try:
            while True:
                if not recv.poll(SAMPLE_TIMEOUT_S):
                    child.kill()
                    yield ("drop", current, "library-timeout")
                    break
                try:
                    event = recv.recv()
                except EOFError:  # the child died inside a sample
                    child.join()
                    yield ("drop", current, "library-crash")
                    break
                if event[0] == "start":
                    current, start = event[1], event[2] + 1
                elif event[0] == "end":
                    done = True
                    break
                else:
                    current = None
                    yield event
        finally:
            recv.close()
            child.join(5)
            if child.is_alive():
                child.kill()
                child.join()
        if done or current is None:
            return


def _child(info, knobs, tolerances, start: int, send) -> None:
    import faulthandler

    from nnfuzz.migrate.record import Dropped

    faulthandler.disable()  # a sample the library dies on is an expected outcome here, not a dump to show
    from nnfuzz.migrate.torch_opinfo import migrate_sample, op_name, samples

    for n, (dtype, k, sample) in enumerate(samples(info, knobs["dtypes"], knobs["max_per_op"])):
        if n < start:
            continue
        name = f"{op_name(info)}[{dtype}]#{k}"
        send.send(("start", name, n))
        try:
            send.send(("test", name, migrate_sample(info, dtype, k, sample, knobs["opset"], tolerances)))
        except Dropped as e:
            send.send(("drop", name, e.reason))
        except Exception:  # noqa: BLE001 - a bug in nnfuzz: sent back in full, shown and counted there
            send.send(("error", name, traceback.format_exc()))
    send.send(("end",))
    send.close()
