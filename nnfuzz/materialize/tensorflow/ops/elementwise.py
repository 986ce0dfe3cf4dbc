from nnfuzz.abstract.ops import elementwise as E
from nnfuzz.materialize.tensorflow.lowering import tf_lower_each

tf_lower_each({E.Relu: "nn.relu"})
