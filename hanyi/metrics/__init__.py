"""Pure scoring functions shared by the tasks of these benchmarks. No lmms-eval imports here."""
