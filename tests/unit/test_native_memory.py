"""nnfuzz/native_memory.py: the systems under test get the user's oneDNN setting, not nnfuzz's bound (the
bound itself: tests/torch/test_onednn_cache.py), and trim_heap gives back heap pages freed mid-heap."""
import ctypes
import os
import sys

import pytest

from nnfuzz import native_memory
from nnfuzz.native_memory import ONEDNN_CACHE_CAPACITY, ONEDNN_CACHE_ENV, bound_native_caches, system_env, trim_heap


def test_the_workers_of_a_system_under_test_get_the_users_environment(monkeypatch):
    monkeypatch.delenv(ONEDNN_CACHE_ENV, raising=False)
    monkeypatch.setattr(native_memory, "_added", False)
    bound_native_caches()
    assert os.environ[ONEDNN_CACHE_ENV] == str(ONEDNN_CACHE_CAPACITY)
    assert ONEDNN_CACHE_ENV not in system_env(dict(os.environ)) and system_env({"A": "1"}) == {"A": "1"}
    monkeypatch.setenv(ONEDNN_CACHE_ENV, "64")
    monkeypatch.setattr(native_memory, "_added", False)
    bound_native_caches()
    assert os.environ[ONEDNN_CACHE_ENV] == "64" and system_env(dict(os.environ))[ONEDNN_CACHE_ENV] == "64"



def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_trim_gives_back_pages_freed_in_the_middle_of_the_heap(monkeypatch):
    libc = ctypes.CDLL(None)
    libc.malloc.restype, libc.malloc.argtypes, libc.free.argtypes = ctypes.c_void_p, [ctypes.c_size_t], [ctypes.c_void_p]
    size = 64 << 10  # below glibc's mmap threshold: on the heap
    start = _rss_mib()
    # 512 blocks (32 MiB, written), each followed by a block kept (as large, so that it comes from the
    # heap's top too, and never written): freed, the written blocks are holes between kept ones, which
    # the heap cannot give back by itself, and malloc_trim does
    pairs = [(libc.malloc(size), libc.malloc(size)) for _ in range(512)]
    for big, _ in pairs:
        ctypes.memset(big, 1, size)
    for big, _ in pairs:
        libc.free(big)
    held = _rss_mib()
    assert held - start > 24, (start, held)  # the holes are still resident
    monkeypatch.setattr(native_memory, "_trimmed_at", 0.0)
    assert trim_heap(every=3600.0) is True
    assert held - _rss_mib() > 16, (held, _rss_mib())
    assert trim_heap(every=3600.0) is False  # once an hour: the second call is too soon
    for _, small in pairs:
        libc.free(small)


SHARED = """
import ctypes, threading
from nnfuzz.native_memory import one_heap
libc = ctypes.CDLL(None)
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
def main_heap():  # the size of the main heap ([heap]: glibc's main arena grows it with brk)
    line = next(ln for ln in open("/proc/self/maps") if ln.rstrip().endswith("[heap]"))
    lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
    return hi - lo
if SHARE:
    assert one_heap()
before = main_heap()
held = []
t = threading.Thread(target=lambda: held.extend(libc.malloc(64 << 10) for _ in range(160)))  # 10 MiB
t.start(); t.join()
print((main_heap() - before) >> 20)
"""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_after_one_heap_a_new_threads_allocations_are_in_the_main_heap():
    import subprocess

    def grown(share: bool) -> int:
        r = subprocess.run([sys.executable, "-c", f"SHARE = {share}\n" + SHARED], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
        return int(r.stdout.split()[-1])
    assert grown(False) < 2  # a thread of its own: its heap, not the main one
    assert grown(True) >= 9
