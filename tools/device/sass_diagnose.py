"""Which ptxas and nvdisasm a machine's Warpline finds, and whether they give the SASS map weights:
run on the lent machine (2026-11-27) where every weight came out 0 (nvdisasm 13.0's JSON listing
has no source lines). Prints the tools, their versions, the SASS warning and a summary of the
weights of one sample kernel."""

from __future__ import annotations

import collections
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine.evaluation import Evaluator, state_for  # noqa: E402
from engine.inputs import resolve_inputs  # noqa: E402
from engine.sass.tools import find_tools  # noqa: E402


def main() -> int:
    tools = find_tools()
    print("tools", tools)
    if not isinstance(tools, str):
        for exe in (tools.ptxas, tools.nvdisasm):
            print(subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1])
    inputs = resolve_inputs("samples/ptx/cellular_automaton.sm_90.ptx", kernel="invasion_step_global",
                            profile="h100", launch_file="samples/cellular_automaton.launch.toml", config="global16",
                            use_ptxas=False)
    result = Evaluator().evaluate(inputs, state_for(inputs))
    print("warnings", [w for w in result.warnings if "SASS" in w])
    weights = result.issue_weights
    print("weights", len(weights), sum(weights.values()),
          collections.Counter(round(v, 2) for v in weights.values()).most_common(8))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
