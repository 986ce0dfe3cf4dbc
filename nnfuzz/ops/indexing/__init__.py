"""The indexing operator family: one module per aspect (see nnfuzz/ops/__init__.py)."""
