from accounts.permissions import Access
from memoryweb.cli_memory import recall_output
from memoryweb.client import RecallResult
from memoryweb.management.memory import MemoryCommand
from memories.scopes import scope_get
from retrieval.services import recall


class Command(MemoryCommand):
    help = "Find the memories (facts and episodes) that best match QUERY in a scope."
    name = "recall"

    def local_output(self, options):
        scope = scope_get(self.principal(options), options["scope"], Access.READ)
        result = recall(
            scope=scope, query=options["query"], k=options["k"], as_of=options["as_of"], include_history=options["history"],
            speaker=options["speaker"],
        )
        return recall_output(RecallResult.from_dict(result.as_dict()))
