"""CTest's entry to the Python module's tests: pytest on the arguments given. Where pytest or torch is not
installed (`tools/bootstrap build` installs neither; `tools/bootstrap test` installs both, from
tests/python/requirements.txt) it says so and exits 77, which CTest reports as skipped, not failed."""
import importlib.util
import sys

missing = [m for m in ("pytest", "torch") if importlib.util.find_spec(m) is None]
if missing:
    print(f"skipped: {', '.join(missing)} not installed in {sys.executable} "
          "(tools/bootstrap test installs tests/python/requirements.txt)")
    sys.exit(77)

import pytest  # noqa: E402

sys.exit(pytest.main(sys.argv[1:]))
