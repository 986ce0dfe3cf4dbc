"""The compare-with-another-run oracles: the system's outputs must match another run of the same model,
on the lane's expected-side sandbox, tested as the reference oracle tests (nnfuzz/oracles/reference.py):

- ``optlevel``: the same system with its optimisations off (the backend's ``unoptimized`` options; for
  torch.compile, torch eager);
- ``devices``: the same system on the other device (``X-gpu`` against ``X-cpu``);
- ``cmp``: a second system on the same model (``cmp.with=openvino-cpu``).
"""
from __future__ import annotations

from nnfuzz.errors import ConfigError
from nnfuzz.oracles.base import Oracle, no_second_choice
from nnfuzz.oracles.reference import Reference, backend_class_of

EAGER = "eager"  # Backend.unoptimized value: the unoptimised run is the framework's eager run


class Optlevel(Reference):
    name = "optlevel"

    @classmethod
    def configure(cls, cfg) -> Oracle:
        from nnfuzz.backends.registry import backend_class, known_backends

        no_second_choice(cls.name, cfg)
        off = backend_class_of(cfg).unoptimized
        if off is None:
            able = [n for n in known_backends() if backend_class(n).unoptimized is not None]
            raise ConfigError(f"oracle=optlevel: {cfg.backend} has no switch that turns its optimisations off; "
                              f"backends with one: {able}")
        if off == EAGER:
            return cls(None)
        return cls(cfg.backend, {**cfg.backend_options, **off})


class Devices(Reference):
    name = "devices"

    @classmethod
    def configure(cls, cfg) -> Oracle:
        from nnfuzz.backends.registry import known_backends

        no_second_choice(cls.name, cfg)
        backend_class_of(cfg)  # an unknown backend is named first
        system, _, device = cfg.backend.rpartition("-")
        other = f"{system}-{'cpu' if device == 'gpu' else 'gpu'}"
        if device not in ("cpu", "gpu") or other not in known_backends():
            raise ConfigError(f"oracle=devices needs a system with both a -cpu and a -gpu backend; {cfg.backend} "
                              f"has no {other}")
        return cls(other, dict(cfg.backend_options))


class Cmp(Reference):
    name = "cmp"

    @classmethod
    def configure(cls, cfg) -> Oracle:
        from nnfuzz.backends.registry import backend_class, known_backends

        if not cfg.cmp_with:
            raise ConfigError("oracle=cmp needs the second system: cmp.with=<backend>, e.g. cmp.with=openvino-cpu")
        backend_class_of(cfg)
        backend_class(cfg.cmp_with)
        if cfg.cmp_with == cfg.backend:
            raise ConfigError(f"cmp.with={cfg.cmp_with} is the backend under test itself; name another system "
                              f"(known: {known_backends()}), or use oracle=optlevel")
        return cls(cfg.cmp_with)
