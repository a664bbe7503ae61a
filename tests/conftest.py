"""Test-suite settings: hypothesis profiles for the property-based tests (tests/test_properties.py).

``ci`` (the default): a bounded number of examples per property, so the
whole suite stays within its CI budget. ``slow``: 10,000 examples per
property, selected with ``python -m pytest -q tests/test_properties.py
--hypothesis-profile=slow`` (or ``HYPOTHESIS_PROFILE=slow``). Neither has a
deadline (the machines are shared and timings noisy) nor writes an example
database into the working tree.

Every test closes the matplotlib figures it left open (:func:`close_figures`),
so that figures do not pile up across the suite.
"""
import os
import sys

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("slow", max_examples=10_000, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def close_figures():
    """Close every pyplot figure after each test (when a test has imported pyplot at all)."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")
