"""The torch (``gir``) form of a dynamic model is shape-generic only if no lowering makes a constant from
the input's sizes (nnfuzz/materialize/dynamic.py): GatherElements' and ScatterElements' indices are
(static_tensor), and under torch.compile(dynamic=True) every size is symbolic, even one the family keeps,
so inductor refused every such dynamic model ("assume_constant_result argument conversion failed"), and
the campaign took it for a limitation of torch's: 20 of an inductor-cpu campaign's 44 dynamic tests were
lost; after a first fix (constants that differ between shapes), a ScatterElements over sizes the family
keeps was a false crash."""
import random

import torch

from nnfuzz.generate import GenPolicy, generate_graph
from nnfuzz.generate.dynamic import lift
from nnfuzz.materialize.dynamic import build_dynamic
from nnfuzz.materialize.torch.lowering import static_calls


def test_a_lowering_that_makes_a_constant_from_sizes_keeps_the_gir_form_static():
    whys = []
    for seed in range(12):
        for op in ("GatherElements", "ScatterElements"):
            g = generate_graph(GenPolicy(max_nodes=2, dtypes=["float32"], include=[op, "Relu"]), seed=seed)
            fam = lift(g, 4096, random.Random(seed))
            if fam is None:
                continue
            b = build_dynamic(fam, seed, export=False)
            if b.family is None:
                continue
            with static_calls() as made:
                b.model.module(*[torch.from_numpy(b.shapes[0].input[i]) for i in b.model.gir.inputs])
            whys.append((bool(made), b.forms["gir"]))
    assert any(made for made, _ in whys), whys
    assert all(why.startswith("a lowering makes a constant from the input's sizes") for made, why in whys if made), whys
