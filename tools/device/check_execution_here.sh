export HOME=$(mktemp -d) NUMBA_CACHE_DIR=$(mktemp -d)
python3 -c "import numpy, numba, sys; print(sys.version, numpy.__version__, numba.__version__)"
python3 main.py predict samples/ptx/cellular_automaton.sm_90.ptx --launch samples/cellular_automaton.launch.toml --profile h100 --no-effects --explain 2>&1 | grep -v "^  [A-Z].*  [0-9]" | head -30
