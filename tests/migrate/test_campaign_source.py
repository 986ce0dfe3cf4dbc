"""`nnfuzz fuzz fuzz.source=migrated/`: migrated tests run through the same sandbox, verdicts, dedup and
bug store as generated models, in priority order, on ort-cpu and tvm-cpu (50 tests at most each)."""
import json

import pytest

from nnfuzz.cli import main
from nnfuzz.migrate.priority import read_order
from nnfuzz.triage.bugstore import load_bug
from nnfuzz.fuzz.runlog import read_log

NEEDS = {"ort-cpu": "onnxruntime", "tvm-cpu": "tvm"}


@pytest.mark.parametrize("backend", ["ort-cpu", "tvm-cpu"])
@pytest.mark.slow
def test_migrated_tests_run_in_priority_order(backend, corpus, tmp_path, monkeypatch, capsys):
    pytest.importorskip(NEEDS[backend])
    monkeypatch.setenv("NNFUZZ_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "bugs"
    assert main(["fuzz", "--json", f"backend={backend}", f"fuzz.source={corpus}", "time=120s", "fuzz.max_tests=50",
                 f"fuzz.out={out}", "ui=plain", "fuzz.reduce=false"]) == 0
    s = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert s["tests"] > 0 and s["nnfuzz_errors"] == 0, s
    log = list(read_log(out))
    tested = [r for r in log if "migration" in r]
    order = read_order(corpus)
    # priority order, from the top: the n tested are the first n, and each lane took its tests in rank order
    # (with two lanes, the log has them in the order they ended)
    assert sorted(r["migration"]["folder"] for r in tested) == sorted(order[:len(tested)])
    assert all(r["seed"] == order.index(r["migration"]["folder"]) for r in tested)
    for lane in {r.get("worker") for r in tested}:
        ranks = [r["seed"] for r in tested if r.get("worker") == lane]
        assert ranks == sorted(ranks), (lane, ranks)
    assert any(r.get("verdict") == "pass" for r in tested)
    for folder in sorted(p for p in out.iterdir() if p.is_dir() and p.name.isdigit()):
        bug = load_bug(folder)
        assert bug.meta.migration is not None and bug.meta.migration["folder"] in order  # says where it came from
        assert not (folder / "gir.json").exists()


@pytest.mark.slow
def test_source_errors_are_clear(corpus, tmp_path, capsys):
    assert main(["fuzz", "backend=ort-cpu", f"fuzz.source={tmp_path}", "time=5s", f"fuzz.out={tmp_path / 'b'}"]) == 2
    assert "nnfuzz migrate" in capsys.readouterr().err
    assert main(["fuzz", "backend=inductor-cpu", f"fuzz.source={corpus}", "time=5s", f"fuzz.out={tmp_path / 'c'}",
                 "ui=plain"]) == 2
    assert "ONNX backend" in capsys.readouterr().err
