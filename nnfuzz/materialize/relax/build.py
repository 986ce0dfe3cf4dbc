"""GraphIR -> a Relax IRModule, written with ``relax.BlockBuilder`` from each op's Relax lowering.

The module's shape is drawn from the layout seed, so that TVM's Relax passes see IR its ONNX importer
never emits (the importer writes one ``main`` with one dataflow block):

- ``flat``: every instruction in ``main``;
- ``outline``: one random run of consecutive instructions moved into a private function that ``main``
  calls (its free values are the parameters, the values used later its results);
- ``chain``: the instructions cut into 2-4 runs, each its own function, called one after another.

Each function's bindings sit in a dataflow block or, drawn per function, in a plain binding block. The
weights are parameters of ``main`` (named as in the graph), bound to constants by ``bind_weights``.
The same graph, weights and layout seed give the same module.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Tuple

import numpy as np

from nnfuzz.errors import InternalError, NNFuzzError, OpDefinitionError
from nnfuzz.gir import GraphIR

LAYOUTS = ("flat", "outline", "chain")


@dataclass(frozen=True)
class Layout:
    """How the module is cut into functions: runs ``[start, end)`` of instruction indices (outside
    them: ``main``), and per function (runs first, then main) whether it uses a dataflow block."""

    kind: str
    runs: Tuple[Tuple[int, int], ...]
    dataflow: Tuple[bool, ...]

    def record(self) -> dict:
        return {"kind": self.kind, "runs": [list(r) for r in self.runs], "dataflow": list(self.dataflow)}


def draw_layout(n_insts: int, seed: int) -> Layout:
    """The layout for a graph of ``n_insts`` instructions, drawn from ``seed``."""
    rng = np.random.default_rng([int(seed), 0x5E1A])
    kind = LAYOUTS[int(rng.integers(len(LAYOUTS)))] if n_insts > 1 else "flat"
    if kind == "outline":
        a = int(rng.integers(n_insts))
        runs = ((a, int(rng.integers(a + 1, n_insts + 1))),)
    elif kind == "chain":
        k = int(rng.integers(2, min(4, n_insts) + 1))
        cuts = sorted(int(c) for c in rng.choice(np.arange(1, n_insts), size=k - 1, replace=False))
        bounds = [0] + cuts + [n_insts]
        runs = tuple(zip(bounds[:-1], bounds[1:]))
    else:
        runs = ()
    dataflow = tuple(bool(b) for b in rng.random(len(runs) + 1) < 0.75)
    return Layout(kind, runs, dataflow)


def _tensor_type(t, dims=None):
    from tvm import relax

    if t.dtype.quant_only:  # only the quant family holds one, and it has no Relax lowering
        raise InternalError(f"a Relax tensor of the quantized-tensor type {t}: only a QuantizeLinear makes one, "
                            "and the quant family has no Relax lowering")
    return relax.TensorType(shape=tuple(int(d) for d in t.shape) if dims is None else dims, dtype=t.dtype.value)


def build_relax(gir: GraphIR, seed: int, printable: bool = False):
    """(IRModule, Layout): ``gir`` as a Relax module with weights as ``main``'s trailing parameters; a
    dynamic graph's with symbolic input dims (materialize/relax/symbolic.py). ``printable``: every
    constant prints as TVMScript (long index vectors as shapes: RelaxGraph.index), for model.py and the
    standalone script; the same values, slower to compile."""
    from tvm import relax

    fns = _lowerings(gir)
    layout = draw_layout(len(gir.insts), seed)
    sym = _symbolic(gir, fns) if gir.family is not None else None
    bb = relax.BlockBuilder()
    later_use = _uses_after(gir)
    calls = []  # (run, GlobalVar, free names, result names)
    for k, (a, b) in enumerate(layout.runs):
        insts = gir.insts[a:b]
        defined = {o for i in insts for o in i.outputs}
        free = list(dict.fromkeys(x for i in insts for x in i.inputs if x not in defined))
        results = [o for i in insts for o in i.outputs if later_use.get(o, -1) >= b]
        local = {}  # (a dynamic graph: this function's own symbols)
        params = {x: relax.Var(x, _tensor_type(gir.vars[x], sym and sym.param_dims(x, local))) for x in free}
        with bb.function(f"sub{k}", list(params.values()), private=True):
            env = dict(params)
            out = _body(bb, gir, fns, range(a, b), env, results, layout.dataflow[k], printable)
            gv = bb.emit_func_output(out)  # an earlier sub-function's, when this one is structurally equal
        calls.append(((a, b), gv, free, results))
    params = _main_params(gir, sym)
    with bb.function("main", list(params.values())):
        env = dict(params)
        out = _main_body(bb, gir, fns, env, calls, layout.dataflow[-1], printable)
        bb.emit_func_output(out)
    return bb.get(), layout


def _main_params(gir: GraphIR, sym) -> dict:
    from tvm import relax

    return {x: relax.Var(x, _tensor_type(gir.vars[x], sym and x in gir.inputs and sym.input_dims(x) or None))
            for x in gir.inputs + gir.weights}


def _symbolic(gir: GraphIR, fns):
    """The dynamic graph's SymbolicShapes, read from a flat build of it (every instruction in ``main``)."""
    from tvm import relax

    from nnfuzz.materialize.relax.symbolic import SymbolicShapes

    sym = SymbolicShapes(gir)
    bb = relax.BlockBuilder()
    params = _main_params(gir, sym)
    with bb.function("main", list(params.values())):
        env = dict(params)
        try:
            bb.emit_func_output(_body(bb, gir, fns, range(len(gir.insts)), env, gir.outputs, True, False))
        except Exception:  # a lowering that asks a symbolic dim (the relax form stays static): close the
            bb._end_block()  # block and scope the function opened, else TVM warns "BlockBuilder destroyed
            bb.end_scope()   # with remaining blocks!" for each such graph
            raise
    sym.record(env)
    return sym


