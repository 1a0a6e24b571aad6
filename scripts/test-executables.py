#!/usr/bin/env python3
"""Prints the test programs that `cargo test --no-run --message-format=json` (on stdin) built
for one package, named by its manifest (the argument, relative to the workspace root), one a
line, and fails when there is none: a build that selects more packages than it runs."""
import json
import os
import sys

manifest = os.path.abspath(sys.argv[1])
found = []
for line in sys.stdin:
    try:
        message = json.loads(line)
    except json.JSONDecodeError:
        continue
    if (message.get("reason") == "compiler-artifact"
            and message.get("executable")
            and message.get("profile", {}).get("test")
            and os.path.abspath(message.get("manifest_path", "")) == manifest):
        found.append(message["executable"])
if not found:
    sys.exit(f"no test program was built for {sys.argv[1]}")
print("\n".join(found))
