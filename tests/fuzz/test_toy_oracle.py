"""An oracle is a plug-in: a class defined here, in a test module, subclasses nnfuzz.oracles.Oracle and a
campaign runs it by name (``oracle=<name>``) without any nnfuzz file knowing it. Run on the in-process
executor (tests/fuzz/fake_backends.py), so each campaign takes milliseconds."""
import pytest
from fake_backends import fake_campaign, folders, records

from nnfuzz.errors import ConfigError
from nnfuzz.fuzz.context import run_on
from nnfuzz.materialize.model import ReferenceData
from nnfuzz import oracles
from nnfuzz.oracles import ORACLES, Oracle, campaign_oracles, oracle_names
from nnfuzz.triage.bugstore import load_bug
from nnfuzz.verdict import Stage, Symptom, Verdict, judge

RUNS = []  # (oracle name, seed) of every run the toy oracles asked for


class TwiceOracle(Oracle):
    """The system against itself: the same model run twice must give the same outputs."""

    name = "toy-twice"

    def test(self, ctx, lane, p, reference=None):
        first = run_on(ctx, lane.sandbox, p)
        RUNS.append((self.name, p.seed))
        if first is None:
            return oracles.Tested(None)
        if first.status != "ok":
            return oracles.Tested(judge(first, None, ctx.info.engine, ctx.tolerances), first, reference=p.reference)
        again = run_on(ctx, lane.sandbox, p)
        RUNS.append((self.name, p.seed))
        if again is None:
            return oracles.Tested(None, first)
        verdict = judge(again, first.outputs, ctx.info.engine, ctx.tolerances)
        return oracles.Tested(verdict, again, reference=ReferenceData(p.reference.input, first.outputs))


class WrongOracle(Oracle):
    """A deliberately wrong oracle: every test is an inconsistency."""

    name = "toy-wrong"

    def test(self, ctx, lane, p, reference=None):
        res = run_on(ctx, lane.sandbox, p)
        RUNS.append((self.name, p.seed))
        if res is None:
            return oracles.Tested(None)
        return oracles.Tested(Verdict.bug(Symptom.inconsistency, Stage.verify, "toy: every test disagrees"), res,
                      reference=p.reference)

    def meta_fields(self, ctx, p, t):
        out = super().meta_fields(ctx, p, t)
        out["oracle"] = {**out["oracle"], "toy": "every test disagrees"}
        return {**out, "localization_note": "toy-wrong: nothing to localize"}

    @classmethod
    def signature_term(cls, meta):
        return "toy-wrong" if (meta.oracle or {}).get("toy") else None

    def localizes(self, p):
        return False


def test_the_oracle_choices_come_from_the_registry():
    assert {"reference", "metamorphic", "toy-twice", "toy-wrong"} <= set(oracle_names())
    assert "invalid" not in oracle_names()  # turned on by mgen.invalid, not by oracle=


def test_a_name_is_one_oracle():
    with pytest.raises(ConfigError, match="'toy-twice' of .*Impostor is already taken by .*TwiceOracle"):
        class Impostor(Oracle):
            name = "toy-twice"
    assert ORACLES["toy-twice"] is TwiceOracle


def test_an_unknown_oracle_names_the_registered_ones(tmp_path):
    from nnfuzz.fuzz.campaign import CampaignConfig
    from nnfuzz.generate.policy import GenPolicy

    cc = CampaignConfig(backend="ort-cpu", backend_options={}, policy=GenPolicy(), time_s=1, out=tmp_path,
                        oracle="toy-nope")
    with pytest.raises(ConfigError, match="oracle='toy-nope' is unknown.*'toy-twice'"):
        campaign_oracles(cc)


def test_a_toy_oracle_runs_a_campaign_by_name(tmp_path):
    RUNS.clear()
    out = tmp_path / "bugs"
    counters, cc = fake_campaign(out, {"always": "wrong"}, oracle="toy-twice", max_tests=3)
    assert counters.tests == 3 and counters.verdicts["pass"] == 3 and counters.bugs_saved == 0, counters
    assert len(RUNS) == 6 and {name for name, _ in RUNS} == {"toy-twice"}  # two runs per test
    (start,) = [r["campaign"] for r in records(out) if "campaign" in r]
    assert start["oracle"] == "toy-twice"
    assert start["plan"]["oracles"] == [{"kind": "toy-twice", "expected": None}]
    assert folders(out) == []


def test_a_wrong_toy_oracle_saves_every_test_as_a_bug_with_its_meta_fields(tmp_path):
    RUNS.clear()
    out = tmp_path / "bugs"
    counters, cc = fake_campaign(out, oracle="toy-wrong", max_tests=2, rerun=False)
    assert counters.tests == 2 and counters.verdicts["inconsistency"] == 2 and counters.bugs_saved == 2, counters
    assert len(RUNS) == 2
    bugs = [load_bug(f) for f in folders(out)]
    assert len(bugs) == 2
    for bug in bugs:
        m = bug.meta
        assert m.symptom == "inconsistency" and m.summary == "toy: every test disagrees"
        assert m.oracle["kind"] == "toy-wrong" and m.oracle["toy"] == "every test disagrees"
        assert m.oracle["under_test"]["system"] == cc.backend and m.oracle["expected"]["system"] == "torch-eager"
        assert m.localization_note == "toy-wrong: nothing to localize" and m.first_divergent_node is None
        assert m.signature == f"{cc.backend} | inconsistency | toy-wrong | values"
        assert bug.oracle["input"] and bug.oracle["output"] is not None  # the reference the toy judged with
