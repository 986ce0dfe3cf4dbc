"""GraphIR -> TensorFlow (a ``tf.Module`` with a ``tf.function``), for the TF systems under test.

``import nnfuzz.materialize.tensorflow`` does not import TensorFlow: the lowering modules use the lazy
``tf`` of ``lazy.py``, so the campaign can ask which ops have a TF lowering without paying for TF.
"""
