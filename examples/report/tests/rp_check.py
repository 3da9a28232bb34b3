"""examples/report/tests/rp_check.py: what the report tests share: the
work directory, the check counter, the summary line and exit status."""
import os
import sys


class Checks:
    def __init__(self, work):
        self.work = work
        self.failures = []
        self.count = 0
        os.makedirs(work, exist_ok=True)

    def path(self, name):
        return os.path.join(self.work, name)

    def __call__(self, ok, what):
        self.count += 1
        if not ok:
            self.failures.append(what)
            print("FAIL:", what)

    def done(self, note="", skipped=False):
        print(f"{self.count} checks, {len(self.failures)} failed{note}")
        sys.exit(1 if self.failures else 77 if skipped else 0)
