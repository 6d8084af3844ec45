"""Batches: many kernels x launches x GPU profiles x models, one row each, in parallel.

* :mod:`spec`: what a batch covers (:class:`BatchSpec`) and the TOML spec file;
* :mod:`ptx_files`: files, folders and glob patterns -> PTX files;
* :mod:`plan`: the work units (one kernel of one file with all its launches and profiles);
* :mod:`keys`: the content hash that identifies a row;
* :mod:`work`: what a worker does with a unit (parse once, evaluate, rows);
* :mod:`result_rows`: the row's columns and the bottleneck columns;
* :mod:`result_cache`: the append-only result cache that makes a batch resumable;
* :mod:`executors`: this process or local worker processes; :mod:`dask_cluster`: a Dask cluster;
* :mod:`signals`: SIGTERM handled like Ctrl+C; :mod:`lock`: one batch per output at a time;
* :mod:`runner`: a plan through an executor and the cache, rows back in plan order;
* :mod:`output`: CSV and Parquet; :mod:`best_launches`: best launches and the plot's series;
* :mod:`progress`: the progress bar.

Every figure comes from :class:`engine.evaluation.Evaluator`, as everywhere else.
"""

from engine.batch.dask_cluster import DaskCluster
from engine.batch.executors import Failed, InProcess, LocalPool, StopBatch, default_workers
from engine.batch.plan import Plan, Unit, plan_batch
from engine.batch.result_cache import ResultCache
from engine.batch.result_rows import COLUMNS
from engine.batch.runner import BatchResult, run_batch
from engine.batch.spec import BatchSpec, read_spec_file

__all__ = ["COLUMNS", "BatchResult", "BatchSpec", "DaskCluster", "Failed", "InProcess", "LocalPool", "Plan",
           "ResultCache", "StopBatch", "Unit", "default_workers", "plan_batch", "read_spec_file", "run_batch"]
