"""Fuzzing campaigns: run models against the systems under test.

``nnfuzz.fuzz.sandbox.Sandbox`` runs a backend's compile and run in a long-lived worker process
(``nnfuzz.fuzz.worker``), so a segfault, abort, hang or runaway memory in the system under test kills
only the worker; the sandbox reports it as a ``RunResult`` and starts a fresh worker for the next test.
"""
