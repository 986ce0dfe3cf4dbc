"""Test migration (OPERA): library operator tests become single-operator ONNX models in the bug-folder
layout (``nnfuzz migrate``), ordered so that operator signatures and parameter-setting partitions not yet
covered come first (``priority.py``). See docs/migration.md."""
