"""The ``Oracle`` interface and its registry: what one kind of test is (docs/oracles.md).

An oracle is configured from the campaign's config (``configure``: an impossible combination is a
ConfigError), does its start-up work once (``start``: e.g. probing which rewrites the system reads),
claims and prepares each produced model (``prepare``: e.g. the rewritten twin, the invalid model), says
whether a prepared model is testable (``skip``), runs one test on a lane (``test``) and says what a
saved bug's meta.json holds about it (``meta_fields``, ``localizes``, ``reducible``). Subclasses
register by name on class creation (``name``), so an oracle defined in any module is found by
``oracle=<name>``. The campaign (nnfuzz/fuzz/) calls these hooks and never asks which oracle it runs.
"""
from __future__ import annotations

import dataclasses
import importlib
from typing import TYPE_CHECKING, ClassVar, Dict, Optional, Tuple

from nnfuzz.errors import ConfigError

if TYPE_CHECKING:
    from nnfuzz.fuzz.campaign import CampaignConfig
    from nnfuzz.fuzz.context import RunContext
    from nnfuzz.fuzz.produce import Produced

ORACLES: Dict[str, type] = {}   # name -> Oracle subclass, filled on class creation
BUILTIN = ("reference", "compare", "metamorphic", "invalid", "grad", "dynamic", "static", "int8")  # nnfuzz/oracles/<module>.py


@dataclasses.dataclass
class Tested:
    """A test's outcome. ``verdict`` None: the campaign's time bound cut it short."""

    verdict: object                          # nnfuzz.verdict.Verdict | None
    result: object = None                    # the system under test's RunResult
    side: str = "actual"                     # whose bug a failure is: "actual" or "expected" (the other system)
    expected_outputs: Optional[Dict] = None  # the expected side's outputs, when another system ran
    reference: object = None                 # the ReferenceData judged with (with the float64 twins once made)
    twin: Optional[dict] = None              # for an inconsistency: were the float64 twins available, and why not
    failed: Optional[str] = None             # which part failed: oracle=metamorphic "original" | "rewrite"; oracle=grad "forward" | "backward";
                                             # dynamic: how the static model of the failing shape did; static: which form failed
    invalid_outcome: Optional[str] = None    # mgen.invalid: "rejected" | "accepted" | the bug's label
    expected_result: object = None           # the expected side's RunResult, when another system ran
    localization: object = None              # triage/localize.py Localization, when the test localized its verdict
    checked: bool = False                    # a pass checked node by node (further from the reference than rounding explains)
    shape: Optional[int] = None              # oracle dynamic: the shape of the family the verdict is at


@dataclasses.dataclass(frozen=True)
class Skip:
    """Why a produced model is not tested: the Counters field it counts in and its log record's fields."""

    counter: str
    log: Dict

    @staticmethod
    def undefined_values(p) -> "Skip":
        """A model whose values the value search left undefined (NaN/Inf, a blocker): whatever the system
        does is right."""
        return Skip("undefined_values", {"verdict": "undefined-values", "blocker": (p.search or {}).get("blocker")})


