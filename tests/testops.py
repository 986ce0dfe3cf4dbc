"""A base for the tests' own operators: one float32 input, output of the same shape and dtype."""
from nnfuzz.abstract import AbsOpBase, AbsTensor, DType
from nnfuzz.abstract.op import ranks


class SameShapeFloat32(AbsOpBase, abstract=True):
    in_dtypes = [(DType.float32,)]
    out_dtypes = [(DType.float32,)]
    inp_ranks = [ranks(0)]
    out_ranks = [ranks(0)]

    def type_transfer(self, inputs):
        return [AbsTensor(inputs[0].shape, inputs[0].dtype)]
