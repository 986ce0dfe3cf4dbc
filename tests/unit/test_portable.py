"""The GraphIR payload (model.gir): weights of every dtype and rank survive, malformed bytes are refused."""
import ml_dtypes
import numpy as np
import pytest

from nnfuzz.errors import NNFuzzError
from nnfuzz.generate import GenPolicy, generate_graph
from nnfuzz.materialize.portable import pack, unpack


def test_round_trip_keeps_shapes_dtypes_and_values():
    gir = generate_graph(GenPolicy(max_nodes=6), seed=5)
    weights = {"scalar": np.asarray(2.5), "flag": np.asarray(True), "bf": np.arange(6, dtype=np.float32)
               .astype(ml_dtypes.bfloat16).reshape(2, 3), "i8": np.arange(-4, 4, dtype=np.int8), "empty": np.zeros((0, 3))}
    got_gir, got = unpack(pack(gir.dumps(), weights))
    assert got_gir.dumps() == gir.dumps()
    for k, v in weights.items():
        assert got[k].shape == v.shape and got[k].dtype == v.dtype, k
        np.testing.assert_array_equal(got[k], v)


@pytest.mark.parametrize("data", [b"", b"PK\x03\x04zip", b"NNFZGIR1" + (10**6).to_bytes(8, "little") + b"{}"])
def test_malformed_payloads_are_refused_with_a_reason(data):
    with pytest.raises(NNFuzzError, match="payload"):
        unpack(data)


def test_truncated_weights_are_refused():
    gir = generate_graph(GenPolicy(max_nodes=3), seed=1)
    data = pack(gir.dumps(), {"w": np.ones((4, 4))})
    with pytest.raises(NNFuzzError, match="past the end"):
        unpack(data[:-8])


def test_a_relax_payload_carries_its_layout_seed_and_a_bad_one_is_refused():
    import json
    import struct

    from nnfuzz.materialize.portable import MAGIC, relax_seed

    gir = generate_graph(GenPolicy(max_nodes=3), seed=1)
    assert relax_seed(pack(gir.dumps(), {})) is None  # a plain gir payload
    data = pack(gir.dumps(), {"w": np.ones(2)}, relax_seed=42)
    assert relax_seed(data) == 42 and unpack(data)[0].dumps() == gir.dumps()
    header = json.dumps({"gir": json.loads(gir.dumps()), "weights": [], "relax": {"seed": "x"}}).encode()
    with pytest.raises(NNFuzzError, match="relax entry"):
        relax_seed(MAGIC + struct.pack("<Q", len(header)) + header)
