"""CVLUE task constants: prompt variants, answer conventions, lite sizes. Categories: the data builder's category tables."""

#: The answer whose probability ranks ITR pairs (spec §6.1 option 3: P("是" | image, question)).
ITR_YES = "是"
#: Forces the loglikelihood direction of every ranking task (``nll`` or ``logprob``; default ``auto`` = -|value|).
LOGLIK_ENV = "HANYI_CVLUE_LOGLIK"
#: Docs kept by the ``*_lite`` tasks (first N in file order).
LITE_DOCS = 100
#: Ranks reported for visual dialog and retrieval.
RECALL_KS = (1, 5, 10)
