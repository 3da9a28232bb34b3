"""examples/report/tests/rp_check.py: what the report tests share: the
work directory, the check counter, the summary line and exit status."""
import json
import os
import subprocess
import sys


class Checks:
    def __init__(self, work):
        self.work = work
        self.failures = []
        self.count = 0
        os.makedirs(work, exist_ok=True)

    def path(self, name):
        return os.path.join(self.work, name)

    def replayed(self, make_trace, replay, name, n, *args):
        """make_trace's default program of n records through the replayer
        (its options args): the JSON report NAME.json, loaded."""
        subprocess.run([make_trace, self.path(name + ".trc"), str(n)], check=True)
        subprocess.run([replay, self.path(name + ".trc"), *args, "json=" + self.path(name + ".json"),
                        "report=" + self.path(name + ".txt")], check=True, capture_output=True)
        return json.load(open(self.path(name + ".json")))

    def __call__(self, ok, what):
        self.count += 1
        if not ok:
            self.failures.append(what)
            print("FAIL:", what)

    def done(self, note="", skipped=False):
        print(f"{self.count} checks, {len(self.failures)} failed{note}")
        sys.exit(1 if self.failures else 77 if skipped else 0)
