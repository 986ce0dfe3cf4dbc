"""Bug folders (save/load), and later dedup, reduction and repro."""
