"""One module per `nnfuzz <command>`; each exposes ``run(cfg) -> exit code``."""
