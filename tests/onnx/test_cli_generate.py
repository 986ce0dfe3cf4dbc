import json
import pickle
import subprocess
import sys

import numpy as np
import onnx
import pytest

from nnfuzz.cli import main
from nnfuzz.gir import GraphIR
from nnfuzz.triage.folder import UnsafePickleError, load_oracle


def _gen(out, *extra):
    return main(["generate", "n=4", "ui=plain", f"out={out}", "mgen.max_nodes=6", *extra])


def test_generate_writes_complete_folders_and_continues_numbering(tmp_path, capsys):
    assert _gen(tmp_path / "m", "mgen.seed=7") == 0
    folders = sorted((tmp_path / "m").iterdir())
    assert [f.name for f in folders] == ["0000", "0001", "0002", "0003"]
    for k, f in enumerate(folders):
        meta = json.loads((f / "meta.json").read_text())
        assert meta["seed"] == 7 + k and meta["policy"]["max_nodes"] == 6
        gir = GraphIR.loads((f / "gir.json").read_text()).check()
        assert gir.op_names() == meta["ops"]
        model = onnx.load(f / "model.onnx")
        onnx.checker.check_model(model, full_check=True)
        oracle = load_oracle(f / "oracle.pkl")
        assert set(oracle["input"]) == set(gir.inputs)
        assert (oracle["output"] is not None) == meta["search"]["ok"] == meta["finite"]
        if oracle["output"] is not None:
            assert set(oracle["output"]) == set(gir.outputs)
            for name, arr in oracle["output"].items():
                assert list(arr.shape) == gir.vars[name].shape
    assert _gen(tmp_path / "m", "mgen.seed=100") == 0
    assert len(list((tmp_path / "m").iterdir())) == 8


def test_same_seed_rebuilds_the_same_model(tmp_path):
    assert _gen(tmp_path / "a", "mgen.seed=3") == 0
    assert main(["generate", "n=1", "ui=plain", f"out={tmp_path / 'b'}", "mgen.max_nodes=6", "mgen.seed=5"]) == 0
    # model 2 of the first batch has graph seed 5
    assert (tmp_path / "a/0002/gir.json").read_text() == (tmp_path / "b/0000/gir.json").read_text()
    a = load_oracle(tmp_path / "a/0002/oracle.pkl")
    b = load_oracle(tmp_path / "b/0000/oracle.pkl")
    for k in a["input"]:
        np.testing.assert_array_equal(a["input"][k], b["input"][k])


def test_each_run_draws_a_seed_and_prints_it(tmp_path, capsys):
    seeds = []
    for k in range(2):
        assert main(["generate", "--json", "n=1", "ui=plain", f"out={tmp_path / str(k)}", "mgen.max_nodes=4"]) == 0
        out, err = capsys.readouterr()
        seed = json.loads(out.strip().splitlines()[-1])["seed"]
        assert f"seed {seed}: rerun with mgen.seed={seed}" in err
        meta = json.loads((tmp_path / str(k) / "0000" / "meta.json").read_text())
        assert meta["seed"] == meta["policy"]["seed"] == seed
        seeds.append(seed)
    assert seeds[0] != seeds[1]
    assert main(["generate", "n=1", "ui=plain", f"out={tmp_path / 'again'}", "mgen.max_nodes=4",
                 f"mgen.seed={seeds[0]}"]) == 0
    assert (tmp_path / "again/0000/gir.json").read_text() == (tmp_path / "0/0000/gir.json").read_text()


def test_search_none_keeps_plain_values_and_records_it(tmp_path):
    assert _gen(tmp_path / "a", "mgen.seed=3", "search=none") == 0
    for f in sorted((tmp_path / "a").iterdir()):
        assert json.loads((f / "meta.json").read_text())["search"] is None


@pytest.mark.parametrize("arg, shown", [
    ("mgen.max_nodez=3", "max_nodez"), ("mgen.max_rank=7", "7"), ("mgen.dtypes=[float99]", "float99"),
    ("mgen.include=[NoSuchOp]", "NoSuchOp"), ("n=0", "n=0"), ("ui=fancy", "fancy"), ("bogus", "bogus"),
    ("search.time_ms=-5", "search.time_ms"), ("search=fast", "fast"), ("search.proxy=maybe", "maybe"),
])
def test_bad_config_fails_with_the_value(tmp_path, capsys, arg, shown):
    assert main(["generate", f"out={tmp_path}", arg]) == 2
    assert shown in capsys.readouterr().err


def test_crafted_oracle_pickle_is_refused(tmp_path):
    class Evil:
        def __reduce__(self):
            return (eval, ("__import__('os').system('touch " + str(tmp_path / "pwned") + "')",))

    path = tmp_path / "oracle.pkl"
    path.write_bytes(pickle.dumps({"input": {"x": Evil()}, "output": None}))
    with pytest.raises(UnsafePickleError, match="builtins.eval"):
        load_oracle(path)
    assert not (tmp_path / "pwned").exists()


@pytest.mark.slow
def test_cli_entry_point_and_ops_listing():
    r = subprocess.run([sys.executable, "-m", "nnfuzz.cli", "ops"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0
    for name in ("Conv2d", "Relu", "Reshape", "Softmax"):
        assert name in r.stdout
    r = subprocess.run([sys.executable, "-m", "nnfuzz.cli", "frobnicate"], capture_output=True, text=True)
    assert r.returncode == 2 and "generate" in r.stderr


@pytest.mark.slow
def test_import_nnfuzz_imports_no_framework():
    code = ("import sys, nnfuzz, nnfuzz.abstract, nnfuzz.generate, nnfuzz.gir; nnfuzz.abstract.load_builtin_ops(); "
            "bad=[m for m in ('torch','onnx','tensorflow','tvm','onnxruntime') if m in sys.modules]; print(bad)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip() == "[]", r.stdout + r.stderr
