"""lm-eval glue for UNPIE's LM setting: the lmms-eval glue (hanyi/tasks/unpie/utils.py), adapted."""

from hanyi.lm_eval_tasks import _glue
from hanyi.tasks.unpie import both_splits
from hanyi.tasks.unpie import utils as lmms

# Every *_text_* task of a kind renders the same template with the same settings; read them from one lmms-eval YAML.
unpie_grounding_text_doc_to_text = _glue.doc_to_text("unpie", "unpie_grounding_text_homo", lmms.unpie_doc_to_text)
unpie_reconstruction_text_doc_to_text = _glue.doc_to_text(
    "unpie", "unpie_reconstruction_text_de_homo", lmms.unpie_doc_to_text
)
unpie_grounding_process_results = _glue.stripped(lmms.unpie_grounding_process_results)
unpie_reconstruction_process_results = _glue.stripped(lmms.unpie_reconstruction_process_results)

# The lmms-eval tasks' metric_lists, their aggregation functions imported: the same objects in both harnesses.
unpie_grounding_text_homo_metric_list = _glue.metric_list("unpie", "unpie_grounding_text_homo")
unpie_reconstruction_text_de_homo_metric_list = _glue.metric_list("unpie", "unpie_reconstruction_text_de_homo")

# The tasks that score both splits (their value is the paper's All): the same glue.
unpie_grounding_all_process_results = _glue.stripped(both_splits.unpie_grounding_all_process_results)
unpie_reconstruction_all_process_results = _glue.stripped(both_splits.unpie_reconstruction_all_process_results)
unpie_grounding_text_metric_list = _glue.metric_list("unpie", "unpie_grounding_text")
unpie_reconstruction_text_de_metric_list = _glue.metric_list("unpie", "unpie_reconstruction_text_de")
