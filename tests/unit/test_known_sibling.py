"""A kept bug of a system on one device is known on its other device where the fault is in the part both
share: a crash while compiling, signed alike but for the system (triage/known.py KnownBugs._on_sibling)."""
import dataclasses
from pathlib import Path

from nnfuzz.triage.dedup import signature
from nnfuzz.triage.known import Folder, KnownBugs, load_known
from nnfuzz.triage.meta import read_meta

CASE = Path(__file__).parents[1] / "cases" / "gpu-errors" / "tvm-gpu-reshape-shape"


def test_a_tvm_gpu_frontend_crash_is_the_kept_tvm_cpu_folder_with_its_signature():
    meta, err = read_meta(CASE / "meta.json", required=()), (CASE / "err.log").read_text()
    sig = signature(meta, err)
    assert sig.startswith("tvm-gpu | crash | compile | TypeError | Reshape | ")
    assert load_known().match(meta, sig, err).endswith("bugs/kept/0007")


def test_only_a_compile_crash_is_matched_across_devices_and_only_within_one_system():
    meta = read_meta(CASE / "meta.json", required=())
    cpu = "tvm-cpu | crash | compile | TypeError | Reshape | m"
    known = KnownBugs(folders=(Folder("bugs/kept/0007", "tvm-cpu", cpu),))
    gpu = "tvm-gpu" + cpu[len("tvm-cpu"):]
    assert known.match(meta, gpu) == "bugs/kept/0007"
    assert known.match(dataclasses.replace(meta, stage="execute"), gpu) is None  # the device's own kernels
    assert known.match(dataclasses.replace(meta, symptom="inconsistency"), gpu) is None
    other = KnownBugs(folders=(Folder("bugs/kept/0007", "ort-cpu", "ort-cpu" + cpu[len("tvm-cpu"):]),))
    assert other.match(meta, gpu) is None  # another system's fault, however alike its words
