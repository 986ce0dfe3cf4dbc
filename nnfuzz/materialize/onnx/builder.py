"""OnnxGraph: what an ONNX lowering writes into. One per model; it knows the target opset, draws the
spelling of each node from the model's randomness, and checks each node's types against the ONNX
schema of that opset as it is written.

A lowering is ``fn(op, g, *input_names) -> name | [names]`` (see ``lowering.py``): it calls ``g.op``
for nodes, ``g.const`` / ``g.ints`` for constants, ``g.axis`` for an axis, ``g.shape_operand`` for a
shape-like operand, and ``g.draw`` for any other choice between equivalent spellings. With no RNG
(``spelling="canonical"``) every draw takes the first option, so a lowering lists its plainest
spelling first.
"""
from __future__ import annotations

import hashlib
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from onnx import NodeProto, TensorProto, defs, helper, numpy_helper, shape_inference

from nnfuzz.abstract.dtype import DType
from nnfuzz.errors import ControlSignal, OpDefinitionError


class NotAtOpset(ControlSignal):
    """A node cannot be written at the target opset (a type or attribute it needs came later, or a
    spelling was removed): the model is built again at ``needs`` or above (``None``: another opset)."""

    def __init__(self, what: str, opset: int, needs: Optional[int] = None):
        super().__init__(f"{what} cannot be written at opset {opset}" + (f" (needs {needs})" if needs else ""))
        self.what, self.opset, self.needs = what, opset, needs


_OUT_TYPES: Dict[tuple, Optional[tuple]] = {}  # (op_type, domain, opset, in elem types, typing attrs) -> out types


_REQUIRED: Dict[tuple, Tuple[str, ...]] = {}


def _typing_attrs(op_type: str, opset: int, domain: str) -> Tuple[str, ...]:
    """The attributes type inference of ``op_type`` at ``opset`` reads: those that set a type, and those
    the schema requires (Concat's axis, DepthToSpace's blocksize), without which it rejects the node."""
    key = (op_type, opset, domain)
    if key not in _REQUIRED:
        try:
            attrs = defs.get_schema(op_type, opset, domain).attributes
            required = {k for k, a in attrs.items() if a.required}
        except defs.SchemaError:
            required = set()
        _REQUIRED[key] = tuple(sorted(required | {"to", "dtype", "output_datatype"}))
    return _REQUIRED[key]


def _schema_out_types(op_type: str, opset: int, in_types: Tuple[int, ...], attrs: dict, n_out: int,
                      domain: str = "") -> Optional[Tuple[int, ...]]:
    """The output element types ONNX's schema gives ``op_type`` at ``opset`` for inputs of ``in_types``
    (0: omitted), or None when the schema rejects them. Cached: the hot path of every model."""
    typing = tuple((k, tuple(attrs[k]) if isinstance(attrs[k], list) else attrs[k])
                   for k in _typing_attrs(op_type, opset, domain) if k in attrs)
    key = (op_type, domain, opset, in_types, typing, n_out)
    if key in _OUT_TYPES:
        return _OUT_TYPES[key]
    try:
        schema = defs.get_schema(op_type, opset, domain)
    except defs.SchemaError:
        _OUT_TYPES[key] = None
        return None
    ins = [f"i{k}" if t else "" for k, t in enumerate(in_types)]
    outs = [f"o{k}" for k in range(n_out)]
    node = helper.make_node(op_type, ins, outs, domain=domain, **{k: list(v) if isinstance(v, tuple) else v for k, v in typing})
    known = {f"i{k}": helper.make_tensor_type_proto(t, None) for k, t in enumerate(in_types) if t}
    try:
        got = shape_inference.infer_node_outputs(schema, node, known)
        res = tuple(got[o].tensor_type.elem_type if o in got else 0 for o in outs)
    except Exception:  # noqa: BLE001 - onnx raises ValidationError/InferenceError (and others) for a type it rejects
        res = None
    _OUT_TYPES[key] = res
    return res


