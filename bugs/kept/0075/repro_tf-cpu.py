"""Reproducer for tf-cpu (TF eager) 2.21.0 (v2.21.0-rc1-5-ga481b10260d), found by nnfuzz's gradient oracle
(oracle=grad on xla-cpu, whose reference is TF eager): the gradient of tf.nn.max_pool on a 5-D input with the
default data_format (None) raises in eager mode. Graph mode (tf.function, with or without jit_compile) works.
Needs: numpy, tensorflow.
"""
import numpy as np
import tensorflow as tf

x = tf.constant(np.arange(2 * 3 * 3 * 3 * 2, dtype=np.float32).reshape(2, 3, 3, 3, 2))

with tf.GradientTape() as tape:  # graph mode: fine
    tape.watch(x)
    y = tf.function(lambda t: tf.nn.max_pool(t, [1, 1, 1], [1, 1, 1], "VALID"))(x)
print("tf.function:", tape.gradient(y, x).shape)

with tf.GradientTape() as tape:  # eager: AttributeError in nn_grad._MaxPool3DGrad
    tape.watch(x)
    y = tf.nn.max_pool(x, [1, 1, 1], [1, 1, 1], "VALID")  # data_format=None: documented default
print("eager:", tape.gradient(y, x).shape)
print("outputs match the reference: not reproduced")
