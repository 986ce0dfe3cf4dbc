"""A dynamic graph's models (docs/dynamic-shapes.md): one set of weights, values and a torch-eager
reference per shape of its family, and the forms a system compiles once for every shape.

Shape 0 (the generated one) is built as any static model (value search over weights and inputs, ONNX
export). Every other shape keeps shape 0's weights (the model has one set) and searches its inputs
only; a shape whose values the search cannot make safe is dropped from the family. A form is dynamic
only where the model it writes does not depend on the shape:

- ``gir`` (torch.compile): shape 0's torch module, run eagerly at every other shape, gives that shape's
  reference bit for bit (a lowering that read a concrete dim would not);
- ``onnx``: the ONNX model written at every other shape has the same nodes and initializers as shape
  0's (with the drawn spellings, else with canonical ones, which then become the model's); its inputs
  then take ``dim_param`` symbols, and output dims that vary become ``dim_param`` too;
- ``tf`` (TF functions with ``None`` dims; only built for a TF system): materialize/tensorflow/dynamic.py;
- ``relax`` (TVM's Relax-native models with symbolic shape vars; only for TVM): materialize/relax/form.py.

A form that fails its check is recorded with the reason (``DynamicBuild.forms``) and the system gets the
static test of shape 0 instead.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional

import numpy as np

from nnfuzz.gir import GraphIR, ShapeFamily
from nnfuzz.materialize.model import Model, ReferenceData, build_model, random_values

MIN_KEPT = 2  # shapes with defined values a dynamic test needs (else it is the static test of shape 0)


@dataclasses.dataclass
class DynamicBuild:
    model: Model                       # shape 0's model (its ONNX is the static one)
    family: Optional[ShapeFamily]      # the shapes kept (None: too few had defined values)
    shapes: List[ReferenceData]        # per kept shape: its inputs and reference outputs (shape 0's first)
    forms: Dict[str, str]              # "onnx" | "gir" | "tf" | "relax" -> "dynamic" or why the form stays static
    onnx: object = None                # the dynamic ONNX model (dim_param inputs), when forms["onnx"] is "dynamic"


def build_dynamic(gir: GraphIR, seed: int, *, search=None, start=None, export=True, tf=False,
                  relax=False) -> DynamicBuild:
    """Shape 0's model and every shape's reference; the dynamic forms, checked as the docstring says
    (with ``tf``, also the ``tf`` form: nnfuzz/materialize/tensorflow/dynamic.py, which runs TF; with
    ``relax``, the ``relax`` form: nnfuzz/materialize/relax/form.py, which builds with TVM)."""
    also = (("tf",) if tf else ()) + (("relax",) if relax else ())
    static = gir.at(0)
    base = dataclasses.replace(static, family=None)
    model = build_model(base, seed, search=search, start=start, export=export)

    def no_family(shapes, why: str) -> DynamicBuild:  # the static test of shape 0, every form saying why
        return DynamicBuild(model, None, shapes, {f: why for f in ("onnx", "gir") + also})

    if model.oracle.output is None:
        return no_family([model.oracle], "shape 0's values are undefined")
    kept, shapes, built = [0], [model.oracle], [model]
    for k in range(1, gir.n_shapes):
        gk = gir.at(k)
        m = _shape_model(gk, seed, k, model.weights, search)
        if m is not None:
            kept.append(k)
            shapes.append(m.oracle)
            built.append(m)
    if len(kept) < MIN_KEPT:
        return no_family(shapes, f"only {len(kept)} of {gir.n_shapes} shapes have defined values")
    fam = tested(ShapeFamily(gir.family.dims, [gir.family.assignments[k] for k in kept]))
    if not fam.symbols():
        return no_family(shapes, f"every symbol took one value in the {len(kept)} shapes with defined values")
    forms = {"gir": _torch_generic(model, built[1:])}
    if tf:
        from nnfuzz.materialize.tensorflow.dynamic import tf_form

        forms["tf"] = tf_form(dataclasses.replace(gir, family=fam), model.weights, [s.input for s in shapes])
    if relax:
        from nnfuzz.materialize.relax.form import relax_form

        forms["relax"] = relax_form(dataclasses.replace(gir, family=fam), seed)
    dyn = None
    if model.onnx is None:
        forms["onnx"] = "no ONNX model was built"
    else:
        forms["onnx"] = _onnx_generic(model, built[1:])
        if forms["onnx"] != "dynamic" and model.export.via == "onnx" and model.export.spelling != "canonical":
            model, forms["onnx"] = _canonical(model, built[1:], forms["onnx"])
        if forms["onnx"] == "dynamic":
            dyn = with_dim_params(model.onnx, dataclasses.replace(gir, family=fam))
    return DynamicBuild(model, fam, shapes, forms, dyn)


def tested(fam: ShapeFamily) -> ShapeFamily:
    """``fam`` with each symbol that takes one value in every shape made a static axis: no shape tests it, so
    a form must not declare it (a tvm-cpu soak: a DepthToSpace whose height took 1 in every kept shape was
    written as a Reshape whose `0` copied that dim into the block's place, right only when it is 1, and the
    dim_param model said it was right for any)."""
    fixed = {s for s in fam.symbols() if len({a[s] for a in fam.assignments}) == 1}
    if not fixed:
        return fam
    return ShapeFamily({name: [None if s in fixed else s for s in axes] for name, axes in fam.dims.items()},
                       [{s: v for s, v in a.items() if s not in fixed} for a in fam.assignments])


def _canonical(model: Model, others: List[Model], why: str):
    """(model, form) with shape 0's ONNX written in canonical spellings when that form is shape-independent
    and the drawn one was not (a drawn spelling may depend on a dim: a Reshape for a Squeeze, a written
    slice end): about half the non-independent models are. Else ``model`` and ``why`` unchanged."""
    from nnfuzz.materialize.onnx.export import check_onnx, to_onnx

    spec = dataclasses.replace(model.export, spelling="canonical")
    proto, spec, spellings = to_onnx(model.gir, model.weights, model.module, model.torch_inputs, spec)
    check_onnx(proto, [model.gir.vars[o] for o in model.gir.outputs], model.gir.outputs, where="generated model")
    trial = dataclasses.replace(model, onnx=proto, export=spec, spellings=spellings)
    return (trial, "dynamic") if _onnx_generic(trial, others) == "dynamic" else (model, why)


def _shape_model(gk: GraphIR, seed: int, k: int, weights, search) -> Optional[Model]:
    """Shape ``k``'s model with the shared ``weights`` and its own searched inputs (None: undefined)."""
    _, inputs = random_values(gk, np.random.default_rng([seed, 27, k]))
    if search is not None and search.enabled:
        from nnfuzz.materialize.search import search_values

        res = search_values(gk, weights, inputs, search, seed + k, fixed=tuple(gk.weights))
        if not res.ok:
            return None
        inputs = res.inputs
    m = build_model(gk, seed, export=False, values=(weights, inputs))
    return m if m.oracle.output is not None else None


