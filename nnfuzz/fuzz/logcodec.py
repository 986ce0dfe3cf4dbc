"""The compact spelling of campaign.jsonl's per-test records, used in the log's rotated, compressed
parts (fuzz/runlog.py): short keys, an op list as one string (its count implied), phase times in whole
milliseconds, the test's start as milliseconds before its ``t`` (its end, when it is ``t``, and a null
stage implied). ``decode(encode(r))`` is ``r`` up to the
millisecond (phase times are logged to 0.1 ms); a record the spelling does not fit is kept as it is.

Measured on 4,001 ort-cpu test records from campaigns (``t`` moved an hour on, as in a long campaign):
436 bytes a line as logged, 214 in this spelling; compressed, 25.2 and 18.5 bytes a test with bz2 -9,
53.5 and ~37 with gzip -9, 27.2 and ~20.8 with xz -6 (bz2 it is). The op names are most of what is
left (about 10 of the 18.5 bytes; names as indices would save under 1): they are random by design.
"""
from __future__ import annotations

from typing import Optional

KEYS = {"seed": "s", "nodes": "n", "ops": "o", "opset": "os", "worker": "w", "verdict": "v", "format": "f",
        "stage": "st", "seconds": "ms", "bug": "b", "error": "er", "note": "nt"}
PHASES = {"generate": "g", "search": "q", "export": "x", "compile": "c", "execute": "e", "ipc": "i"}
SPECIAL = ("search", "began", "ended", "t")     # spelt by hand below
SHORT = set(KEYS.values()) | {"sq", "sx", "d", "de", "T"}
_LONG = {v: k for k, v in KEYS.items()}
_PHASE_LONG = {v: k for k, v in PHASES.items()}


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _ms_of(t: float, x) -> Optional[int]:
    """``x`` (seconds, 3 decimals) as whole milliseconds before ``t``, if that is exact."""
    if not (_num(t) and _num(x)):
        return None
    d = round((t - x) * 1000)
    return d if round(t - d / 1000, 3) == x else None


def encode(rec: dict) -> dict:
    """The compact record of a per-test record (one with ``seed`` and ``verdict``); any other record,
    or one with a key the compact spelling uses, as it is."""
    if not ("seed" in rec and "verdict" in rec and "t" in rec) or SHORT & set(rec) or ("format" in rec) != ("stage" in rec):
        return rec
    t, out = rec["t"], {}
    if "ops" in rec and "nodes" not in rec:
        out["n"] = None   # (no op count to imply)
    if _ms_of(t, rec.get("began")) is not None and "ended" not in rec:
        out["de"] = None  # (no end to imply)
    for k, v in rec.items():
        if k == "ops" and isinstance(v, list) and all(isinstance(o, str) and o and " " not in o for o in v):
            out["o"] = " ".join(v)
        elif k == "nodes" and isinstance(rec.get("ops"), list) and v == len(rec["ops"]):
            continue   # the op count: implied
        elif k == "seconds" and isinstance(v, dict) and all(_num(x) for x in v.values()):
            out["ms"] = {PHASES.get(p, p): round(x * 1000) for p, x in v.items()}
        elif k == "search" and isinstance(v, dict) and set(v) == {"ok", "ms"} and isinstance(v["ok"], bool):
            out["sq" if v["ok"] else "sx"] = v["ms"]
        elif k == "stage" and v is None:
            continue   # implied by "f" (a test that ran has both)
        elif k == "ended" and v == t and _ms_of(t, rec.get("began")) is not None:
            continue   # implied by "d": it ended when it was logged
        elif k in ("began", "ended") and _ms_of(t, v) is not None:
            out["d" if k == "began" else "de"] = _ms_of(t, v)
        elif k == "t":
            out["T"] = v
        else:
            out[KEYS.get(k, k)] = v
    return out


def is_compact(rec) -> bool:
    return isinstance(rec, dict) and "v" in rec and "T" in rec and "verdict" not in rec


def decode(rec):
    """The record ``encode`` made ``rec`` from (a record not in the compact spelling, as it is). A
    malformed compact record raises ValueError."""
    if not is_compact(rec):
        return rec
    t, out = rec["T"], {}
    if not _num(t):
        raise ValueError(f"'T' must be seconds, got {t!r:.80}")
    for k, v in rec.items():
        if k == "o":
            out["ops"] = v.split(" ") if isinstance(v, str) else v
            if "n" not in rec and isinstance(out["ops"], list):
                out["nodes"] = len(out["ops"])
        elif k in ("n", "de") and v is None:
            continue
        elif k == "f":
            out["format"] = v
            if "st" not in rec:
                out["stage"] = None
        elif k == "ms":
            if not isinstance(v, dict) or not all(_num(x) for x in v.values()):
                raise ValueError(f"'ms' must map phases to milliseconds, got {v!r:.80}")
            out["seconds"] = {_PHASE_LONG.get(p, p): x / 1000 for p, x in v.items()}
        elif k in ("sq", "sx"):
            out["search"] = {"ok": k == "sq", "ms": v}
        elif k in ("d", "de"):
            if not _num(v):
                raise ValueError(f"{k!r} must be milliseconds, got {v!r:.80}")
            out["began" if k == "d" else "ended"] = round(t - v / 1000, 3)
            if k == "d" and "de" not in rec:
                out["ended"] = t
        elif k == "T":
            out["t"] = t
        else:
            out[_LONG.get(k, k)] = v
    return out
