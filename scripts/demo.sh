#!/usr/bin/env bash
# The main job: set up, scaffold LayerNormFP32 in a scratch workspace, build it on the emulator,
# test it, and print where the report is.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/scripts/setup.sh"
WS="${OPKIT_DEMO_WS:-$(mktemp -d /tmp/opkit-demo.XXXXXX)}"
mkdir -p "$WS"            # OPKIT_DEMO_WS may name a folder that does not exist yet
echo "== workspace: $WS"
cd "$WS"
opkit new LayerNormFP32
opkit build
opkit test
