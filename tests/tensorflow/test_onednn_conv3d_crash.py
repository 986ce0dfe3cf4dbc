"""A native crash of TF in a tf-cpu sandbox is a crash with its signal, never a lost test: TensorFlow 2.21's
oneDNN Conv3D (brg_conv_fwd:avx512_core) corrupts the heap on one intra-op thread, the thread a tf-cpu
campaign gives each sandbox worker, and glibc aborts (bugs/kept/0021). The sandbox reports SIGABRT with glibc's
message, and its next run starts a fresh worker. A CPU whose vector ISA differs from the one the bug names
(meta.json ``found.cpu``) may get another Conv3D kernel: where that one passes, the test says so and skips."""
import re
import signal
from pathlib import Path

import numpy as np
import pytest
from machine import missing_cpu_flags

pytest.importorskip("tensorflow")

from nnfuzz.fuzz.sandbox import Sandbox  # noqa: E402
from nnfuzz.gir import GraphIR  # noqa: E402
from nnfuzz.materialize.portable import pack  # noqa: E402
from nnfuzz.triage.bugstore import load_bug  # noqa: E402
from nnfuzz.triage.cpu import isa_difference  # noqa: E402

BUG = Path(__file__).resolve().parents[2] / "bugs" / "kept" / "0021"
GLIBC = re.compile(r"double free or corruption|free\(\): invalid|malloc\(\): |corrupted")


@pytest.mark.slow
def test_tf_cpu_sandbox_reports_the_onednn_conv3d_abort_as_a_crash_with_its_signal():
    bug = load_bug(BUG)
    missing = missing_cpu_flags(bug.meta)
    if missing:
        pytest.skip(f"the fault needs a CPU with {missing} (oneDNN's AVX-512 kernels)")
    with Sandbox("tf-cpu", test_timeout=120) as sb:
        first = sb.pid
        r = sb.run(bug.model_bytes, bug.oracle["input"])
        if r.ok and isa_difference(bug.meta.found):
            pytest.skip(f"oneDNN's Conv3D passes here: {isa_difference(bug.meta.found)}")
        assert (r.status, r.stage, r.signal) == ("crash", "execute", signal.SIGABRT), (r.status, r.error, r.detail)
        assert r.error == "killed by SIGABRT" and GLIBC.search(r.detail), r.detail
        assert r.signal == bug.meta.signal
        small = conv3d_payload([1, 1, 2, 5, 4], [1, 1, 1, 1, 2], [1, 3, 1])  # below the faulting size
        ok = sb.run(small, {"x": np.ones([1, 1, 2, 5, 4], np.float32), "w": np.ones([1, 1, 1, 1, 2], np.float32)})
        assert ok.ok and sb.pid != first, (ok.status, ok.error)
        np.testing.assert_array_equal(ok.outputs["y"], np.full([1, 1, 2, 2, 3], 2, np.float32))


def test_the_bug_names_the_cpu_it_needs_and_a_cpu_without_it_is_told_apart():
    meta = load_bug(BUG).meta
    assert meta.extra["cpu_flags"] == ["avx512f"] and meta.extra["threads"] == {"intra_op": 1}
    assert missing_cpu_flags(meta.replace(extra={"cpu_flags": ["avx512f", "no_such_flag"]})) in (
        ["no_such_flag"], ["avx512f", "no_such_flag"])
    assert missing_cpu_flags(meta.replace(extra={})) == []


def conv3d_payload(x, w, stride) -> bytes:
    """The tf-cpu payload of one Conv3d node y = conv3d(x, w) (NCDHW, no padding), both inputs float32."""
    out = [x[0], w[0]] + [(i - k) // s + 1 for i, k, s in zip(x[2:], w[2:], stride)]
    gir = GraphIR.from_json({
        "version": 1, "inputs": ["x", "w"], "weights": [], "outputs": ["y"],
        "vars": {n: {"shape": s, "dtype": "float32"} for n, s in (("x", x), ("w", w), ("y", out))},
        "insts": [{"op": {"op": "Conv3d", "module": "nnfuzz.ops.conv.spec", "args": [*stride, 0, 0, 0, 1, 1, 1, 1],
                          "kwargs": {}}, "inputs": ["x", "w"], "outputs": ["y"]}]})
    return pack(gir.dumps(), {})
