"""Hostile or corrupt migrated folders are refused with errors that name the bad value (as bug folders
are); the loader yields the migrated tests in priority order; the command's settings are checked."""
import json
import pickle
import shutil

import numpy as np
import pytest

from nnfuzz.cli import main
from nnfuzz.migrate.loader import migrated_tests
from nnfuzz.migrate.priority import read_order
from nnfuzz.triage.bugstore import load_bug
from nnfuzz.triage.folder import BugFolderError, UnsafePickleError
from nnfuzz.triage.meta import SCHEMA_VERSION


@pytest.fixture
def copy(corpus, tmp_path):
    """A private copy of one migrated folder, to damage."""
    dest = tmp_path / "test_abs"
    shutil.copytree(corpus / "onnx-node/test_abs", dest)
    return dest


def _edit_meta(folder, **migration):
    meta = json.loads((folder / "meta.json").read_text())
    meta["migration"].update(migration)
    (folder / "meta.json").write_text(json.dumps(meta))


@pytest.mark.parametrize("change, shown", [
    ({"source": "evil"}, "migration.source='evil'; valid sources"),
    ({"test": ""}, "migration.test is ''"),
    ({"attributes": [1, 2]}, "migration.attributes is [1, 2]"),
    ({"inputs": [{"name": "x", "dtype": "float32", "shape": [-3]}]}, "'shape': [-3]"),
    ({"undefined": "yes"}, "migration.undefined is 'yes'"),
])
def test_a_malformed_migration_record_is_refused_naming_the_value(copy, change, shown):
    _edit_meta(copy, **change)
    with pytest.raises(BugFolderError, match="re-run `nnfuzz migrate`|valid sources") as e:
        load_bug(copy)
    assert shown in str(e.value)


def test_a_migration_record_that_is_not_an_object_is_refused(copy):
    meta = json.loads((copy / "meta.json").read_text())
    (copy / "meta.json").write_text(json.dumps({**meta, "migration": "rm -rf /"}))
    with pytest.raises(BugFolderError, match="rm -rf"):
        load_bug(copy)


def test_a_newer_schema_an_unsafe_pickle_and_a_corrupt_model_are_refused(copy):
    meta = json.loads((copy / "meta.json").read_text())
    assert meta["schema"] == SCHEMA_VERSION
    newer = SCHEMA_VERSION + 1
    (copy / "meta.json").write_text(json.dumps({**meta, "schema": newer}))
    with pytest.raises(BugFolderError, match=f"schema {newer}.*upgrade nnfuzz"):
        load_bug(copy)
    (copy / "meta.json").write_text(json.dumps(meta))
    good = (copy / "oracle.pkl").read_bytes()
    (copy / "oracle.pkl").write_bytes(pickle.dumps({"input": {}, "output": shutil.rmtree}))
    with pytest.raises(UnsafePickleError, match="shutil"):
        load_bug(copy)
    (copy / "oracle.pkl").write_bytes(good)
    (copy / "model.onnx").write_bytes(b"\x08\x07garbage")
    with pytest.raises(BugFolderError, match="not a valid ONNX model"):
        load_bug(copy)


def test_a_migrated_model_is_not_rebuilt_from_a_graph(copy):
    with pytest.raises(BugFolderError, match=r"migrated library test \('test_abs'\)"):
        load_bug(copy).meta.export_spec()


def test_the_loader_yields_the_tests_in_priority_order(corpus):
    order = read_order(corpus)
    got = list(migrated_tests(corpus))
    assert [p.rec["migration"]["folder"] for p in got] == order
    assert [p.seed for p in got] == list(range(len(order)))
    first = load_bug(corpus / order[0])
    assert got[0].model_bytes == first.model_bytes and got[0].gir_text is None
    assert all(np.array_equal(got[0].reference.input[k], v) for k, v in first.oracle["input"].items())
    undefined = [p for p in got if p.rec["migration"]["test"] == "test_reduce_max_empty_set"]
    assert len(undefined) == 1 and undefined[0].reference.output is None


def test_the_loader_refuses_a_priority_file_pointing_outside(corpus, tmp_path):
    out = tmp_path / "m"
    out.mkdir()
    (out / "priority.json").write_text(json.dumps({"tests": [{"folder": "../../etc"}]}))
    with pytest.raises(BugFolderError, match=r"outside .*\.\./\.\./etc"):
        list(migrated_tests(out))
    (out / "priority.json").write_text("{not json")
    with pytest.raises(BugFolderError, match="missing or malformed.*re-run it"):
        list(migrated_tests(out))


@pytest.mark.parametrize("args, shown", [
    (["source=keras"], "source='keras'; valid sources: ['onnx-node', 'torch-opinfo']"),
    (["source=torch-opinfo", "migrate.max_per_op=0"], "migrate.max_per_op=0 must be an integer >= 1"),
    (["source=torch-opinfo", "migrate.dtypes=[float32,complex64]"], "complex64"),
    (["source=torch-opinfo", "migrate.opset=3"], "export.opset=3"),
])
def test_bad_settings_stop_the_command_showing_the_value(capsys, tmp_path, args, shown):
    assert main(["migrate", f"out={tmp_path / 'o'}", *args]) == 2
    assert shown in capsys.readouterr().err


def test_migrating_a_source_twice_into_one_folder_is_refused(capsys, corpus):
    assert main(["migrate", f"out={corpus}", "source=onnx-node", "migrate.ops=[Abs]"]) == 2
    assert "already holds migrated tests" in capsys.readouterr().err


def test_repro_of_a_migrated_test_asks_for_a_system(capsys, corpus):
    assert main(["repro", str(corpus / "onnx-node/test_abs")]) == 2
    assert "migrated test no system has run yet" in capsys.readouterr().err


@pytest.mark.slow
def test_repro_runs_a_migrated_test_on_a_named_system_through_the_sandbox(capsys, corpus):
    """No bug is recorded, so a passing run is "does not reproduce" (exit 1) with verdict pass."""
    assert main(["repro", "--json", str(corpus / "torch-opinfo/nn.functional.conv2d_float32_0"), "backend=ort-cpu"]) == 1
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert last["verdict"] == "pass" and last["backend"] == "ort-cpu"


def test_a_bug_found_with_a_migrated_test_saves_and_loads_without_a_graph(corpus, tmp_path):
    """What a campaign would save for a migrated test: no gir.json, the migration record in meta.json."""
    from nnfuzz.triage.bugstore import BugStore
    from nnfuzz.triage.meta import BugMeta

    p = next(migrated_tests(corpus))
    meta = BugMeta(system="ort-cpu", version="x", symptom="crash", version_id="x", stage="compile",
                   ops=p.rec["ops"], opset=p.rec["opset"], migration=p.rec["migration"])
    path = BugStore(tmp_path / "bugs").save(model_bytes=p.model_bytes, gir_text=None, oracle=p.reference.to_dict(),
                                            meta=meta, err_log="boom")
    bug = load_bug(path)
    assert not (path / "gir.json").exists() and bug.gir_text is None
    assert bug.meta.migration["test"] == p.rec["migration"]["test"] and bug.meta.migration["folder"] == p.rec["migration"]["folder"]
