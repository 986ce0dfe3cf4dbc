"""The producer processes' side of fuzz/producers.py: the first one warms up, waits for the campaign's
plan and forks the others; each makes its share of the campaign's models and hands them over."""
from __future__ import annotations

import queue as queue_mod
import time
from typing import TYPE_CHECKING

from nnfuzz.fuzz.handoff import hand_over
from nnfuzz.fuzz.produce import Produced, produce

if TYPE_CHECKING:
    from nnfuzz.fuzz.campaign import CampaignConfig

WARM_UP_S = 10.0   # bound on the throw-away warm-up model's generation and build


def producer_main(cc: "CampaignConfig", n: int, plans, q, done, updates, slots) -> None:
    """The first producer: warm up, wait for the campaign's plan, fork the other producers, make models."""
    import os
    from pathlib import Path

    from nnfuzz.fuzz.lifeline import serve_the_campaign
    from nnfuzz.fuzz.producer_watch import enable_faults, reap

    serve_the_campaign()  # the campaign decides when to stop; dies with it
    enable_faults(slots, 0)
    cpu_only()
    one_thread()
    warm_up(cc)
    sent = _wait_for_plan(plans, done)
    if sent is None:
        return
    cc, plan, op_names, deadline, guide_state, starts, skip = sent
    plan = plan.with_ops(_ops(cc, op_names))
    k, children = _fork_others(n)
    if k == 0 and children:
        reap(children, slots)
    elif k > 0:
        enable_faults(slots, k)
    guide = _Guided(guide_state, updates[k]) if guide_state is not None and cc.policy.guide == "coverage" else None
    work = _Work(starts[k], n, deadline, skip, slots, k)
    if k == 0:
        _make_models(cc, plan, work, q, done, guide, Path(slots.folder))
        return
    code = 0
    try:
        _make_models(cc, plan, work, q, done, guide, Path(slots.folder))
        q.close()
        q.join_thread()  # what it put reaches the pipe (or the campaign stopped reading)
    except BaseException:  # a forked producer's end is os._exit: the traceback is printed here
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)  # never the first producer's exit path (mp's atexit handlers, its queue's threads)


def _fork_others(n: int):
    """Fork producers 1 .. n-1 from this warm process; return which producer this process is (0: the
    first) and, in the first, its children (pid -> producer). The only other thread here is the lifeline's watcher, sleeping: the fork is safe, and
    Python's warning about forking a threaded process (3.12+) would only alarm the user."""
    import os
    import warnings

    from nnfuzz.fuzz.lifeline import die_with_parent

    children = {}
    for k in range(1, n):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:
            die_with_parent(os.getppid(), pdeathsig=True)
            return k, {}
        children[pid] = k
    return 0, children


def cpu_only() -> None:
    """Producers compute on the CPU: hide any GPU before torch first looks for one. On a CUDA build of
    torch, a backward pass (the warm-up's value search) with a GPU visible starts autograd's per-device
    threads, and every producer forked afterwards then fails its first backward pass ("Unable to handle
    autograd's threading in combination with fork-based multiprocessing"): seen on an H100, where it
    turned a third of a campaign's tests into nnfuzz errors."""
    import os

    os.environ["CUDA_VISIBLE_DEVICES"] = ""


def one_thread() -> None:
    """torch computes on one thread in a producer: n producers, the sandbox worker and the campaign
    already share the machine's cores, and a process forked after an OpenMP pool started may hang in
    its first parallel region (with one thread, none is started)."""
    import torch

    torch.set_num_threads(1)


class _Guided:
    """A producer's coverage guide: the campaign's state as of ``go``, its own graphs' coverage, and the
    news the campaign sends (other producers' new keys, bugs' triggers), read before each graph."""

    def __init__(self, state_json, news):
        from nnfuzz.generate.guide import Guide, GuideState

        self.guide, self.news = Guide(GuideState.from_json(state_json)), news

    def before(self):
        st = self.guide.state
        while True:
            try:
                got = self.news.get_nowait()
            except queue_mod.Empty:
                break
            st.mark(got)
            for t in got.get("triggers", ()):
                st.add_trigger(t)
        return self.guide

    def after(self, p: Produced) -> None:
        if p.covered is not None:
            self.guide.state.add(p.covered)


