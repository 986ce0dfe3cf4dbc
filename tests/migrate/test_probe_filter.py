"""migrate.backend=<system> leaves out what the system's probe cache rules out (read from the cache the
campaign's probe writes, never probing itself); without a cache nothing is filtered and it says so."""
import json

import pytest

from nnfuzz.cli import main


@pytest.fixture
def ort_cache(tmp_path, monkeypatch):
    """An ort-cpu probe cache in a private NNFUZZ_CACHE: Abs float32 unsupported, opset 13 not read."""
    from nnfuzz.backends.base import BackendInfo
    from nnfuzz.backends.registry import get_backend
    from nnfuzz.fuzz.probe import cache_path

    monkeypatch.setenv("NNFUZZ_CACHE", str(tmp_path / "cache"))
    info = BackendInfo.of(get_backend("ort-cpu"))
    rows = cache_path(info, 17)
    rows.parent.mkdir(parents=True)
    rows.write_text(json.dumps({"Abs": {"float32->float32": False, "int8->int8": True}}))
    cache_path(info, "opsets").write_text(json.dumps({"13": False, **{str(o): True for o in range(14, 26)}}))
    return tmp_path


def test_the_probe_cache_rules_out_rows_and_opsets(ort_cache, capsys):
    out = ort_cache / "m"
    assert main(["migrate", f"out={out}", "source=onnx-node", "migrate.ops=[Abs,Relu]", "migrate.backend=ort-cpu",
                 "ui=plain", "migrate.multi_node=false"]) == 0
    kept = {p.name for p in (out / "onnx-node").iterdir()}
    summary = json.loads((out / "summary.json").read_text())["onnx-node"]
    # test_abs is float32 at opset 13: the opset rule comes first; test_relu (opset 14) stays
    assert "test_abs" not in kept and "test_relu" in kept
    assert summary["dropped"] == {"backend-opset-unread": 1}


def test_a_row_probed_unsupported_is_left_out(ort_cache):
    from nnfuzz.migrate.probe_filter import ProbeFilter
    from nnfuzz.migrate.record import MigratedTest
    import numpy as np

    f = ProbeFilter("ort-cpu")
    x = np.ones(3, np.float32)
    t = MigratedTest("onnx-node", "t", "Abs", {}, b"", {"x": x}, {"y": x}, opset=20)
    assert f.reason(t) == "backend-unsupported"
    i8 = np.ones(3, np.int8)
    assert f.reason(MigratedTest("onnx-node", "t", "Abs", {}, b"", {"x": i8}, {"y": i8}, opset=20)) is None
    # an op or a row the cache does not know is kept: the campaign finds out
    assert f.reason(MigratedTest("onnx-node", "t", "Relu", {}, b"", {"x": x}, {"y": x}, opset=20)) is None


def test_without_a_probe_cache_nothing_is_filtered_and_it_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NNFUZZ_CACHE", str(tmp_path / "empty"))
    out = tmp_path / "m"
    assert main(["migrate", f"out={out}", "source=onnx-node", "migrate.ops=[Abs]", "migrate.backend=ort-cpu",
                 "ui=plain"]) == 0
    assert "no probe cache for ort-cpu" in capsys.readouterr().err
    assert (out / "onnx-node/test_abs").is_dir()
