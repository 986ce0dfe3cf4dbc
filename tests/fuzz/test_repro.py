"""`nnfuzz repro`: exit codes a script can use, standalone scripts, and hostile or broken bug folders."""
import json
from pathlib import Path
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest
from report_helpers import imports_of

from nnfuzz.cli import main
from nnfuzz.generate import GenPolicy, generate_graph
from nnfuzz.materialize.model import build_model
from nnfuzz.triage.bugstore import BugStore, load_bug
from nnfuzz.triage.cpu import this_cpu
from nnfuzz.triage.folder import dump_oracle
from nnfuzz.triage.meta import BugMeta
from nnfuzz.verdict import compare

pytest.importorskip("onnxruntime")


def _bug(tmp_path, *, symptom="inconsistency", corrupt=True, dtype="float32", ops=("Relu", "Add", "Sigmoid"),
         found=None):
    """A bug folder for a real generated model whose recorded reference is off by one (so the real
    ORT output disagrees with it), or exact (``corrupt=False``)."""
    gir = generate_graph(GenPolicy(max_nodes=3, dtypes=[dtype], include=list(ops)), seed=3)
    model = build_model(gir, 3)
    oracle = model.oracle.to_dict()
    if corrupt:  # a reference the real outputs disagree with (twins dropped: they would vouch for ORT)
        oracle["output"] = {k: v + 1 for k, v in oracle["output"].items()}
        oracle["output_f64"] = oracle["output_f64_jitter"] = None
    # as a campaign records it: the disagreement's summary (the true outputs agree with torch at every
    # node, so localization finds no divergent node and the signature is "unlocalized | <summary>")
    summary = compare(oracle["output"], model.oracle.output).summary if corrupt else "test bug"
    meta = BugMeta(system="ort-cpu", version="x", symptom=symptom, version_id="x", stage="verify", summary=summary,
                   found=found)
    return BugStore(tmp_path / "bugs").save(model_bytes=model.onnx.SerializeToString(), gir_text=gir.dumps(),
                                            oracle=oracle, meta=meta, err_log="test")


@pytest.mark.slow
def test_exit_codes(tmp_path, capsys):
    assert main(["repro", "--json", str(_bug(tmp_path))]) == 0                                  # reproduces
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["reproduces"] is True
    assert main(["repro", str(_bug(tmp_path, corrupt=False))]) == 1                   # passes now
    assert main(["repro", str(_bug(tmp_path, symptom="crash"))]) == 3                 # other symptom
    assert main(["repro", str(_bug(tmp_path)), "backend=tvm-cpu"]) == 0  # another system: the symptom is compared
    assert main(["repro", str(tmp_path / "nope")]) == 2
    assert main(["repro"]) == 2
    assert main(["repro", str(_bug(tmp_path)), "--frobnicate"]) == 2


@pytest.mark.slow
def test_a_bug_that_passes_on_another_cpu_says_how_its_vector_isa_differs(tmp_path, capsys):
    here = this_cpu()
    other = {"at": "2026-11-27T00:00:00Z", "cpu": {"model": "Xeon Max", "isa": [*here["isa"], "amx_tile"]}}
    assert main(["repro", "--json", str(_bug(tmp_path, corrupt=False, found=other))]) == 1
    shown = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert "Xeon Max" in shown["other_cpu"] and "lacks amx_tile" in shown["other_cpu"], shown
    assert shown["other_cpu"] in shown["message"]
    same = {"at": "2026-11-27T00:00:00Z", "cpu": here}
    assert main(["repro", "--json", str(_bug(tmp_path, corrupt=False, found=same))]) == 1
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["other_cpu"] == ""


