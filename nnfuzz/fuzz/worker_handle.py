"""The parent's handle on one sandbox worker process (``nnfuzz.fuzz.worker``): starting it in its own
session, its connection, its log file, its resident memory, and killing and reaping its whole process
group. ``Sandbox`` (fuzz/sandbox.py) decides when; this module knows how."""
from __future__ import annotations

import multiprocessing
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Optional

from nnfuzz.native_memory import system_env

LOG_TAIL = 8000          # characters of worker output kept in RunResult.detail
LOG_ROTATE = 1 << 20     # the worker log is emptied before a run once it is this large
# a directory of the worker's own (its path in this variable), removed when the worker goes: what a system
# caches on disk there (inductor's compiled kernels, backends/inductor.py) dies with the worker, so a worker
# killed mid-compile (a timeout) cannot leave a half-written kernel that a later worker loads
SCRATCH_ENV = "NNFUZZ_WORKER_SCRATCH"


def signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def _exited(pid: int) -> bool:
    """Whether ``pid`` (our child) has exited, without reaping it (its pid, and so its process group id,
    stays reserved until we do)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(proc: subprocess.Popen, conn, log: int, statm: Optional[int], scratch: str) -> None:
    """Kill the worker's whole process group, reap it, close its connection, log and statm handle, and
    remove its scratch directory."""
    gone = True
    if proc.returncode is None:
        killpg(proc.pid)  # before reaping: the leader's pid keeps the group id from being reused
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # unkillable (stuck in the kernel): leave it, and its scratch
            gone = False
    for close in (conn.close, lambda: os.close(log), lambda: statm is not None and os.close(statm)):
        try:
            close()
        except OSError:
            pass
    if gone:
        shutil.rmtree(scratch, ignore_errors=True)  # (its own files, left by its own processes: nothing to report)


def _unlinked_log() -> tuple:
    """(read fd, append-only write fd) of a temporary file already unlinked: nothing is left behind."""
    log, log_path = tempfile.mkstemp(prefix="nnfuzz-worker-", suffix=".log")
    try:
        return log, os.open(log_path, os.O_WRONLY | os.O_APPEND)
    finally:
        os.unlink(log_path)


class WorkerHandle:
    """One worker process: its Popen, connection, log file (an unlinked file: nothing is left behind
    whatever happens to either process) and /proc/<pid>/statm handle."""

    def __init__(self, proc, conn, log: int, scratch: str):
        self.proc, self.conn, self.log, self.scratch = proc, conn, log, scratch
        self.pid = proc.pid
        self.info: dict = {}
        try:
            self._statm = os.open(f"/proc/{proc.pid}/statm", os.O_RDONLY)
        except OSError:
            self._statm = None
        # kills the worker when this object goes (kill(), garbage collection, interpreter exit)
        self.finalizer = weakref.finalize(self, _reap, proc, conn, log, self._statm, scratch)
        self._page = os.sysconf("SC_PAGE_SIZE")
        self._poller = select.poll()
        self._poller.register(conn.fileno(), select.POLLIN)

    @classmethod
    def spawn(cls, extra_env: Optional[dict] = None) -> "WorkerHandle":
        """Start ``python -m nnfuzz.fuzz.worker`` (a fresh interpreter, never a fork of this process) in
        its own session, its output going to an unlinked log file; ``extra_env`` added to its environment."""
        parent_conn, child_conn = multiprocessing.Pipe(duplex=True)
        log, log_fd = _unlinked_log()
        scratch = tempfile.mkdtemp(prefix="nnfuzz-worker-")
        # its temporary files too (TF's autograph writes one per traced function and deletes them at exit
        # only: a killed worker's stayed in /tmp, hundreds of them after a few campaigns); removed with it
        env = {**system_env(dict(os.environ)), **(extra_env or {}), SCRATCH_ENV: scratch, "TMPDIR": scratch}
        env["PYTHONUNBUFFERED"] = "1"
        root = str(Path(__file__).resolve().parents[2])  # where `nnfuzz` is importable from
        env["PYTHONPATH"] = os.pathsep.join([root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        # PR_SET_PDEATHSIG fires when the starting *thread* exits: asked for only from the main thread
        main_thread = threading.current_thread() is threading.main_thread()
        cmd = [sys.executable, "-m", "nnfuzz.fuzz.worker", str(child_conn.fileno()), str(os.getpid()),
               "1" if main_thread else "0"]
        try:
            proc = subprocess.Popen(cmd, pass_fds=(child_conn.fileno(),), stdin=subprocess.DEVNULL,
                                    stdout=log_fd, stderr=log_fd, env=env, start_new_session=True)
        except BaseException:
            parent_conn.close()
            os.close(log)
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        finally:
            os.close(log_fd)
            child_conn.close()
        return cls(proc, parent_conn, log, scratch)

    def poll(self, timeout: float) -> bool:
        """Whether a message (or the end of the connection) is waiting; waits up to ``timeout`` s."""
        return bool(self._poller.poll(max(0, int(timeout * 1000 + 0.999))))

    def rss_mb(self) -> Optional[int]:
        if self._statm is None:
            return None
        try:
            data = os.pread(self._statm, 128, 0)
        except OSError:
            return None
        parts = data.split()
        return int(parts[1]) * self._page >> 20 if len(parts) > 1 else None

    def log_size(self) -> int:
        try:
            return os.fstat(self.log).st_size
        except OSError:
            return 0

    def log_mark(self) -> int:
        """The log offset where this run's output starts (emptying a large log first)."""
        size = self.log_size()
        if size > LOG_ROTATE:
            try:
                os.ftruncate(self.log, 0)  # the worker writes with O_APPEND, so it follows
                return 0
            except OSError:
                pass
        return size

    def log_since(self, offset: int, limit: int = LOG_TAIL) -> str:
        """The worker's output from ``offset`` on (its last ``limit`` characters)."""
        try:
            size = os.fstat(self.log).st_size
            start = max(offset if offset <= size else 0, size - limit * 4)
            data = os.pread(self.log, size - start, start)
        except OSError:
            return ""
        return data.decode("utf-8", "replace")[-limit:]

    def exited(self) -> bool:
        return self.proc.returncode is not None or _exited(self.pid)

    def wait_exit(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for the worker to exit, without reaping it; whether it did."""
        end = time.monotonic() + timeout
        while not self.exited():
            if time.monotonic() >= end:
                return False
            time.sleep(0.005)
        return True

    def death_text(self) -> str:
        """Reap the exited worker (killing what is left of its group first) and describe how it died."""
        if self.proc.returncode is None:
            killpg(self.pid)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                return "did not exit"
        rc = self.proc.returncode
        return f"killed by {signal_name(-rc)}" if rc < 0 else f"worker exited with code {rc}"

    def kill(self) -> None:
        self._statm = None  # closed by the finalizer
        self.finalizer()
