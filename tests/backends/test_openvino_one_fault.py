"""One fault, one signature, however a test shows it (tests/cases/openvino-one-fault: folders of a 90 s
openvino-cpu campaign with ``fuzz.dynamic=1``, OpenVINO 2026.4.1, judged in docs/dynamic-findings.md).

- bugs/kept/0011's reduce, given the wrong shape (`[]` for a reduce over some axes), showed as an
  inconsistency and as crashes of the op after it: a Slice's and a Pad's shape inference, a Conv's
  conversion. Each crash was signed by the consumer and its message (the Pad's prefix was run up to an
  earlier Pad, the Conv's charged to an Add 1.25 ulps off before the reduce): 4 signatures.
- bugs/kept/0066's kernel-1 strided Conv with pads, given the wrong output length after another op,
  was charged to whatever op produced its input (exposing that input hides the fault): BatchNormalization,
  DequantizeLinear, or shown on its own as ConvInteger: 3 signatures.

``nnfuzz dedup --recheck`` on the folders and the two kept ones signs each fault once, with the kept
folder's signature, and keeps the two faults apart."""
import json
import shutil
from pathlib import Path

import pytest

from nnfuzz.cli import main
from nnfuzz.triage.bugstore import kept_store, load_bug

pytestmark = pytest.mark.slow
CASES = Path(__file__).parents[1] / "cases" / "openvino-one-fault"
REDUCE = "openvino-cpu | inconsistency | Reduce* | shape"
CONV = "openvino-cpu | inconsistency | Conv/ConvInteger/QLinearConv | shape"
FAULTS = {"kept-0011": REDUCE, "reduce-then-slice": REDUCE, "reduce-then-conv": REDUCE, "reduce-then-pad": REDUCE,
          "kept-0066": CONV, "dq-then-conv": CONV, "convinteger": CONV}


@pytest.fixture(scope="module")
def rechecked(tmp_path_factory):
    """The folders in one store, rechecked: {case name: its folder}."""
    pytest.importorskip("openvino")
    kept = kept_store()
    if kept is None:
        pytest.skip("not a checkout: no bugs/kept/")
    store = tmp_path_factory.mktemp("store")
    sources = {"kept-0011": kept / "0011", "kept-0066": kept / "0066",
               **{name: CASES / name for name in FAULTS if not name.startswith("kept-")}}
    folders = {}
    for i, (name, src) in enumerate(sorted(sources.items())):
        folders[name] = store / f"{i:04d}"
        shutil.copytree(src, folders[name])
    assert main(["dedup", str(store), "--recheck"]) == 0
    return store, folders


def test_each_fault_gets_one_signature_the_kept_folders(rechecked):
    store, folders = rechecked
    index = json.loads((store / "index.json").read_text())
    sigs = {row["id"]: row["signature"] for row in index["rows"]}
    got = {name: sigs[folder.name] for name, folder in folders.items()}
    assert got == FAULTS, got
    assert len(index["groups"]) == 2  # and the two faults stay apart


def test_the_crashes_are_charged_to_the_reduce_before_the_op_that_failed(rechecked):
    _, folders = rechecked
    for name, named in (("reduce-then-slice", "Slice"), ("reduce-then-conv", "Conv"), ("reduce-then-pad", "Pad")):
        meta = load_bug(folders[name]).meta
        root = meta.root_cause
        assert meta.symptom == "crash" and meta.extra["recheck"]["outcome"] == "reproduces", (name, meta.extra)
        assert (root["method"], root["kind"], root["named"]) == ("prefix", "shape", named), (name, root)
        assert root["system_op"].startswith("Reduce"), (name, root)


def test_the_conv_is_charged_not_the_op_that_feeds_it(rechecked):
    _, folders = rechecked
    for name in ("kept-0066", "dq-then-conv"):
        root = load_bug(folders[name]).meta.root_cause
        assert (root["method"], root["system_op"], root["kind"]) == ("truncate", "Conv", "shape"), (name, root)
