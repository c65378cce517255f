"""The module under test is this build's (CTest sets PYTHONPATH to <build>/python and ATTNFORGE_CLI)."""
import os

import pytest


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("ATTNFORGE_CLI")
    if not path:
        pytest.fail("ATTNFORGE_CLI (the attnforge program of this build) is not set; run these tests through CTest")
    return path
