"""Facts of the machine the tests run on, for tests of faults that only some machines show (a kept
bug's meta.json ``cpu_flags``: the CPU flags it needs, as /proc/cpuinfo names them)."""
from nnfuzz.triage.cpu import cpu_flags


def missing_cpu_flags(meta) -> list:
    """The flags a bug's meta (BugMeta) says its CPU needs that this CPU lacks."""
    return sorted(set(meta.extra.get("cpu_flags", [])) - cpu_flags())
