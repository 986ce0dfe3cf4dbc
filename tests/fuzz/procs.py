"""Processes as /proc shows them: what a campaign started, and whether any of it is still running."""
import os


def proc_table() -> dict:
    """pid -> (ppid, start time, state) of every process, from /proc."""
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:  # exited meanwhile
                continue
            table[int(name)] = (int(fields[1]), fields[19], fields[0])
    return table


def descendants(pid: int) -> dict:
    """pid -> start time of every process below ``pid`` (workers run in sessions of their own, so the
    process group alone would miss them)."""
    table = proc_table()
    found, todo = {}, [pid]
    while todo:
        parent = todo.pop()
        for child, (ppid, start, _) in table.items():
            if ppid == parent and child not in found:
                found[child] = start
                todo.append(child)
    return found


def alive(pids: dict) -> list:
    """Those of ``pids`` (pid -> start time, as ``descendants`` gives) still running."""
    table = proc_table()
    return [p for p, start in pids.items() if p in table and table[p][1] == start and table[p][2] not in "ZX"]
