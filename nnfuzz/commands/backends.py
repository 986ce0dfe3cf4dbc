"""`nnfuzz backends`: every known backend, whether it can run on this machine, and why not.

Each row also gives ``fuzz.workers=auto`` for the backend on this machine (fuzz/sizing.py: the cores, the
memory at ``fuzz.memory_limit_mb`` per worker, the system's own threading). Each backend's
``check_available`` runs here (it imports the system: TF, TVM, ... take seconds each); what the systems
print on stderr while they load (TensorFlow's start-up log) is held back, shown with ``debug=true``.
A line per backend on stdout, or with ``--json`` one JSON document with the same facts.
"""
from __future__ import annotations

EXIT_CODES = {0: "listed (whatever is missing here)", 2: "a configuration error"}


def probe(name: str, memory_limit_mb: int = 4096) -> dict:
    """{name, usable, version | why, format, reference, optlevel, workers} for one backend."""
    from nnfuzz.backends.base import BackendInfo, BackendUnavailable
    from nnfuzz.backends.registry import backend_class
    from nnfuzz.fuzz.sizing import auto_workers

    row = {"name": name}
    try:
        cls = backend_class(name)
        row.update(format=BackendInfo.preferred_format(cls.formats),
                   reference=cls.reference or "torch eager",
                   optlevel=_optlevel(cls.unoptimized),
                   workers=auto_workers(cls.threads, cls.device, memory_limit_mb))
        cls.check_available()
        row.update(usable=True, version=str(cls().version))
    except BackendUnavailable as e:
        row.update(usable=False, why=str(e))
    except Exception as e:  # noqa: BLE001 - shown as this backend's failure, not hidden
        row.update(usable=False, why=f"checking it failed: {type(e).__name__}: {e}")
    return row


def _optlevel(unoptimized) -> str:
    if unoptimized is None:
        return "-"
    if unoptimized == "eager":
        return "vs eager"
    return "vs " + ", ".join(f"{k}={v}" for k, v in unoptimized.items())


def run(cfg) -> int:
    from nnfuzz.backends.registry import known_backends
    from nnfuzz.output import quiet, result, say

    held = []
    with quiet(held.append):  # the systems' start-up logs
        rows = [probe(name, int(cfg.fuzz.memory_limit_mb)) for name in known_backends()]  # entry points too
    if cfg.debug:
        for text in held:
            say(f"what the systems printed while loading:\n{text.rstrip()}")

    def table():
        width = max(len(r["name"]) for r in rows)
        for r in rows:
            state = f"yes  {r['version']}" if r["usable"] else f"no   {r['why']}"
            extra = (f"[{r.get('format', '?')}; reference: {r.get('reference', '?')}; optlevel: "
                     f"{r.get('optlevel', '?')}; workers: {r.get('workers', '?')}]")
            print(f"{r['name']:{width}s}  {state}  {extra}")

    result({"backends": rows}, table)
    return 0