def first_opset_with(op_type: str, in_types: Tuple[int, ...], attrs: dict, n_out: int, after: int, last: int,
                     domain: str = "") -> Optional[int]:
    """The first opset in (after, last] whose schema of ``op_type`` takes ``in_types``, or None."""
    for o in range(after + 1, last + 1):
        if _schema_out_types(op_type, o, in_types, attrs, n_out, domain) is not None:
            return o
    return None


_ATTRS: Dict[tuple, object] = {}  # (name, typed value) -> AttributeProto: most attributes repeat (axis=0, to=1)


def make_node(op_type: str, inputs, outputs, name: str, domain: str = "", **attrs) -> NodeProto:
    """``onnx.helper.make_node``, with each plain attribute built once per process (the hot path of
    every model: helper's own checks cost about three times the rest)."""
    node = NodeProto()
    node.op_type, node.name = op_type, name
    if domain:
        node.domain = domain
    node.input.extend(inputs)
    node.output.extend(outputs)
    for k in sorted(attrs):
        v = attrs[k]
        if isinstance(v, TensorProto):
            node.attribute.append(helper.make_attribute(k, v))
            continue
        key = (k, tuple((type(x), x) for x in v) if isinstance(v, (list, tuple)) else (type(v), v))
        a = _ATTRS.get(key)
        if a is None:
            a = _ATTRS[key] = helper.make_attribute(k, v)
        node.attribute.append(a)
    return node


class Draws:
    """The spelling draws of one instruction: the k-th is read from a hash of (seed, instruction, k), so
    they are fixed by the instruction's name whatever else the graph holds (cheaper to start than a
    numpy Generator, which only array draws, ``size=``, make)."""

    def __init__(self, seed: int, where: str):
        self._key, self._k, self._np = f"{seed}/{where}/".encode(), 0, None

    def integers(self, lo: int, hi: Optional[int] = None, size=None):
        """A draw from [lo, hi) (from [0, lo) without ``hi``), like numpy's ``Generator.integers``."""
        lo, hi = (0, lo) if hi is None else (lo, hi)
        if size is not None:
            if self._np is None:
                self._np = np.random.default_rng(int.from_bytes(hashlib.blake2b(self._key, digest_size=8).digest(), "little"))
            return self._np.integers(lo, hi, size=size)
        self._k += 1
        h = hashlib.blake2b(self._key + str(self._k).encode(), digest_size=8).digest()
        return lo + int.from_bytes(h, "little") % (hi - lo)


