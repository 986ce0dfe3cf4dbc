"""The CPU a bug was found on, as meta.json's ``found.cpu``: its model name and its vector ISA flags (the
/proc/cpuinfo flags named ``avx*`` and ``amx*``). oneDNN, OpenVINO and inductor pick their kernels by
those flags (and block them by its caches), so a kernel fault kept on one CPU may not show on another:
bugs/kept/0021, a heap overflow in oneDNN's Conv3D, aborts on a Sapphire Rapids VM and runs on a Cascade
Lake one, with the same kernel. A replay that passes on a CPU whose flags differ says how they differ
instead of leaving the user to guess."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

ISA_PREFIXES = ("avx", "amx")


def _cpuinfo_field(name: str) -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""
    line = next((ln for ln in text.splitlines() if ln.split(":")[0].strip() == name), "")
    return line.partition(":")[2].strip()


def cpu_flags() -> set:
    """This CPU's flags as /proc/cpuinfo names them ("avx512f", "amx_tile", ...); empty where it is not there."""
    return set(_cpuinfo_field("flags").split())


def isa_flags() -> list:
    """This CPU's vector ISA flags, sorted."""
    return sorted(f for f in cpu_flags() if f.startswith(ISA_PREFIXES))


def this_cpu() -> dict:
    """meta.json's ``found.cpu`` for this machine."""
    return {"model": _cpuinfo_field("model name"), "isa": isa_flags()}


def isa_difference(found: Optional[dict]) -> str:
    """How this CPU's vector ISA differs from the one a bug was found on (``found``: meta.json's
    ``found``), as a sentence; empty where they agree or the bug names no CPU."""
    cpu = (found or {}).get("cpu")
    if not isinstance(cpu, dict) or not isinstance(cpu.get("isa"), list):
        return ""
    kept, here = set(cpu["isa"]), set(isa_flags())
    if kept == here:
        return ""
    parts = [f"adds {', '.join(sorted(here - kept))}" if here - kept else "",
             f"lacks {', '.join(sorted(kept - here))}" if kept - here else ""]
    return (f"it was kept on the CPU {cpu.get('model') or 'named'!r} and this CPU's vector ISA "
            f"{' and '.join(p for p in parts if p)}: the system's kernels, or their blocking, may differ here")
