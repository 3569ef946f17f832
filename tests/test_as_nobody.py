"""The attacks on heph's own hands, run again as the unprivileged user nobody (the suite runs as
root in CI): the sandbox takes other paths for a person who is not root (no cgroup of its own, the
per-user process limit, the host's /dev nodes), and what holds for root must hold for them."""

from __future__ import annotations

import shutil

from unprivileged import CHECKOUT, nobodys_folder, python_for_nobody, run_as_nobody

# The files whose attacks depend on who runs heph: the sandbox, heph's programs, its records,
# the person's servers and hooks in a clone.
ATTACKS = ("tests/test_own_hands.py", "tests/test_own_hands_clone.py")


def test_the_attacks_on_hephs_own_hands_fail_for_an_unprivileged_person_too():
    python = python_for_nobody()
    home = nobodys_folder()
    try:
        tests = [str(CHECKOUT / name) for name in ATTACKS]
        argv = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *tests]
        done = run_as_nobody([*argv, "--rootdir", str(CHECKOUT)], home)
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
        assert " passed" in done.stdout and " failed" not in done.stdout
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(python.parent.parent, ignore_errors=True)
