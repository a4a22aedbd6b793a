"""The retrieval services every door calls (see DESIGN.md, "One core, many doors")."""

from retrieval.answer import Answer, answer, history
from retrieval.erase import ErasureReceipt, subject_erase
from retrieval.forget import ForgetReceipt, episode_forget
from retrieval.indexing import fact_documents_refresh, index_pending
from retrieval.search import RecallItem, RecallResult, recall, recall_evidence

__all__ = [
    "Answer", "ErasureReceipt", "ForgetReceipt", "RecallItem", "RecallResult", "answer", "episode_forget",
    "fact_documents_refresh", "history", "index_pending", "recall", "recall_evidence", "subject_erase",
]
