"""Dynamic shapes: the ONNX form of a dynamic model (nnfuzz/materialize/dynamic.py): written once with
dim_param inputs when it does not depend on the shape."""
from nnfuzz.gir import ShapeFamily
from nnfuzz.ops.elementwise.spec import Relu
from tests.graphs import chain


def test_a_spelling_that_writes_a_dim_falls_back_to_canonical_spellings():
    """Unsqueeze drawn as a Reshape writes its target dims; that model is not shape-independent, so shape 0's
    model is written in canonical spellings (an Unsqueeze), which is, and takes dim_param inputs."""
    from nnfuzz.materialize.dynamic import build_dynamic
    from nnfuzz.materialize.onnx.spec import ExportSpec
    from nnfuzz.ops.layout.spec import Unsqueeze

    spellings = set()
    for seed in range(8):
        g = chain(Unsqueeze(0), Relu(), shape=(6,))
        g.family = ShapeFamily({"x": ["n"]}, [{"n": 6}, {"n": 1}, {"n": 9}])
        b = build_dynamic(g, seed, export=ExportSpec(seed=seed))
        assert b.forms == {"onnx": "dynamic", "gir": "dynamic"}
        assert b.onnx.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "n"
        assert b.model.onnx.graph.node[0].op_type == ("Unsqueeze" if b.model.export.spelling == "canonical" else
                                                      b.model.onnx.graph.node[0].op_type)
        spellings.add(b.model.export.spelling)
    assert spellings == {"random", "canonical"}


def test_a_symbol_that_takes_one_value_in_every_shape_is_static():
    """Regression (a tvm-cpu soak's 0074): no shape tests a symbol that took one value in every kept shape, so no
    form declares it; a family left without a varying symbol is the static test."""
    from nnfuzz.materialize.dynamic import build_dynamic, tested
    from nnfuzz.materialize.onnx.spec import ExportSpec

    fam = tested(ShapeFamily({"x": ["n", "h"]}, [{"n": 2, "h": 1}, {"n": 5, "h": 1}]))
    assert fam.dims == {"x": ["n", None]} and fam.assignments == [{"n": 2}, {"n": 5}]
    g = chain(Relu(), shape=(1, 3))
    g.family = ShapeFamily({"x": ["h", None]}, [{"h": 1}, {"h": 1}, {"h": 1}])
    b = build_dynamic(g, 0, export=ExportSpec(seed=0))
    assert b.family is None and b.onnx is None
    assert b.forms["onnx"] == b.forms["gir"] == "every symbol took one value in the 3 shapes with defined values"
