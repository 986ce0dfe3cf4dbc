"""A bug's err.log as the report's error box shows it: the system's part first.

err.log is the one-line summary, then the full text (triage/judging.py): for a crash, the summary is
the outermost line of the system's exception and the traceback starts in nnfuzz's own sandbox worker
(``fuzz/worker.py``, ``backends/<system>.py``) before it reaches the system. The box shows, per
traceback, the exception's message (the system's own words, its innermost check included), then the
system's frames, and names nnfuzz's frames in one line after them. A summary line that the message
repeats is shown once (an inconsistency's err.log writes its summary line twice).
"""
from __future__ import annotations

import re
from typing import List

TRACEBACK = "Traceback (most recent call last):"
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+),? in (.+)$')   # a traceback's, or a faulthandler dump's
_DUMP = re.compile(r"^(Current thread|Thread) 0x[0-9a-f]+ .*\(most recent call first\):$")
_OWN = re.compile(r"[/\\]nnfuzz[/\\](.+\.py)$")            # a frame in nnfuzz's own package
_CHAIN = ("During handling of the above exception", "The above exception was the direct cause")
_TYPED = re.compile(r"^[A-Za-z_][\w.]*:\s*")


def error_box(err: str) -> str:
    """``err`` (err.log's text) reordered for reading; the text is kept whole, nothing is dropped but
    a repeated summary line and nnfuzz's frames (named instead)."""
    lines = _threads_first(err.splitlines())
    if TRACEBACK not in (ln.strip() for ln in lines):
        return _once(lines)
    start = next(k for k, ln in enumerate(lines) if ln.strip() == TRACEBACK)
    head, out, k = lines[:start], [], start
    while k < len(lines):
        if lines[k].strip() != TRACEBACK:
            out.append(lines[k])
            k += 1
            continue
        frames, k = _frames(lines, k + 1)
        end = k
        while end < len(lines) and lines[end].strip() != TRACEBACK and not lines[end].startswith(_CHAIN):
            end += 1
        message = _trim(lines[k:end])
        out += message + [""] + _reordered(frames) + [""]
        k = end
    message_text = "\n".join(out)
    head = [ln for ln in head if not ln.strip() or _TYPED.sub("", ln.strip()) not in message_text]
    return "\n".join(_trim(_trim(head) + ([""] if _trim(head) else []) + out))


def _threads_first(lines: List[str]) -> List[str]:
    """A faulthandler dump (a worker killed by a signal): the crashing thread's stack ("Current thread")
    before the other threads' (nnfuzz's watchdog threads), nnfuzz's frames in each named in one line."""
    heads = [k for k, ln in enumerate(lines) if _DUMP.match(ln.strip())]
    if not heads:
        return lines
    blocks, k = [], heads[0]
    while k < len(lines) and _DUMP.match(lines[k].strip()):
        frames, end = _frames(lines, k + 1)
        own = [m for m in (_FRAME.match(f) for f, _ in frames) if _OWN.search(m.group(1))]
        named = ", ".join(f"{_OWN.search(m.group(1)).group(1)}:{m.group(2)} {m.group(3)}" for m in own)
        blocks.append([lines[k]] + [f for f, _ in frames if not _OWN.search(_FRAME.match(f).group(1))]
                      + ([f"  (nnfuzz's frames left out: {named})"] if own else []) + [""])
        k = end
        while k < len(lines) and not lines[k].strip():
            k += 1
    blocks.sort(key=lambda b: not b[0].strip().startswith("Current thread"))
    return lines[:heads[0]] + [ln for b in blocks for ln in b] + lines[k:]


def _frames(lines: List[str], k: int):
    """The traceback's frames from line ``k``: [(frame line, its indented lines)], and where they end."""
    frames = []
    while k < len(lines) and lines[k].startswith(" "):
        if _FRAME.match(lines[k]):
            frames.append((lines[k], []))
        elif frames:
            frames[-1][1].append(lines[k])
        k += 1
    return frames, k


def _reordered(frames) -> List[str]:
    own = [m for m in (_FRAME.match(f) for f, _ in frames) if _OWN.search(m.group(1))]
    theirs = [ln for f, body in frames if not _OWN.search(_FRAME.match(f).group(1)) for ln in (f, *body)]
    named = ", ".join(f"{_OWN.search(m.group(1)).group(1)}:{m.group(2)} {m.group(3)}" for m in own)
    head = f"{TRACEBACK[:-1]}, the system's frames" + (f" (nnfuzz's frames left out: {named})" if own else "") + ":"
    return [head] + (theirs or ["  (none: the exception was raised in nnfuzz's own code)"])


def _once(lines: List[str]) -> str:
    """The text with its first line dropped when a later line repeats it (with the blank line after it)."""
    first = lines[0].strip() if lines else ""
    if first and any(ln.strip() == first for ln in lines[1:]):
        lines = lines[1:]
        while lines and not lines[0].strip():
            lines = lines[1:]
    return "\n".join(lines)


def _trim(lines: List[str]) -> List[str]:
    """Without leading and trailing blank lines, and runs of blank lines cut to one."""
    out: List[str] = []
    for ln in lines:
        if ln.strip() or (out and out[-1].strip()):
            out.append(ln)
    while out and not out[-1].strip():
        out.pop()
    return out
