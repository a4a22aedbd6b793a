"""recall and recall_evidence: hybrid search over a scope's facts, episodes and turns, by stage.

1. The index catches up, bounded and without waiting (`retrieval.indexing.index_catch_up`: one
   cheap query when nothing is pending; a busy lock or a large backlog is left to the index task,
   and the rows it leaves are searched by their raw text and counted in `RecallResult.pending`).
2. `question`: the question read — its time window ("last 3 months"), history words ("did I
   ever"), who "I" is, the one speaker it names, the entities it names through their aliases.
   `eligibility`: which facts, episodes and turns it may return (status, window, `as_of`),
   written once as `Q` objects and compiled to SQL for BM25.
3. `candidates`: lists of at most `pool` items (2 % of the scope, clamped 50–500): BM25 per
   collection (facts, free-standing episodes, turns, turn windows ±1 and ±2), nearest vectors per
   collection, the facts of named entities, for "what changed" the facts that began in the
   window, and rows not indexed yet matched on their text.
4. `fusion`: reciprocal rank fusion over items (a window stands for its centre turn; in `recall`
   a turn stands for its episode), then the three lanes (similarity = fused score scaled to the
   best, importance, recency) with the scope's weights; every item says why it is there.
5. `hydration`: the rows behind the head of the fused list, the ineligible ones dropped.
`pipeline` runs them in order; `results` holds what comes back.
"""

from retrieval.search.pipeline import recall, recall_evidence
from retrieval.search.results import KINDS, RecallItem, RecallResult

__all__ = ["KINDS", "RecallItem", "RecallResult", "recall", "recall_evidence"]
