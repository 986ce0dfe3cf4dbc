"""Reproducer for tf-cpu 2.21.0: TensorFlow's oneDNN BatchMatMulV2 corrupts the heap when a rank-4 lhs
with a size-1 batch dim is multiplied by a rank-2 rhs (batch broadcast): glibc aborts ("free(): invalid
pointer", "double free or corruption (out)", ...; exit by SIGABRT), the process dies of SIGSEGV/SIGBUS, or it
hangs on a malloc lock the corruption left taken (seen once in CI): then the alarm below ends it by SIGALRM.
Written from nnfuzz's bugs/kept/0094 (an xla-cpu oracle=grad campaign; TF eager crashed in its Linear).
Needs: tensorflow. Exits 0 and prints "not reproduced" where the fault is gone.
"""
import signal

import tensorflow as tf

signal.alarm(60)  # the matmuls take milliseconds; a process still here after a minute is stuck in the corrupted heap

a = tf.ones([9, 1, 3, 5])
b = tf.ones([5, 7])
c = tf.linalg.matmul(a, b)  # eager: TF's oneDNN _MklBatchMatMulV2; [9, 1, 3, 5] x [5, 7] -> [9, 1, 3, 7]
del c                       # frees the output: glibc detects the corrupted heap here at the latest
for _ in range(3):
    tf.linalg.matmul(a, b)
print("BatchMatMulV2 ran and the heap held: not reproduced")
