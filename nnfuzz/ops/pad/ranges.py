"""Value-range rules of the pads (see nnfuzz/abstract/ranges.py)."""
from nnfuzz.abstract.ranges import value_range
from nnfuzz.ops.pad import spec as P


@value_range(P.ConstantPad, P.ReflectPad, P.ReplicatePad, P.CircularPad)
def _pad(op, rs, ts):
    r = rs[0] if all(p >= 0 for p in op.pads) else rs[0].interval()
    if isinstance(op, P.ConstantPad) and any(p > 0 for p in op.pads):
        return r.hull(float(op.value))
    return r
