"""The documented operator API, as written: docs/operator-api.md's Pool2d (the NNSmith docs' example,
verbatim) becomes a user's module in a temp folder and is fuzzed from there, unchanged."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from nnfuzz.fuzz.runlog import read_log

ROOT = Path(__file__).parents[2]
DOC = ROOT / "docs" / "operator-api.md"


def _user_module() -> str:
    pool, imports, tables, lowering = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    for verbatim in ("class Pool2d(UnaryOpBase):", "super().__init__()", "self.inp_ranks = [(4,)]",
                     "def type_infer(self, itensors: List[AbsTensor]):",
                     "((h - self.kh) + 2 * self.pad) // self.stride,", "def requires(self, itensors"):
        assert verbatim in pool
    assert "dtypes" not in pool, "the docs' class carries no dtype tables; the user adds them"
    head = "class Pool2d(UnaryOpBase):\n"
    return imports + "\n\n" + pool.replace(head, head + tables) + "\n\n" + lowering


def _nnfuzz(args, cwd):
    """``nnfuzz ...`` as the console script runs it: the working folder is NOT on the import path (-P)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-P", "-m", "nnfuzz.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env=env)


@pytest.mark.slow
def test_docs_pool2d_is_fuzzed_unchanged_from_the_working_folder(tmp_path):
    (tmp_path / "my_pool.py").write_text(_user_module())
    out = tmp_path / "pool_models"
    r = _nnfuzz(["generate", "n=6", "ui=plain", f"out={out}", "mgen.seed=3", "mgen.include_modules=[my_pool]",
                 "mgen.include=[Pool2d,Relu,Sin,Add]", "mgen.op_weights={Pool2d:4}",
                 "mgen.dtypes=[float32]"], tmp_path)
    assert r.returncode == 0, r.stderr
    folders = sorted(out.iterdir())
    assert len(folders) == 6
    metas = [json.loads((f / "meta.json").read_text()) for f in folders]
    with_pool = [m for m in metas if "Pool2d" in m["ops"]]
    assert len(with_pool) >= 4, [m["ops"] for m in metas]
    # each model ran in torch (its reference outputs), holds the pooling in ONNX and runs in ONNX Runtime
    import pickle

    import onnx
    import onnxruntime as ort

    for f, m in zip(folders, metas):
        if "Pool2d" not in m["ops"]:
            continue
        model = onnx.load(str(f / "model.onnx"))
        assert "AveragePool" in {n.op_type for n in model.graph.node}
        oracle = pickle.loads((f / "oracle.pkl").read_bytes())
        sess = ort.InferenceSession(str(f / "model.onnx"), providers=["CPUExecutionProvider"])
        outs = sess.run(None, oracle["input"])
        assert outs and all(o.size for o in outs)
        if oracle["output"] is not None:
            assert [o.shape for o in outs] == [v.shape for v in oracle["output"].values()]


@pytest.mark.slow
def test_an_include_module_missing_from_the_working_folder_names_the_folder(tmp_path):
    r = _nnfuzz(["ops", "mgen.include_modules=[my_pool]"], tmp_path)
    assert r.returncode == 2
    assert "cannot import 'my_pool'" in r.stderr and str(tmp_path) in r.stderr


@pytest.mark.slow
def test_a_requires_that_contradicts_type_infer_is_a_clear_error(tmp_path):
    text = _user_module()
    assert "self.kh <= h + 2 * self.pad," in text
    (tmp_path / "my_pool.py").write_text(text.replace("self.kh <= h + 2 * self.pad,", "self.kh > h + 2 * self.pad,"))
    r = _nnfuzz(["ops", "mgen.include_modules=[my_pool]", "mgen.include=[Pool2d]"], tmp_path)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert "OpDefinitionError: operator Pool2d (my_pool): its requires and type_transfer admit no valid " \
           "instance" in r.stderr


@pytest.mark.slow
def test_a_campaign_with_producers_fuzzes_the_docs_pool2d(tmp_path):
    """Spawned producer processes import mgen.include_modules from the working folder too."""
    (tmp_path / "my_pool.py").write_text(_user_module())
    r = _nnfuzz(["fuzz", "ui=plain", "time=3m", "fuzz.max_tests=8", "fuzz.producers=2", "mgen.seed=1",
                 "mgen.include_modules=[my_pool]", "mgen.include=[Pool2d,Relu,Sin,Add]", "mgen.op_weights={Pool2d:4}",
                 "mgen.dtypes=[float32]",
                 "fuzz.out=bugs", "fuzz.reduce=false"], tmp_path)
    assert r.returncode == 0, r.stderr
    records = list(read_log(tmp_path / "bugs"))
    tested = [x for x in records if "verdict" in x]
    assert len(tested) >= 8 and not [x for x in tested if x["verdict"] not in ("pass", "inconsistency", "crash")]
    assert sum("Pool2d" in x["ops"] for x in tested) >= 3