def _uses_after(gir: GraphIR) -> Dict[str, int]:
    """For each var, the last instruction index that reads it (graph outputs: past the end)."""
    last = {}
    for k, inst in enumerate(gir.insts):
        for x in inst.inputs:
            last[x] = k
    for o in gir.outputs:
        last[o] = len(gir.insts)
    return last


def _lowerings(gir: GraphIR):
    from nnfuzz.materialize.relax.lowering import graph_relax_lowerings

    return graph_relax_lowerings(gir)


def _lower(bb, gir, fn, inst, env, printable: bool):
    from nnfuzz.materialize.relax.lowering import RelaxGraph

    try:
        out = fn(inst.op, RelaxGraph(bb, printable), *[env[x] for x in inst.inputs])
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(outs) != len(inst.outputs):
            raise ValueError(f"{len(outs)} results for {len(inst.outputs)} outputs")
        for name, expr in zip(inst.outputs, outs):
            env[name] = bb.emit(expr, name_hint=name)
            _check_type(env[name], gir.vars[name])
    except NNFuzzError:
        raise
    except Exception as e:
        ins = ", ".join(str(gir.vars[x]) for x in inst.inputs)
        raise OpDefinitionError(f"Relax lowering of {inst.op!r} raised {type(e).__name__}: {e} "
                                f"on inputs [{ins}]") from e


def _check_type(var, t) -> None:
    """``var``'s Relax type is ``t`` (shape 0's); a symbolic dim (a dynamic graph's, checked at every shape
    by SymbolicShapes.record) matches any size."""
    from nnfuzz.materialize.relax.symbolic import is_static

    shape = var.ty.shape
    dims = () if shape is None else shape.values
    got = (tuple(int(d) if is_static(d) else None for d in dims), str(var.ty.dtype))
    want = tuple(int(d) for d in t.shape)
    if shape is None or len(got[0]) != len(want) or any(g is not None and g != w for g, w in zip(got[0], want)) \
            or got[1] != t.dtype.value:
        raise ValueError(f"the Relax value is {var.ty}, the graph says {t}")


def _finish(bb, env, names: List[str], dataflow: bool):
    from tvm import relax

    vals = [env[n] for n in names]
    out = vals[0] if len(vals) == 1 else relax.Tuple(vals)
    return bb.emit_output(out) if dataflow else bb.emit(out) if len(vals) > 1 else out


def _body(bb, gir, fns, indices, env, results, dataflow: bool, printable: bool):
    """Lower instructions ``indices`` into the open function; returns what it returns (``results``)."""
    import contextlib

    with (bb.dataflow() if dataflow else contextlib.nullcontext()):
        for k in indices:
            _lower(bb, gir, fns[k], gir.insts[k], env, printable)
        out = _finish(bb, env, results, dataflow)
    return out


def _main_body(bb, gir, fns, env, calls, dataflow: bool, printable: bool):
    """``main``: the instructions outside the runs, and a call of each run's function in its place."""
    import contextlib

    from tvm import relax

    starts = {run[0]: (run, gv, free, results) for run, gv, free, results in calls}
    with (bb.dataflow() if dataflow else contextlib.nullcontext()):
        k = 0
        while k < len(gir.insts):
            if k in starts:
                (a, b), gv, free, results = starts[k]
                call = bb.emit(relax.Call(gv, [env[x] for x in free]))
                for j, name in enumerate(results):
                    env[name] = call if len(results) == 1 else bb.emit(relax.TupleGetItem(call, j), name_hint=name)
                k = b
                continue
            _lower(bb, gir, fns[k], gir.insts[k], env, printable)
            k += 1
        out = _finish(bb, env, gir.outputs, dataflow)
    return out


def bind_weights(mod, weights: Dict[str, np.ndarray]):
    """``mod`` with ``main``'s weight parameters bound to constants (what TVM compiles)."""
    import tvm
    from tvm import relax

    if not weights:
        return mod
    return relax.transform.BindParams("main", {n: tvm.runtime.tensor(np.asarray(a, order="C"))
                                               for n, a in weights.items()})(mod)


def module_script(payload: bytes) -> str:
    """The TVMScript of a relax payload's module, headed by what it is (a bug folder's model.py)."""
    from nnfuzz.materialize.portable import relax_seed, unpack
    from nnfuzz.materialize.relax.lowering import INDEX_CHUNK

    gir, weights = unpack(payload)
    mod, layout = build_relax(gir, relax_seed(payload) or 0, printable=True)
    head = (f"# nnfuzz Relax-native model: layout {layout.record()}\n"
            f"# main's parameters: the inputs {list(gir.inputs)}, then the weights {list(gir.weights)} "
            f"(their values are in model.relax; bound with relax.transform.BindParams before compiling);\n"
            f"# index vectors longer than {INDEX_CHUNK} are written as shapes, which TVMScript prints: nnfuzz compiles "
            "them as constants, the same values, faster\n")
    return head + mod.script() + "\n"
