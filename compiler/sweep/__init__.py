"""Design-space sweeps (``ubc sweep``, ``make evaluate``): every point of a Cartesian product of
parameters compiled as one Dask task, cached on disk by a hash of its inputs (docs/sweep.md).

* :mod:`.point` -- ``evaluate_point(app, params, stages)``: one point, a table of stages;
* :mod:`.cache` -- the cache key (app source, arch file, params, stages, tool and code digest);
* :mod:`.engine` -- ``run_sweep``: cache look-up, Dask (LocalCluster, an existing scheduler, or
  in-process), progress bar;
* :mod:`.plot` -- resources and cycles against the swept parameter (thesis Fig. 7.5).
"""