def _torch_generic(model: Model, others: List[Model]) -> str:
    """"dynamic" when shape 0's module computes every other shape's reference bit for bit and makes no
    constant from a size (static_tensor: under ``torch.compile(dynamic=True)`` every size is symbolic, even
    one the family keeps, and such a constant cannot be made: "assume_constant_result argument conversion
    failed"), else why not."""
    import torch

    from nnfuzz.materialize.torch.lowering import static_calls
    from nnfuzz.materialize.values import to_numpy

    for m in others:
        shape = {i: list(t.shape) for i, t in zip(m.gir.inputs, m.torch_inputs)}
        try:
            with torch.no_grad(), static_calls() as made:
                outs = model.module(*m.torch_inputs)
        except Exception as e:  # noqa: BLE001 - a lowering that depends on the shape: the form is static, said so
            return f"shape 0's torch module fails at {shape}: {type(e).__name__}: {str(e)[:200]}"
        if made:  # (made at every shape alike: the lowerings call static_tensor whatever the sizes)
            return "a lowering makes a constant from the input's sizes (static_tensor), which are symbolic when compiled dynamic"
        for name, o in zip(m.gir.outputs, outs):
            got, want = to_numpy(o), m.oracle.output[name]
            if got.shape != want.shape or not np.array_equal(got, want, equal_nan=got.dtype.kind in "fc"):
                return f"shape 0's torch module computes {name} differently at {shape} (a lowering reads a dim)"
    return "dynamic"


