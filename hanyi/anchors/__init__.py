"""Anchor tables: the papers' reported numbers, one YAML file per benchmark, each table cited to the paper.

Numbers are copied from the papers (facts) as transcribed in each benchmark's spec, typos included and flagged in a
``note``. Each file's ``map`` says which of our ``(task, metric)`` pairs measure the same thing as which table column;
see ``docs/reading-results.md`` ("Anchors") and :mod:`hanyi.results.anchors` for the format.
"""
