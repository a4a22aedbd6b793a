"""The retrieval services every door calls (see DESIGN.md, "One core, many doors")."""

from memories.models import EntityMerge
from memories.services.dedup import dedup_nightly
from memories.services.merge import merge_fact_ids
from retrieval.answer import Answer, answer, history
from retrieval.erase import ErasureReceipt, subject_erase
from retrieval.forget import ForgetReceipt, episode_forget
from retrieval.indexing import fact_documents_refresh, index_pending
from retrieval.search import RecallItem, RecallResult, recall, recall_evidence

__all__ = [
    "Answer", "ErasureReceipt", "ForgetReceipt", "RecallItem", "RecallResult", "answer", "episode_forget",
    "dedup_nightly_indexed", "fact_documents_refresh", "history", "index_pending", "merge_documents_refresh", "recall",
    "recall_evidence", "subject_erase",
]


def merge_documents_refresh(merge: EntityMerge) -> int:
    """After an entity merge or its undo, by any door: the moved facts' search documents rewritten
    (a fact's document names its subject)."""
    return fact_documents_refresh(scope=merge.scope, fact_ids=merge_fact_ids(merge))


def dedup_nightly_indexed() -> dict:
    """The nightly deduplication of every scope (memories/services/dedup.py: dedup_nightly), then
    the search documents of the facts each merge moved."""
    result = dedup_nightly()
    for merge in EntityMerge.objects.filter(pk__in=[pk for _, pk in result.pop("merges")]).select_related("scope"):
        merge_documents_refresh(merge)
    return result