@dataclasses.dataclass(frozen=True)
class Oracle:
    """One kind of test. Instances are frozen (a started oracle is a new instance) and picklable: producer
    processes receive them with the campaign's plan."""

    name: ClassVar[str] = ""            # the registry key: ``oracle=<name>``, meta.json's ``oracle.kind``
    selectable: ClassVar[bool] = True   # False: turned on by another setting (``enabled``), not ``oracle=``
    kinks: ClassVar[bool] = False       # the value search keeps values away from kinks (search.kinks): gradients compared
    dialects: ClassVar[Tuple[str, ...]] = ()  # op dialects (AbsOpBase.dialect) generated for this oracle's tests
    timeout_scale: ClassVar[float] = 1.0  # each sandbox run may take this many times fuzz.test_timeout
    expected_system: Optional[str] = None   # the backend whose outputs are expected (None: none, or torch eager)
    expected_options: Dict = dataclasses.field(default_factory=dict)

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.__dict__.get("name"):
            prev = ORACLES.get(cls.name)
            if prev is not None and (prev.__module__, prev.__qualname__) != (cls.__module__, cls.__qualname__):
                raise ConfigError(f"oracle name {cls.name!r} of {cls.__module__}.{cls.__qualname__} is already taken "
                                  f"by {prev.__module__}.{prev.__qualname__}; set a distinct class attribute `name = ...`")
            ORACLES[cls.name] = cls

    # ---- configuration and start-up ----------------------------------------------------------
    @classmethod
    def configure(cls, cfg: "CampaignConfig") -> "Oracle":
        """The oracle for ``cfg``'s campaign (``oracle=<name>``); raise ConfigError when it cannot work."""
        no_second_choice(cls.name, cfg)
        return cls()

    @classmethod
    def enabled(cls, cfg: "CampaignConfig", primary: "Oracle") -> Optional["Oracle"]:
        """(``selectable = False`` oracles) the oracle when ``cfg`` turns it on beside ``primary``, else None."""
        return None

    def check(self, sandbox, cfg: "CampaignConfig") -> None:
        """ConfigError when the system under test (lane 0's started ``sandbox``) cannot be tested this way."""

    def start(self, sandbox, cfg: "CampaignConfig") -> "Oracle":
        """Start-up work on lane 0's started sandbox, done where the campaign probes the system (not with
        ``fuzz.probe=false``): the oracle as the campaign runs it."""
        return self

    def record(self) -> Dict:
        """What campaign.jsonl's plan records about this oracle."""
        return {"kind": self.name, "expected": self.expected_system}

    def describe(self, backend: str) -> str:
        return f"{backend} vs {self.expected_system or 'torch eager'} ({self.name})"

    # ---- one test ----------------------------------------------------------------------------
    def lift(self, gir, seed: int, policy):
        """(In the producer, before the model is built.) ``gir`` made dynamic when this oracle tests it
        with several shapes (the dynamic oracle, docs/dynamic-shapes.md); None: built as it is."""
        return None

    def prepare(self, p: "Produced", model, plan) -> bool:
        """Make what the test of ``p`` needs from its built ``model`` (in the producer's process); True
        when this oracle takes the test (the campaign asks its oracles in turn)."""
        return True

    def skip(self, p: "Produced") -> Optional[Skip]:
        """Why ``p`` is not tested by this oracle (None: it is)."""
        return None

    def test(self, ctx: "RunContext", lane, p: "Produced", reference=None) -> Tested:
        """Test ``p`` on ``lane`` (``reference``: ReferenceData with twins from an earlier run of it)."""
        raise NotImplementedError(f"oracle {self.name!r} ({type(self).__name__}) defines no test()")

    def account(self, counters, p: "Produced", t: Tested) -> None:
        """(Under the campaign's lock.) Count what this oracle counts of a finished test."""

    # ---- a saved bug -------------------------------------------------------------------------
    def expected_record(self, ctx: "RunContext") -> Dict:
        """meta.json's ``oracle.expected``: the system (and version) the system under test was compared with."""
        if ctx.expected_info is None:
            import torch

            return {"system": "torch-eager", "version": torch.__version__, "version_id": torch.version.git_version}
        return {"system": ctx.expected_system, "version": ctx.expected_info.version,
                "version_id": ctx.expected_info.version_id, "options": ctx.expected_options}

    def meta_fields(self, ctx: "RunContext", p: "Produced", t: Tested) -> Dict:
        """meta.json's fields about the oracle: ``oracle`` (its kind, whose bug it is, both sides)."""
        return {"oracle": {"kind": self.name, "side": t.side, "under_test": ctx.under_test(),
                           "expected": self.expected_record(ctx)}}

    @classmethod
    def signature_term(cls, meta) -> Optional[str]:
        """(From a saved bug's BugMeta alone: ``nnfuzz dedup`` reads kept folders.) The middle of an
        inconsistency's signature when this oracle's own meta.json fields place it (``rewrite if+fan-out``);
        None: the op it was localized to does (triage/dedup.py)."""
        return None

    @classmethod
    def crash_term(cls, meta) -> Optional[str]:
        """(From a saved bug's BugMeta alone.) For a crash or hang, a term its signature adds after the stage
        when this oracle's meta.json fields place it (``backward``); None: it is signed as any crash."""
        return None

    def localizes(self, p: "Produced") -> bool:
        """Whether an inconsistency is localized and its float64 twins recorded (needs a reference)."""
        return True

    def reducible(self, p: "Produced") -> bool:
        """Whether the reducer can shrink the bug (it rebuilds the model from the graph)."""
        return p.gir_text is not None


def no_second_choice(name: str, cfg: "CampaignConfig") -> None:
    """ConfigError when ``cmp.with`` chooses an expected side beside ``oracle=<name>``, which chooses its own."""
    if cfg.cmp_with:
        raise ConfigError(f"oracle={name} and cmp.with={cfg.cmp_with} both choose the expected side; use one")


def load_builtins() -> None:
    for module in BUILTIN:
        importlib.import_module(f"nnfuzz.oracles.{module}")


def oracle_names() -> Tuple[str, ...]:
    """The ``oracle=`` choices: the registered oracles a user picks by name."""
    load_builtins()
    return tuple(sorted(n for n, cls in ORACLES.items() if cls.selectable))


def oracle_signature_term(meta) -> Optional[str]:
    """The signature term of the first oracle (by name) whose meta.json fields place ``meta``'s inconsistency."""
    load_builtins()
    return next((t for _, cls in sorted(ORACLES.items()) if (t := cls.signature_term(meta)) is not None), None)


def oracle_crash_term(meta) -> Optional[str]:
    """The crash term of the first oracle (by name) whose meta.json fields place ``meta``'s crash or hang."""
    load_builtins()
    return next((t for _, cls in sorted(ORACLES.items()) if (t := cls.crash_term(meta)) is not None), None)


def oracle_class(name: str) -> type:
    names = oracle_names()
    if name not in names:
        raise ConfigError(f"oracle={name!r} is unknown; choose one of {list(names)} (cmp via cmp.with=<backend>)")
    return ORACLES[name]


def campaign_oracles(cfg: "CampaignConfig") -> Tuple[Oracle, ...]:
    """The campaign's oracles in the order they claim a produced model: those another setting turns on
    (``mgen.invalid``), then the one ``oracle=`` (or ``cmp.with=``) names, which takes the rest."""
    from nnfuzz.backends.registry import backend_class

    judged_by = backend_class(cfg.backend_path or cfg.backend).oracle_for(cfg.backend_options)
    if judged_by is not None and cfg.oracle != "reference":
        raise ConfigError(f"{cfg.backend} with backend.options {dict(cfg.backend_options)} is judged by its own "
                          f"oracle ({judged_by}), under oracle=reference; oracle={cfg.oracle} cannot test it")
    primary = oracle_class(cfg.oracle).configure(cfg)  # (oracle=reference with cmp.with=X: the cmp oracle)
    extra = [cls.enabled(cfg, primary) for name, cls in sorted(ORACLES.items()) if not cls.selectable]
    return tuple(o for o in extra if o is not None) + (primary,)
