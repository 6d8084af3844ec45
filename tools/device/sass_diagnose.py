import sys, collections, subprocess
sys.path.insert(0, ".")
from engine.sass.tools import find_tools
t = find_tools(); print("tools", t)
for exe in (t.ptxas, t.nvdisasm):
    print(subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1])
from engine.inputs import resolve_inputs
from engine.evaluation import Evaluator, state_for
inputs = resolve_inputs("samples/ptx/cellular_automaton.sm_90.ptx", kernel="invasion_step_global", profile="h100",
                        launch_file="samples/cellular_automaton.launch.toml", config="global16", use_ptxas=False)
ev = Evaluator(); state = state_for(inputs)
r = ev.evaluate(inputs, state)
print("warnings", [w for w in r.warnings if "SASS" in w])
w = r.issue_weights
print("weights", len(w), sum(w.values()), collections.Counter(round(v, 2) for v in w.values()).most_common(8))
d = r.description
print("units", collections.Counter(str(i.unit) for i in d.instructions), "dyn", sum(d.dynamic_counts(0)))
print("pipeline", r.models["pipeline"].sm_cycles if hasattr(r, "models") and "pipeline" in r.models else None)
