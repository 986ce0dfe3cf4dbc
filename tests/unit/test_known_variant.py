"""Kept bugs steer campaigns that run the same kernels (Backend.probe_variant), and a full-integer (int8) test's
inconsistency signs by its one op: tflite-cpu's int8 DIV fault (bugs/kept/0107) was saved 3 times by one
2-minute campaign under 3 signatures, and as a trigger it would have steered float32 campaigns off Div."""
import dataclasses
from pathlib import Path

from nnfuzz.triage.bugstore import load_bug
from nnfuzz.triage.dedup import signature
from nnfuzz.triage.known import load_known, variant_of

KEPT = Path(__file__).parents[2] / "bugs" / "kept"


def test_an_int8_folder_steers_int8_campaigns_alone():
    kept = load_known([KEPT], kept=False)
    int8 = {t["bug"] for t in kept.triggers("tflite-cpu", variant_of("tflite-cpu", {"quantize": "int8"}))}
    plain = {t["bug"] for t in kept.triggers("tflite-cpu", variant_of("tflite-cpu", {}))}
    assert {p for p in int8 if p.endswith(("0106", "0107"))} and not any(p.endswith(("0106", "0107")) for p in plain)
    assert any(p.endswith("0016") for p in plain) and not any(p.endswith("0016") for p in int8)
    assert variant_of("ort-cpu", {"opt_level": "basic"}) == variant_of("ort-cpu", {}) == ""  # its kernels alike


def test_an_int8_inconsistency_signs_by_its_op_whatever_its_numbers():
    bug = load_bug(KEPT / "0107")
    other = dataclasses.replace(bug.meta, summary="v0: 59/3120 int8 values more than 1 step(s) from the quantized "
                                "reference (max 136 steps: 127 where the reference gives -9..-9; scale 0.2, zero point -9)")
    assert signature(bug.meta) == signature(other) == "tflite-cpu | inconsistency | int8 | Div | values"
