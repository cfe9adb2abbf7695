"""The toolchain floor: what every layer above may use and which uses nothing above it.

version.py (opkit's version), tools.py (CMake/Ninja discovery, running a build tool, job counts, compile
errors that show the user's lines first), files.py (write-if-changed), stamps.py (build stamps: built,
stale or not built), cache.py (the per-user cache folders), user_code.py (importing the user's Python:
an op's reference.py, a model factory). docs/architecture.md "Layers".
"""
