"""Fuzzing campaigns: run models against the systems under test.

``nnfuzz.fuzz.sandbox.Sandbox`` runs a backend's compile and run in a long-lived worker process
(``nnfuzz.fuzz.worker``), so a segfault, abort, hang or runaway memory in the system under test kills
only the worker; the sandbox reports it as a ``RunResult`` and starts a fresh worker for the next test.

A campaign (campaign.py: the user's ``CampaignConfig`` and the start-up) decides a frozen plan
(plan.py), then runs its test loop (loop.py) on lanes (pool.py) whose sandboxes an executor makes
(executors.py: local, ray_executor.py, inprocess.py). Each test is produced (produce.py, producers.py, producer_proc.py),
run and judged by its oracle (nnfuzz/oracles/) through a run context (context.py), and a bug is confirmed
and saved (saving.py) into the bug sink (sink.py). No stage receives the whole campaign.
"""