class _Work:
    """A producer's share: model numbers ``start``, ``start + stride``, ... until ``deadline``
    (time.monotonic, the same clock in every process here), but those in ``skip`` (a producer died
    making them); ``slots.held[slot]`` says which one is being made, and ``slots.rss[slot]`` how large the
    process is (fuzz/producer_memory.py)."""

    def __init__(self, start: int, stride: int, deadline: float, skip, slots, slot: int):
        self.i, self.stride, self.deadline, self.skip = start, stride, deadline, skip
        self.slots, self.slot, self.made = slots, slot, 0

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def take(self) -> int:
        while self.i in self.skip:
            self.i += self.stride
        self.slots.held[self.slot] = self.i
        return self.i

    def put_done(self) -> None:
        from nnfuzz.fuzz import producer_memory

        self.slots.held[self.slot] = -1
        self.i += self.stride
        self.made += 1
        producer_memory.note(self.slots, self.slot, self.made)


def _make_models(cc, plan, work: _Work, q, done, guided, folder) -> None:
    """The campaign's models of ``work`` until told to stop or past the deadline, each handed over
    through ``folder`` (fuzz/handoff.py)."""
    from nnfuzz.fuzz import producer_peak
    from nnfuzz.fuzz.producer_watch import maybe_die
    from nnfuzz.fuzz.resume import seed_at
    from nnfuzz.materialize import search_record

    while not done.is_set() and work.left() > 0:
        i = work.take()
        search_record.forget()
        maybe_die(i)
        seed = seed_at(cc.policy.seed, cc.tested_seeds or (), i)
        producer_peak.reset()
        p = produce_or_report(cc, plan, seed, work.left(), guided.before() if guided is not None else None)
        producer_peak.note(p.rec)
        p.index = i
        if guided is not None:
            guided.after(p)
        name = hand_over(p, folder)
        while not done.is_set():
            try:
                q.put(name, timeout=0.2)
                break
            except queue_mod.Full:
                continue
        work.put_done()


def produce_or_report(cc, plan, seed: int, time_left: float, guide=None) -> Produced:
    """``produce``, with a bug in nnfuzz sent to the campaign (which shows and counts it) as the
    model's error instead of ending the producer."""
    import traceback

    try:
        return produce(cc, plan, seed, time_left, guide)
    except Exception:
        return Produced(seed=seed, rec={"seed": seed}, error=("nnfuzz-error", traceback.format_exc()))


def _ops(cc, op_names) -> list:
    from nnfuzz.generate.opset import select_ops

    wanted = set(op_names)
    return [c for c in select_ops(cc.policy, dialects=("tf",)) if c.name in wanted]


def _wait_for_plan(plans, done):
    """The plan ``go`` sends, or None when the campaign ends (or dies) before sending one."""
    while not done.is_set():
        try:
            if plans.poll(0.2):
                return plans.recv()
        except (EOFError, OSError):
            return None
    return None


def warm_up(cc: "CampaignConfig") -> None:
    """Pay a fresh process's one-off costs now (imports, a first graph, value search and ONNX build):
    one small model from the full op set, thrown away. A bug in nnfuzz it meets is printed (the
    campaign's own models report theirs as usual)."""
    import dataclasses
    import sys

    from nnfuzz.fuzz.plan import CampaignPlan
    from nnfuzz.generate.opset import select_ops

    ops = select_ops(cc.policy, dialects=("tf",))
    policy = dataclasses.replace(cc.policy, max_nodes=min(3, cc.policy.max_nodes))
    plan = CampaignPlan(tuple(ops), {}, cc.export, cc.search, True, ())  # (no oracle prepares it: thrown away)
    p = produce_or_report(dataclasses.replace(cc, policy=policy), plan, cc.policy.seed, WARM_UP_S)
    if p.error is not None and p.error[0] == "nnfuzz-error":
        print(f"producer warm-up (a throw-away model, seed {p.seed}): nnfuzz error: {p.error[1]}",
              file=sys.stderr, flush=True)
