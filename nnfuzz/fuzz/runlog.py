"""The campaign log: ``campaign.jsonl`` (one JSON line per test, plus the ``campaign`` header, the
coverage guide's lines and ``campaign_end``), kept within a bounded size, and the one reader of it.

Files in the campaign's folder (``campaign`` stands for the log's name without ``.jsonl``):

- ``campaign.jsonl``: the live log, full lines as written, each flushed (a killed campaign keeps what
  it logged). When it passes ``ROTATE_BYTES`` it is renamed ``campaign.NNN.jsonl`` (NNN counts up from
  000) and a new live file starts.
- ``campaign.NNN.jsonl.bz2``: a rotated part, its per-test records in the compact spelling of
  fuzz/logcodec.py, compressed with bz2 in a background thread: written to ``.tmp``, renamed, then the
  plain part is removed. A plain part without its .bz2 (the campaign was killed while compressing) is
  read as it is and compressed when the next campaign opens the log.
- ``campaign.minutes.jsonl``: per-minute aggregates of each campaign (tests, verdicts, bugs, seconds
  per phase, rate, op types first tested), between copies of its ``campaign`` and ``campaign_end``
  lines; never rotated (~500 lines in 8 hours).

At ~90 tests/s (ort-cpu, 2 workers) the parts grow by ~18.5 bytes a test: ~48 MB in 8 hours, plus at
most one live file (2 MiB) and the minutes (~0.25 MB): ~50 MB, against ~1.1 GB as logged before
(docs/report.md has the measurements). ``read_log`` returns every record in order: the parts, then the live file.
"""
from __future__ import annotations

import bz2
import json
import os
import re
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

from nnfuzz.errors import NNFuzzError
from nnfuzz.fuzz import logcodec

ROTATE_BYTES = 2 << 20   # the live file's size that starts a new part (~1 minute at 90 tests/s)
LOG = "campaign.jsonl"
TESTED = ("pass", "unsupported", "crash", "inconsistency", "timeout")  # verdicts of a test that ran
MINUTE_S = 60.0


class LogError(NNFuzzError):
    """A campaign log line that is not a JSON object (named by file and line)."""


def _stem(live: Path) -> str:
    return live.name[:-len(".jsonl")] if live.name.endswith(".jsonl") else live.name


def minutes_path(live: Path) -> Path:
    return live.with_name(_stem(live) + ".minutes.jsonl")


def parts(live: Path) -> List[Path]:
    """The rotated parts of the log ``live``, in order: each part's .bz2, or its plain file where the
    .bz2 is not there (yet)."""
    pat = re.compile(re.escape(_stem(live)) + r"\.(\d{3,})\.jsonl(\.bz2)?$")
    found = {}
    for p in live.parent.iterdir() if live.parent.is_dir() else ():
        m = pat.match(p.name)
        if m and (m.group(2) or int(m.group(1)) not in found):
            found[int(m.group(1))] = p
    return [found[k] for k in sorted(found)]


def log_path(path) -> Path:
    """``path`` (a campaign folder or its log file) as the log file."""
    path = Path(path)
    return path / LOG if path.is_dir() else path


def exists(path) -> bool:
    live = log_path(path)
    return live.is_file() or bool(parts(live))


