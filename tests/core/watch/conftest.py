"""What the watch's tests share: a clean slate of optimizers between test files."""

from __future__ import annotations

import gc

import pytest


@pytest.fixture(autouse=True, scope="module")
def collect_the_trainers_afterwards():
    """A trainer leaves its optimizers in reference cycles: collected after each file, so that a later test's capture,
    which follows the largest optimizer alive, never meets them."""
    yield
    gc.collect()