def _onnx_generic(model: Model, others: List[Model]) -> str:
    """"dynamic" when the ONNX model written at every other shape has shape 0's nodes and initializers."""
    from nnfuzz.materialize.onnx.export import to_onnx

    want = _structure(model.onnx)
    for m in others:
        try:
            proto, _, _ = to_onnx(m.gir, model.weights, m.module, m.torch_inputs, model.export)
        except Exception as e:  # noqa: BLE001 - the export at another shape fails: the form is static, said so
            return f"the ONNX export at another shape fails: {type(e).__name__}: {str(e)[:200]}"
        if _structure(proto) != want:
            return "the ONNX model written at another shape differs (a shape is written into the graph)"
    return "dynamic"


def _structure(proto) -> tuple:
    g = proto.graph
    return (tuple(n.SerializeToString() for n in g.node), tuple(t.SerializeToString() for t in g.initializer),
            tuple(i.name for i in g.input), tuple(o.name for o in g.output))


def with_dim_params(proto, gir: GraphIR):
    """A copy of ``proto`` whose inputs name ``gir``'s symbols as ``dim_param`` and whose output dims
    that differ between the family's shapes are ``dim_param`` ``<output>_<axis>``; no value_info."""
    import onnx

    out = onnx.ModelProto()
    out.CopyFrom(proto)
    fam = gir.family
    for vi in out.graph.input:
        axes = fam.dims.get(vi.name)
        for dim, sym in zip(vi.type.tensor_type.shape.dim, axes or ()):
            if sym is not None:
                dim.dim_param = sym
    shapes = [gir.at(k) for k in range(gir.n_shapes)]
    for vi in out.graph.output:
        for a, dim in enumerate(vi.type.tensor_type.shape.dim):
            if len({tuple(g.vars[vi.name].shape)[a] for g in shapes}) > 1:
                dim.dim_param = f"{vi.name}_{a}"
    del out.graph.value_info[:]
    onnx.checker.check_model(out)
    return out


def at_shape(model_bytes: bytes, gir: GraphIR) -> bytes:
    """A dynamic ONNX model with the dims of ``gir`` (one shape of its family, ``GraphIR.at``) written in
    place of its ``dim_param`` symbols: the same model, static (the dynamic oracle's static twin)."""
    import onnx

    proto = onnx.load_model_from_string(model_bytes)
    for vi in list(proto.graph.input) + list(proto.graph.output):
        if vi.name in gir.vars:
            for dim, d in zip(vi.type.tensor_type.shape.dim, gir.vars[vi.name].shape):
                dim.dim_value = int(d)
    return proto.SerializeToString()


def static_model(gir: GraphIR, fmt: str, model_bytes: bytes, weights: Dict[str, np.ndarray], seed: int = 0) -> bytes:
    """The static model of one shape of a dynamic model, in ``fmt``: ``gir`` is that shape's graph
    (``GraphIR.at``); the dynamic ONNX model ``model_bytes`` with its dims written in (at_shape), or ``gir``
    with ``weights`` as the GraphIR payload (``relax``: ``seed`` as its layout seed, as the dynamic one's)."""
    if fmt == "onnx":
        return at_shape(model_bytes, gir)
    from nnfuzz.materialize.portable import model_payload

    return model_payload(gir, weights, None, fmt, seed)
