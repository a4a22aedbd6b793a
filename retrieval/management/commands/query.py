from accounts.permissions import Access
from memoryweb.management.base import MemorywebCommand
from memories.scopes import scope_get
from retrieval.render import items_text
from retrieval.services import answer


class Command(MemorywebCommand):
    help = "Answer QUESTION from a scope's memory, citing the evidence."

    def add_command_arguments(self, parser) -> None:
        parser.add_argument("question")
        parser.add_argument("--scope", required=True, help="scope slug")
        parser.add_argument("--k", type=int, default=10, help="how much evidence (default 10)")
        parser.add_argument("--speaker", default="", help="who asks: 'I' and 'my' mean this person")

    def handle(self, *args, **options):
        scope = scope_get(self.principal(options), options["scope"], Access.READ)
        reply = answer(scope=scope, question=options["question"], speaker=options["speaker"], k=options["k"])
        self.emit(options, reply.as_dict(), f"{reply.text}\n\nEvidence:\n{items_text(reply.evidence)}")
