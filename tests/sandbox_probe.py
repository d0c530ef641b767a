"""What a student's cell tries when it snoops: to read given paths (the course's files, other students'
work) and to reach the network. Used by the messy classes under both graders (tests/test_grading.py)
and by the sandbox's own test (tests/test_sandbox.py)."""
from __future__ import annotations

import json

# A cell's code; PATHS (a list of paths) is set before it. It prints one line: SNOOP {path: what it got}.
SNOOP = """import json, os, socket
found = {}
for path in PATHS:
    try:
        found[path] = sorted(os.listdir(path)) if os.path.isdir(path) else len(open(path, "rb").read())
    except OSError as error:
        found[path] = type(error).__name__
try:
    socket.create_connection(("pypi.org", 443), timeout=3).close()
    found["network"] = "reachable"
except OSError as error:
    found["network"] = type(error).__name__
print("SNOOP " + json.dumps(found))"""


def snooped(text: str) -> dict:
    """What the snooping code printed, from the text of its output."""
    for line in text.splitlines():
        if line.startswith("SNOOP "):
            return json.loads(line[len("SNOOP "):])
    raise AssertionError("the snooping code printed nothing")


def reached(found: dict) -> dict:
    """What the snooping code could reach: a listing or a size (what it could not gives the name of the
    exception it met), or the network."""
    return {path: what for path, what in found.items() if not isinstance(what, str) or what == "reachable"}
