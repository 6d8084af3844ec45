"""Many-BSP model (source 000): instruction table -> BLOCK table -> level-2/level-1 supersteps ->
equations (4)-(25). See docs/manybsp.md for the construction rules and their agreement with 000."""

from engine.manybsp.block import BlockConstruction, build_block_table, fu_cell
from engine.manybsp.csvio import (
    export_block_table,
    export_instruction_table,
    export_supersteps,
    import_block_table,
    import_level1_specs,
)
from engine.manybsp.equations import Level1Input, Prediction, Quantity, evaluate
from engine.manybsp.from_ptx import build_instruction_table, manybsp_inputs, params_for, predict_manybsp
from engine.manybsp.prediction import ManyBspResult, Overrides, predict_from_block, run_manybsp
from engine.manybsp.reference import block_table_from_reference_tsv, instruction_table_from_reference_tsv
from engine.manybsp.rows import BlockRow, FuCell, InstructionRow, Level1Spec, ManyBspParams
from engine.manybsp.supersteps import (
    Level1Superstep,
    Level2Superstep,
    eq9_comp,
    level1_supersteps,
    level2_supersteps,
    split_by_sync,
)

__all__ = [
    "BlockConstruction", "BlockRow", "FuCell", "InstructionRow", "Level1Input", "Level1Spec",
    "Level1Superstep", "Level2Superstep", "ManyBspParams", "ManyBspResult", "Overrides", "Prediction",
    "Quantity", "block_table_from_reference_tsv", "build_block_table", "build_instruction_table",
    "eq9_comp", "evaluate", "export_block_table", "export_instruction_table", "export_supersteps",
    "fu_cell", "import_block_table", "import_level1_specs", "instruction_table_from_reference_tsv",
    "level1_supersteps", "level2_supersteps", "manybsp_inputs", "params_for", "predict_from_block", "predict_manybsp",
    "run_manybsp", "split_by_sync",
]