class OnnxGraph:
    """Nodes, initializers and value types of an ONNX graph being written at ``opset``."""

    def __init__(self, opset: int, rng: Optional[Draws] = None):
        self.opset = opset
        self.last_opset = defs.onnx_opset_version()
        self.rng = rng
        self.nodes: List = []
        self.initializers: List = []
        self.types: Dict[str, Tuple[DType, Optional[tuple]]] = {}
        self.spellings: Dict[str, Dict[str, str]] = {}  # per GraphIR instruction (its first output): key -> choice
        self._where: Optional[str] = None  # the instruction being lowered
        self._op: Optional[str] = None     # its op's name (the spellings to avoid are per op)
        self.avoid: frozenset = frozenset()  # (op, key, choice) not drawn while another choice exists
        self._n = 0

    # ---- names and types -------------------------------------------------------------------------
    def fresh(self, hint: str = "t") -> str:
        self._n += 1
        return f"_{hint}{self._n}"

    def dtype(self, name: str) -> DType:
        return self.types[name][0]

    def shape(self, name: str) -> Optional[tuple]:
        """The static shape of a value, when known (every GraphIR var; temps where the lowering said)."""
        return self.types[name][1]

    def rank(self, name: str) -> int:
        return len(self.types[name][1])

    def declare(self, name: str, dtype: DType, shape: Optional[Sequence[int]]) -> None:
        self.types[name] = (dtype, None if shape is None else tuple(int(d) for d in shape))

    # ---- spelling draws --------------------------------------------------------------------------
    def draw(self, key: str, options: Sequence):
        """One of ``options`` (the first when spellings are canonical), recorded for this instruction."""
        drawn = len(options) > 1
        if self.avoid and self._op is not None and drawn:  # known bugs' spellings (generate/steer.py)
            options = [o for o in options if (self._op, key, str(o)) not in self.avoid
                       and ("*", key, str(o)) not in self.avoid] or options
        pick = options[0] if self.rng is None or len(options) == 1 else options[int(self.rng.integers(len(options)))]
        if self._where is not None and drawn:
            rec = self.spellings.setdefault(self._where, {})
            k, j = key, 1
            while k in rec:
                j += 1
                k = f"{key}{j}"
            rec[k] = str(pick)
        return pick

    def flip(self, key: str, yes: str, no: str) -> bool:
        """A two-way draw, True for ``yes`` (the canonical one is ``no``)."""
        return self.draw(key, [no, yes]) == yes

    def need_opset(self, n: int, what: str) -> None:
        """Raise NotAtOpset unless the target opset is at least ``n``."""
        if self.opset < n:
            raise NotAtOpset(what, self.opset, n)

    # ---- nodes -----------------------------------------------------------------------------------
    def op(self, op_type: str, *inputs: Optional[str], outputs: int = 1, shape=None, domain: str = "", **attrs):
        """Write a node and return its output name (a list when ``outputs`` > 1). ``None`` as an input
        omits that optional input. ``shape`` records the output's static shape for later draws."""
        ins = ["" if x is None else x for x in inputs]
        while ins and ins[-1] == "":
            ins.pop()
        in_types = tuple(self.dtype(x).onnx() if x else 0 for x in ins)
        attrs = {k: v for k, v in attrs.items() if v is not None}
        out_types = _schema_out_types(op_type, self.opset, in_types, attrs, outputs, domain)
        if out_types is None:
            what = f"{op_type}({', '.join(str(self.dtype(x)) if x else '-' for x in ins)})"
            raise NotAtOpset(what, self.opset,
                             first_opset_with(op_type, in_types, attrs, outputs, self.opset, self.last_opset, domain))
        names = [self.fresh(op_type[:4].lower()) for _ in range(outputs)]
        self.nodes.append(make_node(op_type, ins, names, f"{op_type}_{len(self.nodes)}", domain, **attrs))
        for k, (n, t) in enumerate(zip(names, out_types)):
            if t:
                self.types[n] = (DType.parse(t), tuple(shape) if shape is not None and k == 0 else None)
        return names[0] if outputs == 1 else names

    def const(self, value, dtype: Optional[DType] = None, hint: str = "c") -> str:
        """A constant tensor: an initializer or a ``Constant`` node (drawn)."""
        arr = np.asarray(value, dtype=(dtype.numpy() if dtype is not None else None))
        dt = dtype or DType.parse(arr.dtype)
        tensor = numpy_helper.from_array(arr, self.fresh(hint))
        if self.draw("const", ["initializer", "Constant"]) == "initializer":
            self.initializers.append(tensor)
            name = tensor.name
        else:
            name = self.fresh(hint)
            self.nodes.append(make_node("Constant", [], [name], f"Constant_{len(self.nodes)}", value=tensor))
        self.declare(name, dt, arr.shape)
        return name

    def ints(self, values: Sequence[int], hint: str = "i") -> str:
        """A 1-D int64 constant (axes, pads, sizes, split)."""
        return self.const(np.asarray(list(values), dtype=np.int64).reshape(-1), DType.int64, hint)

    def scalar(self, value, dtype: DType, hint: str = "s") -> str:
        """A 0-d constant of ``dtype``."""
        return self.const(np.asarray(value, dtype=dtype.numpy()), dtype, hint)

    def like(self, value, x: str, hint: str = "s") -> str:
        """A 0-d constant of ``x``'s dtype (broadcasts against ``x``)."""
        return self.scalar(value, self.dtype(x), hint)

    def axis(self, a: int, rank: int) -> int:
        """Axis ``a`` of a rank-``rank`` tensor, positive or negative (drawn)."""
        a = a % rank if rank else 0
        return a - rank if rank and self.draw("axis", ["positive", "negative"]) == "negative" else a

    def axes(self, axes: Sequence[int], rank: int) -> List[int]:
        """Several axes, each drawn positive or negative."""
        return [self.axis(a, rank) for a in axes]

    def axes_arg(self, axes: Sequence[int], since: int, name: str = "axes"):
        """``(inputs, attrs)`` carrying ``axes`` as the opset requires: an int64 input from opset
        ``since`` (when the op took them as an input), the ``name`` attribute before it. Use as
        ``ins, at = g.axes_arg(axes, 18); g.op("ReduceMax", x, *ins, **at)``."""
        if self.opset >= since:
            return [self.ints(axes, name)], {}
        return [], {name: [int(a) for a in axes]}

    def shape_operand(self, values: Sequence[int], *sources: str) -> str:
        """A 1-D int64 operand holding ``values`` (a target shape, repeats, sizes): a constant, or
        computed in the graph (drawn): each value that is a dim of one of ``sources`` is read from its
        ``Shape`` (by Gather or Slice), the rest are constants, and the pieces are concatenated."""
        values = [int(v) for v in values]
        dims = [(s, k, d) for s in sources if self.shape(s) is not None for k, d in enumerate(self.shape(s))]
        if not values or not dims or self.draw("shape", ["constant", "computed"]) == "constant":
            return self.ints(values, "shape")
        shapes: Dict[str, str] = {}
        pieces: List[str] = []
        run: List[int] = []
        for v in values:
            hit = [(s, k) for s, k, d in dims if d == v]
            if not hit:
                run.append(v)
                continue
            if run:
                pieces.append(self.ints(run, "shape"))
                run = []
            s, k = hit[int(self.rng.integers(len(hit)))] if self.rng is not None else hit[0]
            if s not in shapes:
                shapes[s] = self.op("Shape", s, shape=(self.rank(s),))
            if self.draw("dim", ["Gather", "Slice"]) == "Gather":
                pieces.append(self.op("Gather", shapes[s], self.ints([k], "idx"), axis=0, shape=(1,)))
            else:
                pieces.append(self.op("Slice", shapes[s], self.ints([k], "b"), self.ints([k + 1], "e"), shape=(1,)))
        if run:
            pieces.append(self.ints(run, "shape"))
        return pieces[0] if len(pieces) == 1 else self.op("Concat", *pieces, axis=0, shape=(len(values),))

    def cast(self, x: str, dtype: DType) -> str:
        """``x`` as ``dtype`` (no node when it already is)."""
        if self.dtype(x) is dtype:
            return x
        return self.op("Cast", x, to=dtype.onnx(), shape=self.shape(x))

    # ---- finishing one lowering ------------------------------------------------------------------
    def bind(self, returned, targets: Sequence[str], start: int, where) -> None:
        """Give the values a lowering returned the GraphIR names ``targets``: a temp the lowering wrote is
        renamed in its nodes; a value from elsewhere (an input returned as is) goes through Identity.
        ``where`` (the op; its repr is built only for an error) names the lowering."""
        got = list(returned) if isinstance(returned, (list, tuple)) else [returned]
        if len(got) != len(targets):
            raise OpDefinitionError(f"ONNX lowering of {where!r} returned {len(got)} values, the op has {len(targets)} outputs")
        for tmp, want in zip(got, targets):
            produced = [n for n in self.nodes[start:] if tmp in n.output]
            if produced and tmp.startswith("_") and got.count(tmp) == 1:
                for n in self.nodes[start:]:
                    for seq in (n.input, n.output):
                        for k, v in enumerate(seq):
                            if v == tmp:
                                seq[k] = want
            else:
                self.nodes.append(make_node("Identity", [tmp], [want], f"Identity_{len(self.nodes)}"))

    def value_info(self, name: str):
        dt, shape = self.types[name]
        return helper.make_tensor_value_info(name, dt.onnx(), None if shape is None else list(shape))

