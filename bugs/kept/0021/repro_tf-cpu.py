"""Reproducer for tf-cpu 2.21.0: TensorFlow's oneDNN Conv3D (brg_conv_fwd:avx512_core) corrupts the heap
when TF computes on one intra-op thread, on a CPU with AVX-512 (glibc then aborts: "double free or
corruption (!prev)", exit by SIGABRT). Written from nnfuzz's bugs/kept/0021 (found by its TF lowering tests).
Needs: tensorflow. Exits 0 and prints "not reproduced" where the fault is gone.
"""
import tensorflow as tf

# what a single-core machine gets by default, and what each sandbox worker of a tf-cpu campaign sets
tf.config.threading.set_intra_op_parallelism_threads(1)

x = tf.ones([1, 10, 53, 23, 1])       # NDHWC
w = tf.ones([1, 1, 2, 1, 1])          # [kd, kh, kw, in, out]
y = tf.nn.conv3d(x, w, strides=[1, 1, 3, 1, 1], padding="VALID")  # eager: TF's oneDNN Conv3D op
del y                                 # frees the output: glibc detects the corrupted heap here at the latest
for _ in range(3):
    tf.nn.conv3d(x, w, strides=[1, 1, 3, 1, 1], padding="VALID")
print("Conv3D ran and the heap held: not reproduced")
