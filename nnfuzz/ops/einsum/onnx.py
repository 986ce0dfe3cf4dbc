"""Einsum as one ONNX Einsum node. The equation's spelling is drawn among equivalent ones: its letters
as they are or renamed, a leading letter shared by every term written as an ellipsis, and the output
left implicit where ONNX's implicit rule (the letters that appear once, in alphabetical order) gives
the same output."""
from collections import Counter

from nnfuzz.materialize.onnx.lowering import onnx_lowers
from nnfuzz.ops.einsum import spec as S

RENAMINGS = {
    "as-is": lambda c: c,
    "shifted": lambda c: chr((ord(c) - ord("a") + 7) % 26 + ord("a")),
    "reversed": lambda c: chr(ord("z") - (ord(c) - ord("a"))),
}


def spell(equation: str, letters: str, ellipsis: bool, implicit: bool) -> str:
    ins, out = S.parse(equation)
    rename = RENAMINGS[letters]
    ins, out = ["".join(map(rename, t)) for t in ins], "".join(map(rename, out))
    if ellipsis:
        ins, out = ["..." + t[1:] for t in ins], "..." + out[1:]
    text = ",".join(ins)
    return text if implicit else f"{text}->{out}"


def implicit_output(terms) -> str:
    """The output ONNX gives an equation without '->' (letters only: no ellipsis here)."""
    counts = Counter("".join(terms))
    return "".join(sorted(c for c, n in counts.items() if n == 1))


@onnx_lowers(S.Einsum)
def _einsum(op, g, *xs):
    letters = g.draw("letters", list(RENAMINGS))
    lead = op.out_term[:1]
    shared = bool(lead) and all(t[:1] == lead for t in op.terms)
    ellipsis = shared and g.flip("ellipsis", "ellipsis", "letters")
    renamed = S.parse(spell(op.equation, letters, False, False))
    same = not ellipsis and implicit_output(renamed[0]) == renamed[1]
    implicit = same and g.flip("output", "implicit", "explicit")
    return g.op("Einsum", *xs, equation=spell(op.equation, letters, ellipsis, implicit))