def log_lines(path, with_parts: bool = True) -> Iterator[Tuple[str, int, str, bool]]:
    """Every line of the log at ``path`` (folder or log file) in order: (file name, line number, text,
    whether the line ended with a newline); ``with_parts=False``: the live file's alone. A file that cannot
    be read raises OSError."""
    live = log_path(path)
    for f in (parts(live) if with_parts else []) + ([live] if live.is_file() else []):
        opener = bz2.open if f.suffix == ".bz2" else open
        with opener(f, "rt", encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                if line.strip():
                    yield f.name, n, line.rstrip("\n"), line.endswith("\n")


def read_log(path, problems: Optional[list] = None, with_parts: bool = True) -> Iterator[dict]:
    """Every record of the log at ``path`` (a campaign folder or its log file), parts then live file
    (``with_parts=False``: the live file alone), per-test records in their full spelling. A line that is not a JSON object raises LogError, or, with
    ``problems`` (a list), is added to it as ``(where, why)`` and skipped. A cut last line (the campaign
    was killed while writing it) is never an error: it is noted in ``problems``, or on stderr."""
    for name, n, text, whole in log_lines(path, with_parts):
        where = f"{name} line {n}"
        try:
            rec = logcodec.decode(json.loads(text))
            if not isinstance(rec, dict):
                raise ValueError(f"a line must be a JSON object, got {type(rec).__name__}")
        except (ValueError, RecursionError) as e:
            why = f"not a record ({e}): {text[:120]}"
            if not whole:
                why = f"cut (the campaign was killed while writing it; {len(text)} bytes): {text[:120]}"
                if problems is None:
                    print(f"note: {where} {why}", file=sys.stderr)
            if problems is not None:
                problems.append((where, why))
            elif whole:
                raise LogError(f"{where}: {why}") from None
            continue
        if "cut" in rec and len(rec) == 1:   # written where a resumed campaign found a cut line
            why = f"cut (the campaign was killed while writing it): {str(rec['cut'])[:120]}"
            if problems is not None:
                problems.append((where, why))
            else:
                print(f"note: {where} {why}", file=sys.stderr)
            continue
        yield rec


def read_minutes(path) -> List[dict]:
    """The lines of the log's ``.minutes.jsonl`` (campaign headers, minutes, ends); [] if none."""
    mp = minutes_path(log_path(path))
    if not mp.is_file():
        return []
    out = []
    for line in mp.read_text(errors="replace").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a cut last line (killed): the log proper has the tests
    return out


class Minutes:
    """Per-minute sums of the per-test records a campaign logs (written to the .minutes.jsonl)."""

    def __init__(self):
        self.minute: Optional[int] = None
        self.ops_seen: set = set()
        self._reset()

    def _reset(self):
        self.tests, self.verdicts, self.seconds = 0, Counter(), Counter()
        self.bugs: List[str] = []
        self.ops_new: List[str] = []
        self.last_t = 0.0

    def add(self, rec: dict) -> Optional[dict]:
        """Count ``rec``; the finished minute's line when ``rec`` starts a later one."""
        t, v = rec.get("t"), rec.get("verdict")
        if not isinstance(t, (int, float)) or not isinstance(v, str):
            return None
        m, done = int(t // MINUTE_S), None
        if self.minute is not None and m > self.minute:
            done = self.line()
        if self.minute is None or m > self.minute:
            self.minute = m
        self.verdicts[v] += 1
        self.last_t = max(self.last_t, t)
        if v in TESTED:
            self.tests += 1
            new = [o for o in dict.fromkeys(rec.get("ops") or []) if isinstance(o, str) and o not in self.ops_seen]
            self.ops_seen.update(new)
            self.ops_new += new
        for k, s in (rec.get("seconds") or {}).items():
            self.seconds[k] += s
        if isinstance(rec.get("bug"), str):
            self.bugs.append(Path(rec["bug"]).name)
        return done

    def line(self, final: bool = False) -> Optional[dict]:
        """The current minute's line (None if it counted nothing), and a fresh minute. ``final``: the
        campaign ended within the minute (its rate is over the part of it that ran)."""
        if self.minute is None or not self.verdicts:
            return None
        start = self.minute * MINUTE_S
        span = max(1e-3, self.last_t - start) if final else MINUTE_S
        out = {"minute": {"m": self.minute, "t": round(start, 1), "span_s": round(span, 3), "tests": self.tests,
                          "rate": round(self.tests / span, 2), "verdicts": dict(self.verdicts),
                          "bugs": self.bugs, "seconds": {k: round(s, 4) for k, s in self.seconds.items()},
                          "ops_new": self.ops_new}}
        self._reset()
        return out


def _mend_cut_line(live: Path) -> None:
    """A live log whose last line a killed campaign cut: that line is moved into a ``{"cut": text}``
    record of its own, so the next campaign's lines start on a line of their own (the reader notes it)."""
    if not live.is_file() or live.stat().st_size == 0:
        return
    with open(live, "rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        fh.seek(max(0, size - (1 << 20)))
        tail = fh.read()
        if tail.endswith(b"\n"):
            return
        cut = tail.rsplit(b"\n", 1)[-1]
        fh.truncate(size - len(cut))
        fh.seek(0, os.SEEK_END)
        fh.write((json.dumps({"cut": cut.decode("utf-8", "replace")}) + "\n").encode())


class RunLog:
    """Append-only JSON-lines log (each line flushed), rotated and compressed past ``rotate_bytes``,
    with per-minute aggregates beside it. With ``started`` (a ``time.monotonic()`` value) each line
    gets ``t``, the seconds since then. Callers serialize ``write`` (the campaign's lock)."""

    def __init__(self, path: Optional[Path], started: Optional[float] = None, rotate_bytes: int = ROTATE_BYTES):
        self.fh, self.path, self.started, self.rotate_bytes = None, path, started, rotate_bytes
        self.minutes, self._mfh, self._threads, self.size, self._next = Minutes(), None, [], 0, None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            for p in path.parent.glob(_stem(path) + ".*.jsonl"):   # parts a killed campaign left plain
                if not re.fullmatch(re.escape(_stem(path)) + r"\.\d{3,}\.jsonl", p.name):
                    continue
                if p.with_name(p.name + ".bz2").exists():
                    p.unlink()
                else:
                    self._compress(p)
            _mend_cut_line(path)
            self._open()

    def _open(self) -> None:
        self.fh = open(self.path, "a", encoding="utf-8")
        self.size = self.path.stat().st_size

    def write(self, record: dict) -> None:
        if self.fh is None:
            return
        if self.started is not None:
            record = {**record, "t": round(time.monotonic() - self.started, 3)}
        line = json.dumps(record, default=str) + "\n"
        self.fh.write(line)
        self.fh.flush()
        self.size += len(line.encode("utf-8", "replace"))
        if "campaign" in record:
            self.minutes = Minutes()
            self._minute_line(record)
        elif "campaign_end" in record:
            self._minute_line(self.minutes.line(final=True))
            self._minute_line(record)
        else:
            self._minute_line(self.minutes.add(record))
        if self.size >= self.rotate_bytes:
            self._rotate()

    def _minute_line(self, rec: Optional[dict]) -> None:
        if rec is None:
            return
        if self._mfh is None:
            self._mfh = open(minutes_path(self.path), "a", encoding="utf-8")
        self._mfh.write(json.dumps(rec, default=str) + "\n")
        self._mfh.flush()

    def _rotate(self) -> None:
        """The live file becomes the next part (a rename: atomic); it is compressed in the background."""
        self.fh.close()
        if self._next is None:   # (the folder is listed once: it may hold thousands of bug folders)
            done = parts(self.path)
            self._next = int(re.search(r"\.(\d+)\.jsonl", done[-1].name).group(1)) + 1 if done else 0
        part = self.path.with_name(f"{_stem(self.path)}.{self._next:03d}.jsonl")
        self._next += 1
        os.replace(self.path, part)
        self._open()
        th = threading.Thread(target=self._compress, args=(part,), name="nnfuzz-log-compress", daemon=True)
        th.start()
        self._threads = [t for t in self._threads if t.is_alive()] + [th]

    @staticmethod
    def _compress(part: Path) -> None:
        """``part`` (plain) as ``part.bz2``, its per-test records compact; a line that is not JSON is
        kept as it is. The .bz2 appears whole (tmp, then rename) before the plain part goes."""
        out = part.with_name(part.name + ".bz2")
        tmp = part.with_name(part.name + ".bz2.tmp")
        with open(part, encoding="utf-8", errors="replace") as src, bz2.open(tmp, "wt", encoding="utf-8") as dst:
            for line in src:
                try:
                    rec = json.loads(line)
                except ValueError:
                    dst.write(line if line.endswith("\n") else line + "\n")
                    continue
                enc = logcodec.encode(rec) if isinstance(rec, dict) else rec
                dst.write(json.dumps(enc, separators=(",", ":"), default=str) + "\n")
        os.replace(tmp, out)
        part.unlink()

    def close(self) -> None:
        """Close the files; wait for the parts being compressed (a killed campaign leaves a plain part,
        compressed when the log is next opened)."""
        for th in self._threads:
            th.join()
        for fh in (self.fh, self._mfh):
            if fh is not None:
                fh.close()
        self.fh = self._mfh = None
