"""Facts of the machine the tests run on, for tests of faults that only some machines show (a kept
bug's meta.json ``cpu_flags``: the CPU flags it needs, as /proc/cpuinfo names them)."""
from pathlib import Path


def cpu_flags() -> set:
    """The CPU's flags from /proc/cpuinfo ("avx512f", "amx_tile", ...); empty where there is none."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return set(line.partition(":")[2].split())


def missing_cpu_flags(meta) -> list:
    """The flags a bug's meta (BugMeta) says its CPU needs that this CPU lacks."""
    return sorted(set(meta.extra.get("cpu_flags", [])) - cpu_flags())
