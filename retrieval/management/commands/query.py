from accounts.permissions import Access
from memoryweb.cli_memory import answer_output
from memoryweb.client import Answer
from memoryweb.management.memory import MemoryCommand
from memories.scopes import scope_get
from retrieval.services import answer


class Command(MemoryCommand):
    help = "Answer QUESTION from a scope's memory, citing the evidence."
    name = "query"

    def local_output(self, options):
        scope = scope_get(self.principal(options), options["scope"], Access.READ)
        reply = answer(scope=scope, question=options["question"], speaker=options["speaker"], k=options["k"])
        return answer_output(Answer.from_dict(reply.as_dict()))
