"""The retrieval services every door calls (see DESIGN.md, "One core, many doors")."""

from retrieval.answer import Answer, answer, history
from retrieval.indexing import index_pending
from retrieval.search import RecallItem, RecallResult, recall, recall_evidence

__all__ = ["Answer", "RecallItem", "RecallResult", "answer", "history", "index_pending", "recall", "recall_evidence"]
