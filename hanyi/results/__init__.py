"""The results layer: runs and submissions read once into per-doc scores, with their provenance, clusters,
comparability with the papers' numbers, and the statistics over them. Every view is laid out from here and computes
nothing of its own: ``hanyi report`` (:mod:`hanyi.report`), the leaderboard (:mod:`hanyi.leaderboard`) and
``hanyi submit`` (:mod:`hanyi.submit`).

* :mod:`~hanyi.results.runs`: lmms-eval output folders (results files and sample logs) read into :class:`Run` objects;
  :mod:`~hanyi.results.samples`: the strict sample-log reader and each doc's content hash;
* :mod:`~hanyi.results.perdoc`: per-doc scores that reproduce a reported value, cluster labels, doc hashes; the plain
  per-task record (:func:`~hanyi.results.perdoc.task_layer`) the leaderboard ranks;
* :mod:`~hanyi.results.aggregations`, :mod:`~hanyi.results.decomposed`, :mod:`~hanyi.results.stats`,
  :mod:`~hanyi.results.measures`: intervals (clustered where a task sets ``cluster_key``), counts, paired tests;
* :mod:`~hanyi.results.provenance`, :mod:`~hanyi.results.anchors`, :mod:`~hanyi.results.comparability`: how a number was
  produced, the papers' tables, and whether two numbers compare;
* :mod:`~hanyi.results.layout`: which metrics are headline numbers and which are category cells.
"""
