from accounts.permissions import Access
from memoryweb.cli_memory import facts_output
from memoryweb.client import Fact
from memoryweb.management.memory import MemoryCommand
from memories.scopes import scope_get
from memories.services.facts import fact_as_dict, fact_history, fact_list


class Command(MemoryCommand):
    help = "List what a scope believes now (active facts), or with --history every fact with its validity interval."
    name = "facts"

    def local_output(self, options):
        scope = scope_get(self.principal(options), options["scope"], Access.READ)
        if options["history"]:
            facts = fact_history(scope=scope, entity_name_or_id=options["entity"], attribute=options["attribute"])
        else:
            facts = fact_list(scope=scope, entity=options["entity"], attribute=options["attribute"])
        return facts_output(scope.slug, [Fact.from_dict(fact_as_dict(f)) for f in facts], history=options["history"])
