"""Where a command's output goes: its result on stdout, everything else on stderr.

Every command that prints results takes ``--json`` (a flag, not a ``key=value`` setting: it says how to
print, not what to run). Without it the result is human text (a table, a line); with it stdout carries
exactly one JSON document and nothing else: ``nnfuzz fuzz time=20s --json | jq .tests`` works.

In JSON mode, for the whole command, ``sys.stdout`` is stderr and so is file descriptor 1 (what the
systems' native code and the worker processes print lands on stderr too); the JSON document goes to the
real stdout once, through ``result`` (a command stopped by an error writes none: its message is on
stderr, its exit code says what happened). ``quiet`` holds back what a system prints on stderr while it is
imported (TensorFlow's start-up log), for the commands that only look at the systems.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from typing import Callable, Optional


class _State:
    json = False
    target = None     # the real stdout in JSON mode
    written = False   # the one JSON document was written


_state = _State()


def json_mode() -> bool:
    return _state.json


def _fd(stream) -> Optional[int]:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None


@contextlib.contextmanager
def output(as_json: bool):
    """The command's output mode: ``with output(as_json): code = command(...)``."""
    if not as_json:
        yield
        return
    real, saved = sys.stdout, None
    real.flush()
    if _fd(real) == 1 and _fd(sys.stderr) is not None:  # a real process: move fd 1 too
        saved = os.dup(1)
        os.dup2(_fd(sys.stderr), 1)
        target = os.fdopen(saved, "w", closefd=False)
    else:  # stdout replaced in-process (pytest's capsys): the Python object alone
        target = real
    _state.json, _state.target, _state.written = True, target, False
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        sys.stdout = real
        _state.json, _state.target = False, None
        if saved is not None:
            sys.stderr.flush()
            os.dup2(saved, 1)
            os.close(saved)


def result(doc: dict, human: Optional[Callable[[], None]] = None) -> None:
    """The command's result: ``doc`` as one JSON document on stdout in JSON mode, else ``human()`` (which
    prints the human text; None: the result has no human form beyond what was already shown)."""
    if _state.json:
        if _state.written:
            from nnfuzz.errors import InternalError

            raise InternalError("a command wrote a second JSON document; --json promises one")
        _state.written = True
        _state.target.write(json.dumps(doc) + "\n")
        _state.target.flush()
    elif human is not None:
        human()


def plural(n: int, word: str, many: str = "") -> str:
    """``plural(1, "bug")`` is "1 bug", ``plural(2, "bug")`` "2 bugs"; ``many`` for irregular plurals."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def say(msg: str) -> None:
    """A line for the person at the terminal (progress, notes, what was written): always stderr."""
    print(msg, file=sys.stderr, flush=True)


@contextlib.contextmanager
def quiet(keep: Callable[[str], None] = lambda text: None):
    """Hold back what is printed on stderr (file descriptor 2, so native code's logs too) inside the
    block; ``keep(text)`` receives it afterwards (``debug=true`` shows it)."""
    fd = _fd(sys.stderr)
    if fd is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(fd)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), fd)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, fd)
            os.close(saved)
            tmp.seek(0)
            text = tmp.read().decode(errors="replace")
            if text.strip():
                keep(text)
