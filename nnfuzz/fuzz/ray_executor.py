"""``fuzz.executor=ray``: a campaign's sandboxes and producers as Ray actors placed across a cluster.

Each tester actor holds a Sandbox (fuzz/sandbox.py): the system under test still runs in the actor's own
sandbox process, so a segfault kills that process, not the actor, and comes back as a crash verdict.
The driver (the campaign process) drives each actor through ``RaySandbox``, a Sandbox whose runs go to
the actor: the lanes (fuzz/pool.py), verdicts, reruns, localization and reduction are the local ones,
and the driver alone writes the bug store. An actor that dies (its process killed, its node gone)
loses only the test in flight: ``LostTest``, counted as ``lost``; the lane's next run starts a new
actor. Producer actors make models as fuzz/producers.py's processes do, indexed the same way.

Resources: each tester actor takes one CPU of the cluster (an expected-side tester none: it runs only
between its lane's runs), so ``fuzz.workers=auto`` is the cluster's CPUs. Producer actors reserve no
CPU (Ray places them, mostly on the driver's node): like the local producer processes, they share the
cores with the testers, which wait on them only when generation is slower than testing. A stop signal kills every actor this campaign made; a Ray the campaign started ends with it.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import List, Optional

from nnfuzz.errors import ConfigError, NNFuzzError
from nnfuzz.fuzz.pool import LostTest
from nnfuzz.fuzz.sandbox import Sandbox

START_S = 600.0     # bound on placing and starting an actor (a busy cluster queues it)
WAIT_S = 0.1        # how often the driver looks at the stop request while it waits on an actor
MARGIN_S = 30.0     # beyond a run's own timeout (enforced by the actor's sandbox): the actor is lost


def _ray():
    try:
        import ray
    except ImportError:
        raise ConfigError("fuzz.executor=ray needs Ray: pip install 'nnfuzz[ray]' (or pip install ray)") from None
    return ray


class RayExecutor:
    """Connects to Ray (``address``: auto, HOST:PORT, or None to start one here) for a campaign; a Ray
    already initialized in this process (a test's ``ray.init``) is used as it is and left running."""

    def __init__(self, address: Optional[str]):
        self.address = address
        self.owned = False
        self.actors: List[object] = []
        self.lock = threading.Lock()

    def __enter__(self) -> "RayExecutor":
        ray = _ray()
        if not ray.is_initialized():
            handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
            try:
                ray.init(address=self.address, include_dashboard=False, logging_level="ERROR",
                         runtime_env={"env_vars": {"PYTHONPATH": _root_path()}})
            except ConnectionError as e:
                raise ConfigError(f"ray.address={self.address!r}: {e}; start a cluster (`ray start --head`) or "
                                  "give ray.address=null to start Ray on this machine") from None
            finally:  # the campaign's stop handlers stay (fuzz/stopping.py)
                for s, h in handlers.items():
                    signal.signal(s, h)
            self.owned = True
        return self

    def __exit__(self, *exc) -> None:
        ray = _ray()
        with self.lock:
            actors, self.actors = self.actors, []
        for a in actors:
            try:
                ray.kill(a)
            except Exception:  # noqa: BLE001 - already gone with its node
                pass
        if self.owned:
            ray.shutdown()

    def cpus(self) -> int:
        return int(_ray().cluster_resources().get("CPU", 0))

    def workers(self, cc) -> int:
        cpus = self.cpus()
        if cc.workers == "auto":
            return max(1, cpus)
        if int(cc.workers) > cpus:
            raise ConfigError(f"fuzz.workers={cc.workers} needs {cc.workers} CPUs (one per tester actor), but the "
                              f"Ray cluster has {cpus}; lower it, use fuzz.workers=auto, or add nodes (docs/scaling.md)")
        return int(cc.workers)

    def sandbox(self, cc, name, options, path, stop, env, expected: bool = False) -> "RaySandbox":
        return RaySandbox(self, name, options, test_timeout=cc.test_timeout, memory_limit_mb=cc.memory_limit_mb,
                          backend_path=path, stop=stop, env=env, cpus=0 if expected else 1)

    def spawn(self, cls, *args, num_cpus: float = 1):
        actor = cls.options(num_cpus=num_cpus, max_restarts=0).remote(*args)
        with self.lock:
            self.actors.append(actor)
        return actor

    def forget(self, actor) -> None:
        ray = _ray()
        with self.lock:
            if actor in self.actors:
                self.actors.remove(actor)
        try:
            ray.kill(actor)
        except Exception:  # noqa: BLE001 - already gone
            pass


def _root_path() -> str:
    """Where ``nnfuzz`` is importable from, for the actors' workers (a cluster's nodes install it)."""
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    return os.pathsep.join([root] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))


