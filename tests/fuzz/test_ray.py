"""``fuzz.executor=ray`` on a local Ray started by the test (``ray.init(num_cpus=2)``): testers and
producers are actors, a segfault kills an actor's sandbox process and comes back as a crash (the actor
lives on), a killed actor loses only its test in flight (counted as lost), and the driver alone writes
the store."""
import sys
from pathlib import Path

import pytest

from nnfuzz.errors import ConfigError
from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
from nnfuzz.generate.policy import GenPolicy
from nnfuzz.triage.bugstore import load_bug
from nnfuzz.fuzz.runlog import read_log

# every test starts a Ray; one Ray on the machine at a time (pyproject: --dist loadgroup)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]

ray = pytest.importorskip("ray")

HERE = Path(__file__).parent
SAFE_OPS = ["Relu", "Add", "Mul", "Sigmoid", "Tanh", "Transpose"]


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    yield
    ray.shutdown()


def _fault(tmp_path, options, **kw):
    sys.path.insert(0, str(HERE))
    cc = CampaignConfig(backend="fault-cpu", backend_options=options, backend_path="fault_backend:FaultBackend",
                        policy=GenPolicy(max_nodes=3, dtypes=["float32"], include=SAFE_OPS, seed=3),
                        out=tmp_path / "bugs", ui="plain", probe=False, time_s=90, max_tests=5, executor="ray",
                        workers=1, producers=1, **{"reduce": False, **kw})
    return run_campaign(cc), cc.out


def _log(out: Path) -> list:
    return list(read_log(out))


@pytest.mark.slow
def test_a_segfault_kills_the_sandbox_not_the_actor(tmp_path, local_ray):
    counters, out = _fault(tmp_path, {"always": "segfault", "once": str(tmp_path / "once")})
    assert counters.lost == 0 and counters.verdicts == {"crash": 1, "pass": counters.tests - 1}, counters
    folders = [p for p in out.iterdir() if p.is_dir() and p.name.isdigit()]
    assert len(folders) == 1 and counters.bugs_saved == 1
    bug = load_bug(folders[0])  # written by the driver from what the actor sent back
    assert bug.meta.symptom == "crash" and "SIGSEGV" in bug.meta.summary
    _all_cpus_free()  # every actor of the campaign is gone


def _all_cpus_free():
    """Ray frees a killed actor's CPU a moment later: wait for it (a bound, not a speed check)."""
    import time

    end = time.monotonic() + 60
    while ray.available_resources().get("CPU") != 2:
        assert time.monotonic() < end, f"actors left holding CPUs: {ray.available_resources()}"
        time.sleep(0.2)


def test_a_killed_actor_loses_only_its_test_in_flight(tmp_path, local_ray):
    counters, out = _fault(tmp_path, {"always": "killparent", "once": str(tmp_path / "once")})
    assert counters.lost == 1 and counters.tests == 5 and counters.verdicts == {"pass": 5}, counters
    lost = [r for r in _log(out) if r.get("verdict") == "lost"]
    assert len(lost) == 1 and "actor died" in lost[0]["error"]
    assert not [p for p in out.iterdir() if p.is_dir() and p.name.isdigit()]  # a lost test is no bug
    _all_cpus_free()


def test_more_workers_than_the_cluster_holds_is_a_clear_error(tmp_path, local_ray):
    with pytest.raises(ConfigError, match=r"fuzz.workers=3 needs 3 CPUs \(one per tester actor\), but the Ray cluster has 2"):
        run_campaign(CampaignConfig(
            backend="ort-cpu", backend_options={}, policy=GenPolicy(seed=1), out=tmp_path, ui="plain",
            time_s=10, executor="ray", workers=3, producers=1))


@pytest.mark.slow
def test_an_ort_campaign_on_ray_tests_generated_models(tmp_path, local_ray):
    pytest.importorskip("onnxruntime")
    cc = CampaignConfig(backend="ort-cpu", backend_options={}, policy=GenPolicy(max_nodes=4, seed=9),
                        out=tmp_path / "bugs", ui="plain", probe=False, time_s=60, max_tests=10, executor="ray",
                        workers="auto", producers=1, reduce=False)
    counters = run_campaign(cc)
    assert counters.workers == 2 and counters.tests == 10 and counters.lost == 0, counters
    seeds = [r["seed"] for r in _log(cc.out) if r.get("verdict") in ("pass", "unsupported", "inconsistency", "crash")]
    assert len(seeds) == len(set(seeds)) == 10


@pytest.mark.slow
def test_a_killed_producer_actor_is_replaced_counted_and_its_seeds_logged(tmp_path, local_ray):
    """A producer actor that dies (killed here; a native crash in generation alike) is replaced: the
    models it had in the making are never tested, their seeds are in the death record, and models go on."""
    from nnfuzz.fuzz.plan import CampaignPlan
    from nnfuzz.fuzz.ray_executor import RayExecutor, RayProducers
    from nnfuzz.fuzz.resume import seed_at
    from nnfuzz.generate.opset import select_ops

    cc = CampaignConfig(backend="ort-cpu", backend_options={}, policy=GenPolicy(max_nodes=3, seed=11), time_s=120.0,
                        out=tmp_path, ui="plain", log=None, producers=1, search=None, executor="ray")
    plan = CampaignPlan(tuple(select_ops(cc.policy, dialects=("tf",))), {}, cc.export, cc.search, True, ())
    deaths = []
    with RayExecutor(None) as executor:
        producers = RayProducers(cc, 1, executor)
        producers.on_death = deaths.append
        try:
            producers.go(cc, plan, 120.0)
            got = [producers.get(timeout=60.0).index for _ in range(2)]
            held = sorted(i for _, i in producers.inflight.values())
            ray.kill(producers.actors[0])
            while len(got) < 5:
                p = producers.get(timeout=60.0)
                assert p is not None or deaths, "no model and no death within 60 s"
                if p is not None:
                    got.append(p.index)
        finally:
            producers.close()
    assert producers.restarts == 1 and len(deaths) == 1, deaths
    assert deaths[0]["seeds"] == [seed_at(11, (), i) for i in held] and "died" in deaths[0]["error"], deaths
    assert not set(held) & set(got) and len(got) == len(set(got)), (held, got)