@pytest.mark.slow
def test_standalone_script_reproduces_without_nnfuzz(tmp_path):
    bug = _bug(tmp_path)
    assert main(["repro", str(bug), "--script"]) == 0
    script = bug / "repro_ort-cpu.py"
    text = script.read_text()
    assert imports_of(text) <= ALLOWED_IMPORTS, "the script must import only numpy, onnx and the system"
    shutil.copy(script, tmp_path / "alone.py")
    r = subprocess.run([sys.executable, str(tmp_path / "alone.py")], capture_output=True, text=True,
                       cwd=tmp_path, timeout=120)
    # the recorded disagreement shows, in words, not as a traceback
    assert r.returncode == 1 and r.stdout.startswith("reproduced: the outputs differ") and not r.stderr, r.stderr
    assert "values off" in r.stdout, r.stdout
    good = _bug(tmp_path, corrupt=False)
    assert main(["repro", str(good), "--script", "backend=tvm-cpu"]) == 0
    r = subprocess.run([sys.executable, str(good / "repro_tvm-cpu.py")], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "not reproduced" in r.stdout, r.stderr


@pytest.mark.slow
def test_openvino_script_reads_a_bfloat16_output_as_bfloat16(tmp_path):
    """OpenVINO hands a bfloat16 output to Python as its bits in a float16 array: the script reads them
    back as bfloat16, so an exact bfloat16 model is "not reproduced" (not a dtype mismatch, nor values
    compared as float16)."""
    pytest.importorskip("openvino")
    good = _bug(tmp_path, corrupt=False, dtype="bfloat16", ops=("Relu", "Neg"))
    assert "bfloat16" in (good / "gir.json").read_text()
    assert main(["repro", str(good), "--script", "backend=openvino-cpu"]) == 0
    r = subprocess.run([sys.executable, "-I", str(good / "repro_openvino-cpu.py")], capture_output=True, text=True,
                       cwd=tmp_path, timeout=300)
    assert r.returncode == 0 and "not reproduced" in r.stdout, r.stdout + r.stderr


def test_hostile_and_broken_folders_are_refused(tmp_path, capsys):
    bug = _bug(tmp_path)

    class Evil:
        def __reduce__(self):
            return (exec, ("open(" + repr(str(tmp_path / "pwned")) + ", 'w').write('x')",))

    (bug / "oracle.pkl").write_bytes(pickle.dumps({"input": Evil(), "output": None}))
    assert main(["repro", str(bug)]) == 2
    assert "refusing" in capsys.readouterr().err and not (tmp_path / "pwned").exists()
    bug2 = _bug(tmp_path)
    (bug2 / "meta.json").write_text("{not json")
    assert main(["repro", str(bug2)]) == 2
    bug3 = _bug(tmp_path)
    (bug3 / "model.onnx").unlink()
    assert main(["repro", str(bug3)]) == 2
    assert "model.onnx" in capsys.readouterr().err
    bug4 = _bug(tmp_path)
    (bug4 / "oracle.pkl").write_bytes(dump_oracle({"input": {"x": [1, 2]}, "output": None}))
    assert main(["repro", str(bug4)]) == 2
    assert load_bug(_bug(tmp_path)).oracle["input"]  # a good one still loads
    assert isinstance(next(iter(load_bug(_bug(tmp_path)).oracle["input"].values())), np.ndarray)


def test_a_model_that_is_not_onnx_is_a_malformed_folder(tmp_path, capsys):
    bug = _bug(tmp_path)
    (bug / "model.onnx").write_bytes(b"\x08\x07garbage, not a protobuf of an ONNX model" * 8)
    assert main(["repro", str(bug)]) == 2
    err = capsys.readouterr().err
    assert "model.onnx is not a valid ONNX model" in err, err


@pytest.mark.slow
def test_meta_schema_versions(tmp_path, capsys):
    from nnfuzz.triage.meta import SCHEMA_VERSION

    bug = _bug(tmp_path)
    meta = json.loads((bug / "meta.json").read_text())
    assert meta["schema"] == SCHEMA_VERSION
    old = {k: v for k, v in meta.items() if k != "schema"}  # folders written before the schema key
    old["hand_added_note"] = "kept"
    (bug / "meta.json").write_text(json.dumps(old))
    loaded = load_bug(bug).meta
    assert loaded.schema == 1 and loaded.system == "ort-cpu" and loaded.extra == {"hand_added_note": "kept"}
    assert loaded.to_json()["hand_added_note"] == "kept"
    assert main(["repro", str(bug)]) == 0
    (bug / "meta.json").write_text(json.dumps({**meta, "schema": SCHEMA_VERSION + 1}))
    assert main(["repro", str(bug)]) == 2
    err = capsys.readouterr().err
    assert f"schema {SCHEMA_VERSION + 1}" in err and f"reads meta.json schema {SCHEMA_VERSION}" in err, err


@pytest.mark.parametrize("export, shown", [
    ({"via": "evil", "opset": 17}, "export.via='evil'"),
    ({"via": "onnx", "opset": "__import__('os')"}, "malformed"),
    ({"via": "onnx", "opset": 99}, "export.opset=99"),
    ("onnx", "must be an object"),
])
def test_a_malformed_export_record_is_refused_with_what_is_wrong(tmp_path, capsys, export, shown):
    bug = _bug(tmp_path)
    meta = json.loads((bug / "meta.json").read_text())
    (bug / "meta.json").write_text(json.dumps({**meta, "export": export}))
    assert main(["repro", str(bug)]) == 2
    err = capsys.readouterr().err
    assert shown in err, err



@pytest.mark.slow
def test_a_folder_saved_unlocalized_reproduces(tmp_path, monkeypatch):
    """A campaign whose time bound cut the localization short saves no divergent node (signature
    "unlocalized | <summary>"); its replay is compared on that footing instead of localizing anew, which
    would name the first node and call the very same failure "fails differently". The fault backend
    (tests/fuzz/fault_backend.py) computes every model wrongly, so a new localization would find a node."""
    from pathlib import Path

    from nnfuzz.fuzz.sandbox import Sandbox
    from nnfuzz.triage.repro import REPRODUCED, replay
    from nnfuzz.verdict import DEFAULT_TOLERANCES

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    gir = generate_graph(GenPolicy(max_nodes=3, dtypes=["float32"], include=["Relu", "Add", "Sigmoid"]), seed=3)
    model = build_model(gir, 3)
    data = model.onnx.SerializeToString()
    with Sandbox("fault-cpu", {"always": "wrong"}, backend_path="fault_backend:FaultBackend") as sandbox:
        sandbox.start()
        got = sandbox.run(data, model.oracle.input).outputs
        summary = compare(model.oracle.output, got).summary
        meta = BugMeta(system="fault-cpu", version="1.0-fault", symptom="inconsistency", version_id="x",
                       stage="verify", summary=summary, first_divergent_node=None, blame="unlocalized")
        folder = BugStore(tmp_path / "bugs").save(model_bytes=data, gir_text=gir.dumps(),
                                                  oracle=model.oracle.to_dict(), meta=meta, err_log=summary)
        r = replay(load_bug(folder), sandbox, DEFAULT_TOLERANCES)
    assert r.outcome == REPRODUCED, r.describe("inconsistency")


ALLOWED_IMPORTS = {"base64", "ml_dtypes", "numpy", "onnx", "onnxruntime", "tvm", "openvino"}


@pytest.mark.slow
def test_script_of_a_small_model_is_readable_and_report_uses_the_tracker_template(tmp_path, capsys):
    """A reduced-size model is written as onnx.helper calls with literal inputs (no base64 blob), the script
    imports only numpy, onnx and the system, reproduces on its own, and report.md follows ORT's form."""
    bug = _bug(tmp_path)
    assert main(["repro", str(bug), "--report"]) == 0
    text = (bug / "repro_ort-cpu.py").read_text()
    assert "helper.make_node('" in text and "MODEL = base64" not in text and "'x': np.array([" not in text.lower()
    assert "INPUTS = {\n    '" in text and "np.array([" in text
    assert imports_of(text) <= ALLOWED_IMPORTS, imports_of(text)
    r = subprocess.run([sys.executable, "-I", "-c", text], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.returncode == 1 and r.stdout.startswith("reproduced:"), r.stdout + r.stderr  # the disagreement shows
    report = (bug / "report.md").read_text()
    for heading in ("### Describe the issue", "### To reproduce", "### ONNX Runtime Version or Commit ID",
                    "### Execution Provider"):
        assert heading in report
    assert text.strip() in report and "Default CPU" in report


def test_script_of_a_large_model_embeds_it(tmp_path):
    from nnfuzz.triage.readable import READABLE_NODES
    from nnfuzz.triage.script import model_block

    gir = generate_graph(GenPolicy(max_nodes=READABLE_NODES + 5, dtypes=["float32"], include=["Relu", "Neg"]), seed=1)
    data = build_model(gir, 1).onnx.SerializeToString()
    assert model_block(data).startswith("MODEL = base64.b64decode(")


def test_repro_gives_a_gradient_bug_the_timeout_its_campaign_allowed(tmp_path, monkeypatch):
    """oracle=grad's runs compile a forward and a backward graph, and its campaign allows 3x fuzz.test_timeout
    for each (Oracle.timeout_scale); repro gives a gradient bug the same, a forward-only bug 1x."""
    import nnfuzz.fuzz.sandbox as sandbox_module

    seen = []

    class Refused(Exception):
        pass

    class Recording:
        def __init__(self, backend, options, *, test_timeout, **_):
            seen.append(test_timeout)
            raise Refused

    monkeypatch.setattr(sandbox_module, "Sandbox", Recording)
    for kept in ("0082", "0000"):  # inductor-cpu's float16 amax backward (oracle=grad); ORT's Shrink (reference)
        with pytest.raises(Refused):
            main(["repro", str(Path(__file__).parents[2] / "bugs" / "kept" / kept), "fuzz.test_timeout=7"])
    assert seen == [21.0, 7.0]


@pytest.mark.slow
def test_a_backend_option_given_goes_over_the_recorded_one(tmp_path):
    """`repro FOLDER backend.options.opt_level=disable` replays at that level: it used to keep the recorded
    options unless `backend=` was given too, and said "reproduces" at level all. bugs/kept/0099 is wrong
    from level extended on only."""
    bug = tmp_path / "0099"
    shutil.copytree(Path(__file__).parents[2] / "bugs" / "kept" / "0099", bug)
    assert main(["repro", str(bug)]) == 0
    assert main(["repro", str(bug), "backend.options.opt_level=disable"]) == 1
    assert main(["repro", str(bug), "backend.options.opt_level=extended"]) == 0