def wait(ref, stop, timeout: float, on_stop):
    """``ray.get(ref)``, looking at the stop request every WAIT_S; ``LostTest`` when its actor died or
    took ``timeout`` s; ``on_stop()`` then ``Stopped`` after a stop signal."""
    ray = _ray()
    from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError

    end = time.monotonic() + timeout
    while True:
        if stop is not None and stop.is_set():
            on_stop()
            stop.check()
        ready, _ = ray.wait([ref], timeout=WAIT_S)
        if ready:
            try:
                return ray.get(ready[0])
            except (RayActorError, ActorDiedError, ActorUnavailableError) as e:
                raise LostTest(f"its Ray actor died: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
        if time.monotonic() > end:
            raise LostTest(f"its Ray actor gave no answer within {timeout:g}s")


class RaySandbox(Sandbox):
    """A Sandbox whose worker is a Ray actor's sandbox (see the module docstring)."""

    def __init__(self, executor: RayExecutor, backend, options=None, cpus: float = 1, **kw):
        super().__init__(backend, options, **kw)
        self.executor, self.cpus = executor, cpus
        self.actor = None

    @property
    def pid(self):
        return None  # the sandbox process lives on the actor's node

    def _alive(self) -> bool:
        return self.actor is not None

    def start(self) -> dict:
        if self.actor is not None:
            return self.info
        self.actor = self.executor.spawn(_tester_class(), self.backend, self.options, self.backend_path,
                                         self.test_timeout, self.memory_limit_mb, self.env, list(sys.path),
                                         num_cpus=self.cpus)
        self.workers_started += 1
        try:
            self._info = dict(wait(self.actor.start.remote(), self.stop, START_S, self._drop))
        except BaseException:
            self._drop()
            raise
        return self.info

    def _drop(self) -> None:
        a, self.actor = self.actor, None
        if a is not None:
            self.executor.forget(a)

    def close(self) -> None:
        self._drop()  # the actor's sandbox worker dies with it (fuzz/lifeline.py)

    def run(self, model_bytes: bytes, inputs: dict, *, timeout: float | None = None):
        timeout = self.test_timeout if timeout is None else float(timeout)
        self._check_stop()
        seconds = {}
        if self.actor is None:
            t = time.perf_counter()
            self.start()
            seconds["start"] = time.perf_counter() - t
        try:
            res = wait(self.actor.run.remote(model_bytes, inputs, timeout), self.stop, timeout + MARGIN_S, self._drop)
        except LostTest:
            self._drop()
            raise
        res.seconds.update(seconds)
        return res


_CLASSES = {}


def _tester_class():
    """The tester actor class (made on first use: ``import nnfuzz`` does not import Ray)."""
    if "tester" not in _CLASSES:
        ray = _ray()

        @ray.remote
        class Tester:
            """A Sandbox in a Ray actor; no stop request of its own: the driver kills the actor."""

            def __init__(self, backend, options, backend_path, test_timeout, memory_limit_mb, env, sys_path):
                sys.path.extend(p for p in sys_path if p not in sys.path)  # the driver's (a backend_path module)
                self.sandbox = Sandbox(backend, options, test_timeout=test_timeout, memory_limit_mb=memory_limit_mb,
                                       backend_path=backend_path, env=env)

            def start(self) -> dict:
                return self.sandbox.start()

            def run(self, model_bytes, inputs, timeout):
                return self.sandbox.run(model_bytes, inputs, timeout=timeout)

        _CLASSES["tester"] = Tester
    return _CLASSES["tester"]


def _producer_class():
    if "producer" not in _CLASSES:
        ray = _ray()

        @ray.remote
        class Producer:
            """Makes the campaign's models by index (fuzz/producers.py makes them the same way)."""

            def __init__(self, cc):
                import faulthandler

                from nnfuzz.fuzz.producer_proc import one_thread, warm_up

                faulthandler.enable(all_threads=True)  # a native crash leaves its Python stack in the actor's log
                one_thread()
                warm_up(cc)
                self.plan = None

            def go(self, cc, plan, op_names) -> None:
                from nnfuzz.fuzz.producer_proc import _ops

                self.plan = (cc, plan.with_ops(_ops(cc, op_names)))

            def make(self, i: int, time_left: float):
                from nnfuzz.fuzz.producer_proc import produce_or_report
                from nnfuzz.fuzz.resume import seed_at

                cc, plan = self.plan
                seed = seed_at(cc.policy.seed, cc.tested_seeds or (), i)
                p = produce_or_report(cc, plan, seed, time_left)
                p.index = i
                return p

        _CLASSES["producer"] = Producer
    return _CLASSES["producer"]


class RayProducers:
    """``n`` producer actors, the interface of fuzz/producers.py's Producers: ``go``, ``get``, ``close``.
    Each actor has two models in the making, so one is ready when a lane asks."""

    def __init__(self, cc, n: int, executor: RayExecutor):
        self.executor, self.n, self.cc = executor, n, cc
        self.actors = [self.executor.spawn(_producer_class(), cc, num_cpus=0) for _ in range(n)]
        self.inflight = {}          # ObjectRef -> (actor, model number)
        self.on_death = None        # (record) -> None, the campaign's: logs and counts a producer's death
        self.restarts, self.quiet_deaths = 0, 0
        self.next_i = 0
        self.deadline = 0.0
        self.lock = threading.Lock()
        self.closed = False

    def go(self, cc, plan, time_left: float) -> None:
        ray = _ray()
        self.deadline = time.monotonic() + time_left  # (this host's clock: actors get the time left)
        self._plan_args = (cc, *plan.shipped())
        ray.get([a.go.remote(*self._plan_args) for a in self.actors])
        for a in self.actors:
            for _ in range(2):
                self._submit(a)

    def _submit(self, actor) -> None:
        ref = actor.make.remote(self.next_i, self.deadline - time.monotonic())
        self.next_i += 1
        self.inflight[ref] = (actor, self.next_i - 1)

    def get(self, timeout: float):
        """The next model, or None after ``timeout`` s; a producer actor that died is replaced (its
        models in the making are lost: they were never tested)."""
        ray = _ray()
        from ray.exceptions import RayActorError

        from nnfuzz.fuzz.resume import seed_at

        with self.lock:
            if self.closed or not self.inflight:
                return None
            ready, _ = ray.wait(list(self.inflight), num_returns=1, timeout=timeout)
            if not ready:
                return None
            actor, i = self.inflight.pop(ready[0])
            try:
                p = ray.get(ready[0])
            except RayActorError as e:
                from nnfuzz.fuzz.producer_watch import MAX_QUIET_DEATHS

                held = sorted([i] + [j for a, j in self.inflight.values() if a is actor])
                seeds = [seed_at(self.cc.policy.seed, self.cc.tested_seeds or (), j) for j in held]
                first = str(e).splitlines()[0][:300]
                self.quiet_deaths += 1
                if self.quiet_deaths > MAX_QUIET_DEATHS:
                    raise NNFuzzError(f"the producer actors died {self.quiet_deaths} times with no model made in "
                                      f"between; the last held seeds {seeds}: {first}") from None
                self._replace(actor)
                self.restarts += 1
                record = {"slot": None, "exit_code": None, "index": i, "error": first, "seeds": seeds}
                if self.on_death is not None:
                    self.on_death(record)
                return None
            self.quiet_deaths = 0
            self._submit(actor)
            return p

    def _replace(self, dead) -> None:
        ray = _ray()
        for ref in [r for r, (a, _) in self.inflight.items() if a is dead]:
            del self.inflight[ref]
        self.executor.forget(dead)
        self.actors.remove(dead)
        actor = self.executor.spawn(_producer_class(), self.cc, num_cpus=0)
        self.actors.append(actor)
        ray.get(actor.go.remote(*self._plan_args))
        for _ in range(2):
            self._submit(actor)

    def close(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
            for a in self.actors:
                self.executor.forget(a)
            self.inflight.clear()
