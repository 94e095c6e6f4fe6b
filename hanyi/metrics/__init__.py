"""Pure scoring functions shared by hanyi tasks. No lmms-eval imports here."""
