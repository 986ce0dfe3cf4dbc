"""The report tests' fixtures (defined in report_stores.py)."""
from report_stores import hostile_store  # noqa: F401 - a fixture
